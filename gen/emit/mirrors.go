package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/model"
)

// lp64 restricts the mirrors to the 64-bit targets whose C layout they
// reproduce (pointers and longs of 8 bytes, as on x86-64).
const lp64 = "amd64 || arm64 || riscv64 || ppc64le || ppc64 || s390x || loong64 || mips64 || mips64le"

var unsafePointer = jen.Qual("unsafe", "Pointer")

// mirrorsFile writes a Go struct with the exact C layout for every struct
// of spec/api, with compile-time checks of its size and offsets.
func mirrorsFile(p *model.Package, f *jen.File) {
	f.HeaderComment("//go:build " + lp64)
	for _, m := range p.API.Mirrors {
		mirrorType(f, m)
	}
}

func mirrorGoType(mf *model.MirrorField) jen.Code {
	switch mf.Kind {
	case model.MInt:
		if mf.Enum != nil {
			return jen.Id(mf.Enum.GoName)
		}
		return intType(mf.Int)
	case model.MBool:
		return jen.Bool()
	case model.MArray:
		return jen.Index(jen.Lit(int(mf.Len))).Add(intType(mf.Int))
	case model.MPointer:
		return jen.Op("*").Id(mf.Target.GoName)
	case model.MRawPtr, model.MPtrUnion:
		return unsafePointer
	case model.MNested:
		return jen.Id(mf.Target.GoName)
	}
	return jen.Index(jen.Lit(int(mf.Size))).Byte()
}

// goAlign is the alignment Go gives a mirrored field.
func goAlign(mf *model.MirrorField) int64 {
	switch mf.Kind {
	case model.MInt, model.MArray:
		return int64(mf.Int.Bits / 8)
	case model.MPointer, model.MRawPtr, model.MPtrUnion:
		return 8
	case model.MNested:
		return mf.Target.C.Align
	}
	return 1
}

func mirrorType(f *jen.File, m *model.Mirror) {
	doc := fmt.Sprintf("%s mirrors struct %s (%s): %d bytes, aligned to %d, laid out as C lays it out.",
		m.GoName, m.CName, m.C.Pos.File, m.C.Size, m.C.Align)
	if m.Spec.Man != "" {
		doc += " See " + m.Spec.Man + "."
	}
	if d := strings.TrimSpace(m.Spec.Doc); d != "" {
		doc += "\n" + d
	}
	comment(f, doc)
	var fields []jen.Code
	natural := int64(1)
	for _, mf := range m.Fields {
		natural = max(natural, goAlign(mf))
	}
	if natural < m.C.Align {
		// Nothing in the Go struct needs C's alignment (a union kept as
		// bytes): a zero-size field of that alignment supplies it.
		fields = append(fields, jen.Id("_").Index(jen.Lit(0)).Id(fmt.Sprintf("uint%d", m.C.Align*8)))
	}
	off := int64(0)
	for _, mf := range m.Fields {
		if mf.Offset > off {
			fields = append(fields, jen.Id("_").Index(jen.Lit(int(mf.Offset-off))).Byte())
		}
		name := mf.GoName
		c := jen.Id(name).Add(mirrorGoType(mf))
		if mf.CName == "" {
			c = c.Comment("anonymous union of " + memberNames(mf))
		} else if len(mf.Members) > 0 {
			c = c.Comment("union " + mf.CName + " of " + memberNames(mf))
		} else {
			c = c.Comment(mf.CName)
		}
		fields = append(fields, c)
		off = mf.Offset + mf.Size
	}
	if m.C.Size > off {
		fields = append(fields, jen.Id("_").Index(jen.Lit(int(m.C.Size-off))).Byte())
	}
	f.Type().Id(m.GoName).Struct(fields...)
	f.Line()

	// The stringer trick, both ways: the build fails unless every size and
	// offset equals what the header model says.
	sz := jen.Qual("unsafe", "Sizeof").Call(jen.Id(m.GoName).Values())
	checks := []jen.Code{
		jen.Var().Id("x").Index(jen.Lit(1)).Struct(),
		jen.Id("_").Op("=").Id("x").Index(jen.Add(sz).Op("-").Lit(int(m.C.Size))),
		jen.Id("_").Op("=").Id("x").Index(jen.Lit(int(m.C.Size)).Op("-").Add(sz)),
	}
	for _, mf := range m.Fields {
		of := jen.Qual("unsafe", "Offsetof").Call(jen.Id(m.GoName).Values().Dot(mf.GoName))
		checks = append(checks,
			jen.Id("_").Op("=").Id("x").Index(jen.Add(of).Op("-").Lit(int(mf.Offset))),
			jen.Id("_").Op("=").Id("x").Index(jen.Lit(int(mf.Offset)).Op("-").Add(of)))
	}
	f.Func().Id("_").Params().Block(checks...)
	f.Line()

	for _, mf := range m.Fields {
		for _, u := range mf.Members {
			unionAccessors(f, m, mf, u)
		}
	}
}

