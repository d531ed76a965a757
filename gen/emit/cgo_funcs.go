package emit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// handle is an opaque handle type of the bindings.
type handle struct {
	tag, goName      string
	reason, doc, man string // a struct the spec describes as opaque: why, and what it is
}

// handles are the structs the functions take or return only by pointer
// and that have no mirror, and the structs the spec describes as opaque:
// each becomes an opaque handle type.
func handles(p *model.Package) []handle {
	seen := map[string]handle{}
	for _, fn := range p.API.Funcs {
		refs := []model.CRef{fn.Result}
		for _, prm := range fn.Params {
			refs = append(refs, prm.Ref)
		}
		for _, r := range refs {
			if r.Handle != "" && r.Depth > 0 {
				seen[r.Handle] = handle{tag: r.Handle, goName: r.GoName}
			}
		}
	}
	for _, o := range p.API.Opaque {
		seen[o.CName] = handle{tag: o.CName, goName: o.GoName, reason: o.Reason, doc: o.Doc, man: o.Man}
	}
	var tags []string
	for t := range seen {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	out := make([]handle, len(tags))
	for i, t := range tags {
		out[i] = seen[t]
	}
	return out
}

func handlesFile(p *model.Package, b Bindings, f *jen.File) {
	for _, h := range handles(p) {
		t, n := h.tag, h.goName
		doc := fmt.Sprintf("%s is an opaque handle to a C struct %s that libibverbs or libmlx5\nallocated. Its zero value is NULL.", n, t)
		if h.reason != "" {
			doc = opaqueDoc(h)
		}
		comment(f, doc)
		f.Type().Id(n).Struct(jen.Id("p").Add(unsafePointer))
		f.Line()
		comment(f, fmt.Sprintf("Ptr returns the C struct %s * the handle holds.", t))
		f.Func().Params(jen.Id("h").Id(n)).Id("Ptr").Params().Add(unsafePointer).Block(jen.Return(jen.Id("h").Dot("p")))
		f.Line()
		comment(f, fmt.Sprintf("%sFrom makes a handle of a C struct %s * (C memory, never Go memory).", n, t))
		f.Func().Id(n + "From").Params(jen.Id("p").Add(unsafePointer)).Id(n).Block(jen.Return(jen.Id(n).Values(jen.Id("p"))))
		f.Line()
	}
}

// opaqueDoc is the doc comment of the handle of a struct the spec
// describes as opaque: what it is and why Go has no mirror of it.
func opaqueDoc(h handle) string {
	s := fmt.Sprintf("%s is an opaque handle to a C struct %s (%s).", h.goName, h.tag, h.man)
	if h.doc != "" {
		s += " " + strings.TrimSuffix(h.doc, ".") + "."
	}
	s += " Its zero value is NULL. No Go mirror of the struct is generated: " + h.reason
	return wrap(s, 76)
}

// goRefType is the Go type of a pointer (depth levels) to what r refers to.
func goRefType(r model.CRef, depth int, pure string) jen.Code {
	stars := func(n int, c jen.Code) jen.Code {
		s := jen.Empty()
		for range n {
			s = s.Op("*")
		}
		return s.Add(c)
	}
	switch {
	case r.Mirror != nil:
		return stars(depth, jen.Qual(pure, r.Mirror.GoName))
	case r.Handle != "" && depth >= 1 && depth <= 2:
		return stars(depth-1, jen.Id(r.GoName))
	case r.Int != nil && depth == 1:
		return jen.Op("*").Add(intType(*r.Int))
	}
	return unsafePointer
}

// goParam is the Go type of a binding's parameter.
func goParam(prm *model.Param, pure string) jen.Code {
	switch {
	case prm.Bool:
		return jen.Bool()
	case prm.Kind == model.ParamInt && prm.Typed:
		return jen.Qual(pure, prm.Enum.GoName)
	case prm.Kind == model.ParamInt:
		return intType(prm.Int)
	}
	return goRefType(prm.Ref, prm.Ref.Depth, pure)
}

// cFixed is the fixed-width C type of an integer.
func cFixed(t model.IntType) string {
	s := fmt.Sprintf("int%d_t", t.Bits)
	if !t.Signed {
		s = "u" + s
	}
	return s
}

// cArg is what the binding passes to the shim for prm: a fixed-width
// integer or an unsafe.Pointer.
func cArg(prm *model.Param) jen.Code {
	v := jen.Id(prm.GoName)
	switch {
	case prm.Bool:
		return jen.Qual("C", "uint8_t").Call(jen.Id("cBool").Call(v))
	case prm.Kind == model.ParamInt:
		return jen.Qual("C", cFixed(prm.Int)).Call(v)
	case prm.Kind == model.ParamOther && prm.Ref.Mirror != nil:
		return unsafePointer.Clone().Call(jen.Op("&").Add(v))
	case prm.Ref.Mirror != nil, prm.Ref.Handle != "" && prm.Ref.Depth == 2, prm.Ref.Int != nil:
		return unsafePointer.Clone().Call(v)
	case prm.Ref.Handle != "" && prm.Ref.Depth == 1:
		return v.Dot("p")
	}
	return v
}

// validatorArg is what the pure package's validator takes for prm.
func validatorArg(prm *model.Param) jen.Code {
	switch {
	case prm.Bool:
		return jen.Id("cBool").Call(jen.Id(prm.GoName))
	case prm.Kind == model.ParamInt:
		return jen.Id(prm.GoName)
	case prm.Kind == model.ParamPointer:
		return cArg(prm)
	}
	return unsafePointer.Clone().Call(jen.Op("&").Id(prm.GoName))
}

// goResult is the Go type of a function's result, nil when it has none
// (void, deferred, errno: an error only).
func goResult(fn *model.Func, pure string) jen.Code {
	switch {
	case fn.CResult == "" || fn.Returns == "errno":
		return nil
	case fn.ResInt != nil:
		return intType(*fn.ResInt)
	case fn.Result.String:
		return jen.String()
	}
	return goRefType(fn.Result, fn.Result.Depth, pure)
}

// hasErr reports whether the C function reports errors itself.
func hasErr(fn *model.Func) bool {
	switch fn.Returns {
	case "pointer-errno", "errno", "negative-errno", "minus-one-errno":
		return true
	}
	return false
}

// validated reports whether the binding checks arguments before the call:
// a void function then returns the violation, and C is not called.
func validated(fn *model.Func) bool {
	if len(fn.Rules) > 0 {
		return true
	}
	for _, prm := range fn.Params {
		if checkedStruct(prm) {
			return true
		}
	}
	return false
}

// checkedStruct reports whether prm points to, or is, a struct with rules.
func checkedStruct(prm *model.Param) bool {
	m := prm.Ref.Mirror
	if m == nil || len(m.Rules) == 0 {
		return false
	}
	return prm.Kind == model.ParamPointer && prm.Ref.Depth == 1 || prm.Kind == model.ParamOther
}

func cgoFuncsFile(p *model.Package, b Bindings, f *jen.File) {
	f.CgoPreamble("#include \"shims.h\"")
	for _, fn := range p.API.Funcs {
		bindingFunc(fn, b, f)
		rawFunc(fn, b, f)
	}
}

// results is a binding's result list.
func results(fn *model.Func, pure string) []jen.Code {
	var rs []jen.Code
	if r := goResult(fn, pure); r != nil {
		rs = append(rs, r)
	}
	if hasErr(fn) {
		rs = append(rs, jen.Error())
	}
	return rs
}

// bindingFunc writes the exported function: validation, then the call.
func bindingFunc(fn *model.Func, b Bindings, f *jen.File) {
	var sig, args []jen.Code
	for _, prm := range fn.Params {
		sig = append(sig, jen.Id(prm.GoName).Add(goParam(prm, b.Pure)))
		args = append(args, jen.Id(prm.GoName))
	}
	rs := results(fn, b.Pure)
	check := validated(fn)
	if check && !hasErr(fn) {
		rs = append(rs, jen.Error())
	}
	fail := func(err jen.Code) jen.Code {
		var ret []jen.Code
		if goResult(fn, b.Pure) != nil {
			ret = append(ret, jen.Id("r"))
		}
		return jen.Return(append(ret, err)...)
	}
	var body []jen.Code
	if check && goResult(fn, b.Pure) != nil {
		body = append(body, jen.Var().Id("r").Add(goResult(fn, b.Pure)))
	}
	if len(fn.Rules) > 0 {
		var vargs []jen.Code
		for _, prm := range ruleParams(fn) {
			vargs = append(vargs, validatorArg(prm))
		}
		body = append(body, jen.If(jen.Err().Op(":=").Qual(b.Pure, fn.Validator()).Call(vargs...), jen.Err().Op("!=").Nil()).Block(fail(jen.Err())))
	}
	for _, prm := range fn.Params {
		validate := jen.If(jen.Err().Op(":=").Id(prm.GoName).Dot("Validate").Call(), jen.Err().Op("!=").Nil()).Block(fail(jen.Err()))
		switch {
		case !checkedStruct(prm):
		case prm.Kind == model.ParamOther:
			body = append(body, validate)
		default:
			body = append(body, jen.If(jen.Id(prm.GoName).Op("!=").Nil()).Block(validate))
		}
	}
	switch {
	case len(rs) == 0:
		body = append(body, jen.Id(rawName(fn)).Call(args...))
	case check && !hasErr(fn):
		body = append(body, jen.Id(rawName(fn)).Call(args...), jen.Return(jen.Nil()))
	default:
		body = append(body, jen.Return(jen.Id(rawName(fn)).Call(args...)))
	}
	doc := fmt.Sprintf("%s calls %s (%s).", fn.BindingName(), fn.Name, fn.Man)
	if len(fn.Rules) > 0 {
		doc += fmt.Sprintf("\nIt first checks the arguments with %s.%s.", b.Pure[lastSlash(b.Pure)+1:], fn.Validator())
	}
	for _, prm := range fn.Params {
		if checkedStruct(prm) {
			doc += fmt.Sprintf("\nIt checks *%s with Validate when it is not nil.", prm.GoName)
		}
	}
	if check && !hasErr(fn) {
		doc += "\nThe error is a violation of a rule, found before C is called; libibverbs\nreports its own errors of a work request at ibv_wr_complete."
	}
	comment(f, doc)
	f.Func().Id(fn.BindingName()).Params(sig...).Params(rs...).Block(body...)
	f.Line()
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// ruleParams are the parameters the function's validator takes.
func ruleParams(fn *model.Func) []*model.Param {
	var ps []*model.Param
	for _, prm := range fn.Params {
		for _, r := range fn.Rules {
			if r.Arg != nil && r.Arg.Param == prm {
				ps = append(ps, prm)
				break
			}
		}
	}
	return ps
}

func rawName(fn *model.Func) string { return "call" + fn.BindingName() }

// rawFunc writes the call of the shim and the return convention, without
// validation (what the test double exercises byte for byte).
func rawFunc(fn *model.Func, b Bindings, f *jen.File) {
	var sig, args []jen.Code
	for _, prm := range fn.Params {
		sig = append(sig, jen.Id(prm.GoName).Add(goParam(prm, b.Pure)))
		args = append(args, cArg(prm))
	}
	call := jen.Qual("C", shimName(fn)).Call(args...)
	rt := goResult(fn, b.Pure)
	conv := func(v jen.Code) jen.Code { // the C result as the Go result
		switch {
		case fn.ResInt != nil:
			return jen.Id(fn.ResInt.String()).Call(v)
		case fn.Result.Handle != "" && fn.Result.Depth == 1:
			return jen.Id(fn.Result.GoName).Values(v)
		case fn.Result.Mirror != nil, fn.Result.Handle != "" && fn.Result.Depth == 2, fn.Result.Int != nil:
			return jen.Parens(rt).Call(v)
		case fn.Result.String:
			return jen.Id("goString").Call(v)
		}
		return v
	}
	errOf := func(e jen.Code) jen.Code {
		return jen.Id("newError").Call(jen.Lit(fn.Name), e)
	}
	var body []jen.Code
	switch fn.Returns {
	case "pointer-errno":
		body = append(body, jen.List(jen.Id("c"), jen.Id("err")).Op(":=").Add(call),
			jen.If(jen.Id("c").Op("==").Nil()).Block(jen.Return(conv(jen.Id("c")), errOf(jen.Id("errnoOf").Call(jen.Id("err"))))),
			jen.Return(conv(jen.Id("c")), jen.Nil()))
	case "minus-one-errno":
		body = append(body, jen.List(jen.Id("c"), jen.Id("err")).Op(":=").Add(call),
			jen.If(jen.Id("c").Op("==").Lit(-1)).Block(jen.Return(conv(jen.Id("c")), errOf(jen.Id("errnoOf").Call(jen.Id("err"))))),
			jen.Return(conv(jen.Id("c")), jen.Nil()))
	case "errno":
		body = append(body, jen.If(jen.Id("c").Op(":=").Add(call), jen.Id("c").Op("!=").Lit(0)).Block(
			jen.Return(errOf(jen.Qual("syscall", "Errno").Call(jen.Id("c"))))),
			jen.Return(jen.Nil()))
	case "negative-errno":
		body = append(body, jen.Id("c").Op(":=").Add(call),
			jen.If(jen.Id("c").Op("<").Lit(0)).Block(jen.Return(conv(jen.Id("c")), errOf(jen.Qual("syscall", "Errno").Call(jen.Op("-").Id("c"))))),
			jen.Return(conv(jen.Id("c")), jen.Nil()))
	default:
		if rt == nil {
			body = append(body, call)
		} else {
			body = append(body, jen.Return(conv(call)))
		}
	}
	f.Func().Id(rawName(fn)).Params(sig...).Params(results(fn, b.Pure)...).Block(body...)
	f.Line()
}