func memberNames(mf *model.MirrorField) string {
	var n []string
	for _, u := range mf.Members {
		n = append(n, u.CName)
	}
	return strings.Join(n, ", ")
}

// unionAccessors gives each member of a mirrored union a typed getter and
// setter.
func unionAccessors(f *jen.File, m *model.Mirror, mf *model.MirrorField, u *model.UnionMember) {
	recv := jen.Id("s").Op("*").Id(m.GoName)
	field := jen.Id("s").Dot(mf.GoName)
	switch mf.Kind {
	case model.MPtrUnion:
		var t jen.Code = unsafePointer
		if u.Kind == model.MPointer {
			t = jen.Op("*").Id(u.Target.GoName)
		}
		f.Commentf("%s returns the union member %s.", u.GoName, u.CName)
		f.Func().Params(recv).Id(u.GoName).Params().Add(t).Block(jen.Return(jen.Parens(t).Call(field)))
		f.Line()
		f.Commentf("Set%s sets the union member %s.", u.GoName, u.CName)
		f.Func().Params(recv).Id("Set" + u.GoName).Params(jen.Id("p").Add(t)).Block(
			jen.Add(field).Op("=").Add(unsafePointer).Call(jen.Id("p")))
		f.Line()
	default:
		at := jen.Add(unsafePointer).Call(jen.Op("&").Add(field).Index(jen.Lit(int(u.Offset))))
		switch u.Kind {
		case model.MInt:
			t := intType(u.Int)
			f.Commentf("%s returns the union member %s.", u.GoName, u.CName)
			f.Func().Params(recv).Id(u.GoName).Params().Add(t).Block(jen.Return(jen.Op("*").Parens(jen.Op("*").Add(t)).Call(at)))
			f.Line()
			f.Commentf("Set%s sets the union member %s.", u.GoName, u.CName)
			f.Func().Params(recv).Id("Set" + u.GoName).Params(jen.Id("v").Add(t)).Block(
				jen.Op("*").Parens(jen.Op("*").Add(t)).Call(at).Op("=").Id("v"))
			f.Line()
		case model.MNested:
			t := jen.Op("*").Id(u.Target.GoName)
			f.Commentf("%s returns a pointer to the union member %s.", u.GoName, u.CName)
			f.Func().Params(recv).Id(u.GoName).Params().Add(t).Block(jen.Return(jen.Parens(t).Call(at)))
			f.Line()
		}
	}
}

// validateFile writes ValidateInto and Validate methods per mirror, and
// ValidateArgs...Into and ValidateArgs... per function whose parameters
// have rules. The Into forms fill a caller's RuleError and do not
// allocate; the others return a new one.
func validateFile(p *model.Package, f *jen.File) {
	f.HeaderComment("//go:build " + lp64)
	enums := map[*model.Enum]bool{}
	for _, m := range p.API.Mirrors {
		doc := fmt.Sprintf("ValidateInto checks the rules on struct %s", m.CName)
		if len(m.Rules) > 0 {
			var ids []string
			for _, r := range m.Rules {
				ids = append(ids, r.ID)
			}
			doc += " (" + strings.Join(ids, ", ") + ")"
		}
		doc += ", then the structs it points to that are in use. It reports whether\nthey hold, and fills e with the first violation when they do not."
		comment(f, doc)
		var body []jen.Code
		for _, r := range m.Rules {
			body = append(body, ruleCheck(r, enums))
		}
		for _, mf := range m.Fields {
			body = append(body, nestedValidation(mf)...)
		}
		body = append(body, jen.Return(jen.True()))
		f.Func().Params(jen.Id("s").Op("*").Id(m.GoName)).Id("ValidateInto").Params(jen.Id("e").Op("*").Id("RuleError")).Bool().Block(body...)
		f.Line()
		comment(f, fmt.Sprintf("Validate checks the rules on struct %s and the structs it points to that\nare in use, and returns the first violation as a *RuleError.", m.CName))
		f.Func().Params(jen.Id("s").Op("*").Id(m.GoName)).Id("Validate").Params().Error().Block(
			jen.Var().Id("e").Id("RuleError"),
			jen.If(jen.Id("s").Dot("ValidateInto").Call(jen.Op("&").Id("e"))).Block(jen.Return(jen.Nil())),
			jen.Return(jen.Id("cloneRuleError").Call(jen.Op("&").Id("e"))),
		)
		f.Line()
	}
	for _, fn := range p.API.Funcs {
		if len(fn.Rules) == 0 {
			continue
		}
		// The parameters the rules look at, in prototype order.
		var params []*model.Param
		for _, prm := range fn.Params {
			for _, r := range fn.Rules {
				if r.Arg.Param == prm {
					params = append(params, prm)
					break
				}
			}
		}
		var sig, args []jen.Code
		var names []string
		for _, prm := range params {
			sig = append(sig, jen.Id(prm.GoName).Add(paramType(prm)))
			args = append(args, jen.Id(prm.GoName))
			names = append(names, prm.Name)
		}
		var body []jen.Code
		for _, r := range fn.Rules {
			body = append(body, ruleCheck(r, enums))
		}
		body = append(body, jen.Return(jen.True()))
		name := "ValidateArgs" + strings.TrimPrefix(fn.GoName, "Fn")
		comment(f, fmt.Sprintf("%sInto checks the rules on the arguments %s of %s. It\nreports whether they hold, and fills e with the first violation when they do not.",
			name, strings.Join(names, ", "), fn.Name))
		f.Func().Id(name + "Into").Params(append([]jen.Code{jen.Id("e").Op("*").Id("RuleError")}, sig...)...).Bool().Block(body...)
		f.Line()
		comment(f, fmt.Sprintf("%s checks the rules on the arguments %s of %s, and\nreturns the first violation as a *RuleError.", name, strings.Join(names, ", "), fn.Name))
		f.Func().Id(name).Params(sig...).Error().Block(
			jen.Var().Id("e").Id("RuleError"),
			jen.If(jen.Id(name+"Into").Call(append([]jen.Code{jen.Op("&").Id("e")}, args...)...)).Block(jen.Return(jen.Nil())),
			jen.Return(jen.Id("cloneRuleError").Call(jen.Op("&").Id("e"))),
		)
		f.Line()
	}
	// The names of the values the rules report, by enum.
	var used []*model.Enum
	for _, e := range p.Enums {
		if enums[e] {
			used = append(used, e)
		}
	}
	for _, e := range used {
		f.Func().Id(namesFunc(e)).Params(jen.Id("v").Uint64()).String().Block(
			jen.Return(jen.Id(e.GoName).Call(jen.Id("v")).Dot("String").Call()))
		f.Line()
	}
}

func namesFunc(e *model.Enum) string { return "names" + e.GoName }

func paramType(p *model.Param) jen.Code {
	if p.Enum != nil {
		if x, ok := intTypeOf(p); ok && x.Bits == p.Enum.Underlying.Bits {
			return jen.Id(p.Enum.GoName)
		}
	}
	if x, ok := intTypeOf(p); ok {
		return intType(x)
	}
	return unsafePointer
}

func intTypeOf(p *model.Param) (model.IntType, bool) {
	t := p.C
	if t.Kind.IsInteger() || t.Kind == cheader.Enumeration {
		size := t.Size
		return model.IntType{Bits: int(size) * 8, Signed: t.Kind.IsSigned()}, true
	}
	return model.IntType{}, false
}

// nestedValidation validates what a field points to or contains.
func nestedValidation(mf *model.MirrorField) []jen.Code {
	var out []jen.Code
	switch mf.Kind {
	case model.MPointer:
		v := jen.Id("s").Dot(mf.GoName)
		out = append(out, guarded(mf.When, jen.If(jen.Add(v).Op("!=").Nil().Op("&&").Op("!").Add(v).Dot("ValidateInto").Call(jen.Id("e"))).Block(
			jen.Return(jen.False()))))
	case model.MNested:
		out = append(out, guarded(mf.When,
			jen.If(jen.Op("!").Id("s").Dot(mf.GoName).Dot("ValidateInto").Call(jen.Id("e"))).Block(jen.Return(jen.False()))))
	}
	for _, u := range mf.Members {
		switch u.Kind {
		case model.MPointer:
			v := jen.Id("s").Dot(u.GoName).Call()
			out = append(out, guarded(u.When, jen.If(jen.Id("p").Op(":=").Add(v), jen.Id("p").Op("!=").Nil().Op("&&").Op("!").Id("p").Dot("ValidateInto").Call(jen.Id("e"))).Block(
				jen.Return(jen.False()))))
		case model.MNested:
			out = append(out, guarded(u.When,
				jen.If(jen.Op("!").Id("s").Dot(u.GoName).Call().Dot("ValidateInto").Call(jen.Id("e"))).Block(jen.Return(jen.False()))))
		}
	}
	return out
}

func guarded(c *model.Cond, stmt jen.Code) jen.Code {
	if c == nil {
		return stmt
	}
	return jen.If(condExpr(c)).Block(stmt)
}

func condExpr(c *model.Cond) jen.Code {
	v := jen.Id("s").Dot(c.Field.GoName)
	switch {
	case c.NotNull:
		return jen.Add(v).Op("!=").Nil()
	case c.Bits != 0 && c.Clear != 0:
		return jen.Uint64().Call(v).Op("&").Add(hex(c.Bits | c.Clear)).Op("==").Add(hex(c.Bits))
	case c.Bits != 0:
		return jen.Uint64().Call(v).Op("&").Add(hex(c.Bits)).Op("==").Add(hex(c.Bits))
	case c.Clear != 0:
		return jen.Uint64().Call(v).Op("&").Add(hex(c.Clear)).Op("==").Lit(0)
	}
	var e *jen.Statement
	for i, x := range c.OneOf {
		t := jen.Uint64().Call(v).Op("==").Add(hex(x))
		if i == 0 {
			e = t
		} else {
			e = e.Op("||").Add(t)
		}
	}
	return e
}

// ruleCheck renders "if <violation> { e.set(...); return false }" for an
// argument rule, recording in enums the enums whose names the error uses.
func ruleCheck(r *model.Rule, enums map[*model.Enum]bool) jen.Code {
	a := r.Arg
	var v *jen.Statement
	st, field := "", r.Spec.Check.Field
	switch {
	case a.Param != nil:
		v, field = jen.Id(a.Param.GoName), a.Param.Name
	case a.Member != nil:
		v = jen.Id("s").Dot(a.Member.GoName).Call()
	case a.Via != nil:
		v = jen.Id("s").Dot(a.Via.GoName).Dot(a.Field.GoName)
	case a.Field != nil:
		v = jen.Id("s").Dot(a.Field.GoName)
	}
	if a.Mirror != nil {
		st = a.Mirror.CName
	}
	u := func() *jen.Statement { return jen.Uint64().Call(v.Clone()) }
	var bad jen.Code
	test, value, limit := "TestNone", jen.Code(jen.Lit(0)), jen.Code(jen.Lit(0))
	names := namedBy(a)
	switch {
	case len(a.NotAllNull) > 0:
		var e *jen.Statement
		var fs []string
		for i, nf := range a.NotAllNull {
			t := jen.Id("s").Dot(nf.GoName).Op("==").Nil()
			fs = append(fs, nf.CName)
			if i == 0 {
				e = t
			} else {
				e = e.Op("&&").Add(t)
			}
		}
		bad, test, field = e, "TestNotNull", strings.Join(fs, " and ")
	case a.NotNull:
		bad, test = jen.Add(v).Op("==").Nil(), "TestNotNull"
	case len(a.OneOf) > 0:
		var e *jen.Statement
		for i, x := range a.OneOf {
			t := u().Op("!=").Add(hex(x))
			if i == 0 {
				e = t
			} else {
				e = e.Op("&&").Add(t)
			}
		}
		bad, test, value = e, "TestOneOf", u()
	case a.Enum != nil:
		var e *jen.Statement
		seen := map[uint64]bool{}
		typed := a.Field != nil && a.Member == nil && a.Field.Enum == a.Enum || a.Param != nil && a.Param.Enum == a.Enum
		for _, k := range a.Enum.Members {
			if seen[k.Value.Bits] {
				continue
			}
			seen[k.Value.Bits] = true
			t := u().Op("!=").Add(hex(k.Value.Bits))
			if typed {
				t = v.Clone().Op("!=").Id(k.Name)
			}
			if e == nil {
				e = t
			} else {
				e = e.Op("&&").Line().Add(t)
			}
		}
		bad, test, value, names = e, "TestOneOf", u(), a.Enum
	case a.MaskIsSet:
		bad, test, value, limit = u().Op("&^").Add(hex(a.Mask)).Op("!=").Lit(0), "TestBits", u(), hex(a.Mask)
	case a.Has != 0:
		bad, test, value, limit = u().Op("&").Add(hex(a.Has)).Op("!=").Add(hex(a.Has)), "TestNeedBits", u(), hex(a.Has)
	case a.Zero:
		bad, test, value = jen.Add(v).Op("!=").Lit(0), "TestZero", u()
	case a.NotNeg:
		bad, test, value = jen.Add(v).Op("<").Lit(0), "TestNotNegative", u()
	case a.Max != nil:
		bad, test, value, limit = u().Op(">").Add(hex(*a.Max)), "TestMax", u(), hex(*a.Max)
	case a.MultipleOf != 0:
		bad, test, value, limit = u().Op("%").Add(hex(a.MultipleOf)).Op("!=").Lit(0), "TestMultipleOf", u(), hex(a.MultipleOf)
	}
	namesCode := jen.Code(jen.Nil())
	if names != nil {
		enums[names] = true
		namesCode = jen.Id(namesFunc(names))
	}
	stmt := jen.If(bad).Block(
		jen.Id("setRuleError").Call(jen.Id("e"), jen.Id(r.GoName), jen.Lit(st), jen.Lit(field), jen.Id(test), value, limit, namesCode),
		jen.Return(jen.False()),
	)
	if a.When != nil {
		stmt = jen.If(condExpr(a.When)).Block(stmt)
	}
	return jen.Comment("rule " + r.ID + ": " + oneLine(ruleApplies(r))).Line().Add(stmt)
}

// namedBy returns the enum that names the checked value's members or bits.
func namedBy(a *model.ArgCheck) *model.Enum {
	switch {
	case a.FlagsEnum != nil:
		return a.FlagsEnum
	case a.Param != nil:
		return a.Param.Enum
	case a.Field != nil && a.Member == nil && a.Field.Kind == model.MInt && a.Field.Names != nil:
		return a.Field.Names
	case a.Field != nil && a.Member == nil && a.Field.Kind == model.MInt:
		return a.Field.Enum
	}
	return nil
}

// ruleApplies is the rule as its check applies it.
func ruleApplies(r *model.Rule) string {
	if r.Spec.Applies != "" {
		return r.Spec.Applies
	}
	return r.Spec.Says
}

// registryFile writes lookups by C name, for tools and tests (the send
// path uses the types and validators directly).
func registryFile(p *model.Package, f *jen.File) {
	f.HeaderComment("//go:build " + lp64)
	comment(f, "NewMirror returns a pointer to a zero mirror of the C struct named cname, and\nfalse if the spec describes no such struct.")
	f.Func().Id("NewMirror").Params(jen.Id("cname").String()).Params(jen.Any(), jen.Bool()).BlockFunc(func(g *jen.Group) {
		var cases []jen.Code
		for _, m := range p.API.Mirrors {
			cases = append(cases, jen.Case(jen.Lit(m.CName)).Block(jen.Return(jen.New(jen.Id(m.GoName)), jen.True())))
		}
		if len(cases) > 0 {
			g.Switch(jen.Id("cname")).Block(cases...)
		}
		g.Return(jen.Nil(), jen.False())
	})
	f.Line()
	comment(f, "ArgValidators holds, for each function with rules on its arguments, its\nValidateArgs function taking the arguments by their C names: integers as\nuint64, pointers as unsafe.Pointer; a missing argument is 0 or nil.")
	f.Var().Id("ArgValidators").Op("=").Map(jen.Id("Func")).Func().Params(jen.Map(jen.String()).Any()).Error().ValuesFunc(func(g *jen.Group) {
		for _, fn := range p.API.Funcs {
			if len(fn.Rules) == 0 {
				continue
			}
			var args []jen.Code
			for _, prm := range fn.Params {
				used := false
				for _, r := range fn.Rules {
					used = used || r.Arg.Param == prm
				}
				if !used {
					continue
				}
				if _, ok := intTypeOf(prm); ok && prm.C.Kind != cheader.Pointer {
					args = append(args, jen.Add(paramType(prm)).Call(jen.Id("argUint").Call(jen.Id("a"), jen.Lit(prm.Name))))
				} else {
					args = append(args, jen.Id("argPtr").Call(jen.Id("a"), jen.Lit(prm.Name)))
				}
			}
			g.Line().Id(fn.GoName).Op(":").Func().Params(jen.Id("a").Map(jen.String()).Any()).Error().Block(
				jen.Return(jen.Id("ValidateArgs" + strings.TrimPrefix(fn.GoName, "Fn")).Call(args...)))
		}
		g.Line()
	})
	f.Line()
	f.Func().Id("argUint").Params(jen.Id("a").Map(jen.String()).Any(), jen.Id("k").String()).Uint64().Block(
		jen.List(jen.Id("v"), jen.Id("_")).Op(":=").Id("a").Index(jen.Id("k")).Assert(jen.Uint64()),
		jen.Return(jen.Id("v")))
	f.Line()
	f.Func().Id("argPtr").Params(jen.Id("a").Map(jen.String()).Any(), jen.Id("k").String()).Add(unsafePointer).Block(
		jen.List(jen.Id("v"), jen.Id("_")).Op(":=").Id("a").Index(jen.Id("k")).Assert(unsafePointer),
		jen.Return(jen.Id("v")))
}
