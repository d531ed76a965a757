package resolve

import (
	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

// buildFuncs resolves the spec's functions against the header's
// prototypes.
func (b *builder) buildFuncs() {
	a := b.p.API
	var specs []*spec.Function
	for id, sf := range b.s.Functions {
		declared := b.c.Func(sf.Name) != nil || b.fnMacro(sf.Name) != nil && !functionFormOnly(sf)
		if !b.gated(sf.Pos, "function "+sf.Name, sf.Gate, declared) {
			continue
		}
		cf := b.callable(sf)
		if cf == nil {
			continue
		}
		f := &model.Func{ID: id, Name: sf.Name, GoName: model.FuncName(b.funcNames.Name(sf.Name)), Man: sf.Man, Kind: sf.Kind, Returns: sf.Returns,
			Inline: sf.Inline, Macro: sf.Macro, QPTypes: sf.QPTypes, Takes: sf.Takes, Needs: sf.Requires, Group: sf.Group}
		b.checkPrototype(sf, cf, f)
		b.workRequest(sf, f)
		if b.declare(sf.Pos, f.GoName, "function "+sf.Name) {
			b.funcs[sf.Name] = f
			a.Funcs = append(a.Funcs, f)
			specs = append(specs, sf)
		}
	}
	for i, f := range a.Funcs {
		for _, o := range specs[i].Of {
			if g := b.funcs[o]; g != nil {
				f.Of = append(f.Of, g)
			}
		}
	}
}

// functionFormOnly: a descriptor with until and no macro key describes a
// name while the header declares it as a function. A later header that
// turns the name into a function-like macro (mlx5dv_create_flow from 63.0,
// whose macro calls _mlx5dv_create_flow, described on its own) has ended
// that form: the name is not declared there, rather than an error asking
// for macro:, so one name can be bound in both eras.
func functionFormOnly(sf *spec.Function) bool {
	return sf.Until != "" && sf.Macro == ""
}

// workRequest resolves the constants a builder or setter needs of the QP
// and the work request: send ops and flags.
func (b *builder) workRequest(sf *spec.Function, f *model.Func) {
	if sf.SendOp != "" {
		f.SendOp = b.constant(sf.Pos, sf.SendOp, "send_op of "+sf.Name)
	}
	if sf.MlxSendOp != "" {
		f.MlxOp = b.constant(sf.Pos, sf.MlxSendOp, "mlx5_send_op of "+sf.Name)
	}
	for _, w := range sf.WRFlags {
		if k := b.constant(sf.Pos, w, "wr_flags of "+sf.Name); k != nil {
			f.WRFlags = append(f.WRFlags, k)
		}
	}
}

// checkPrototype compares the spec's prototype with the header's, and
// makes the parameters.
func (b *builder) checkPrototype(sf *spec.Function, cf *cheader.Func, f *model.Func) {
	res := "void"
	if r := cf.Type.Result; r != nil && r.Kind != cheader.Void {
		res = r.Spelling()
	} else if r != nil && r.Kind == cheader.Void && r.Name != "" {
		res = r.Name
	}
	if res != "void" {
		f.CResult = normType(res)
		f.Result = cref(cf.Type.Result)
		if r := cf.Type.Result; r.Kind == cheader.Pointer && r.Elem != nil && r.Elem.Kind == cheader.Char && r.Elem.Const {
			f.Result.String = true
		}
		if it, ok := intType(cf.Type.Result); ok {
			f.ResInt = &it
		}
	}
	want := sf.Result
	if want == "" {
		want = "void"
	}
	if normType(want) != normType(res) {
		b.errorf(sf.Pos, "function %s: result %q, but %s has %q (rdma-core %s)", sf.Name, want, b.c.Header, res, orUnknown(b.c.Version))
	}
	if len(sf.Params) != len(cf.Type.Params) {
		b.errorf(sf.Pos, "function %s: %d parameters, but the header's prototype has %d", sf.Name, len(sf.Params), len(cf.Type.Params))
		return
	}
	for i, sp := range sf.Params {
		cp := cf.Type.Params[i]
		if cp.Name != "" && cp.Name != sp.Name {
			b.errorf(sp.Pos, "function %s: parameter %d is %s in the header, not %s", sf.Name, i+1, cp.Name, sp.Name)
		}
		if normType(sp.Type) != normType(cp.Type.Spelling()) {
			b.errorf(sp.Pos, "function %s: parameter %s has type %q in the header, not %q", sf.Name, sp.Name, cp.Type.Spelling(), sp.Type)
		}
		p := &model.Param{Name: sp.Name, GoName: model.ParamName(sp.Name), Kind: model.ParamOther,
			CType: normType(cp.Type.Spelling()), Bool: cp.Type.Kind == cheader.Bool, Ref: cref(cp.Type)}
		if cp.Type.Kind == cheader.Pointer && cp.Type.Elem != nil && cp.Type.Elem.Const {
			p.Const = true
		}
		if it, ok := intType(cp.Type); ok {
			p.Kind, p.Int = model.ParamInt, it
		} else if cp.Type.Kind == cheader.Pointer {
			p.Kind = model.ParamPointer
		}
		if sp.Enum != "" || sp.Flags != "" {
			p.Enum = b.enumByTag(sp.Pos, sp.Enum+sp.Flags, "parameter "+sp.Name+" of "+sf.Name)
			p.Typed = p.Enum != nil && p.Kind == model.ParamInt && p.Int.Bits == p.Enum.Underlying.Bits
		}
		f.Params = append(f.Params, p)
	}
}

// cref is what a parameter or result of type t refers to: the struct it
// points to (through any levels of pointer) or holds by value, by tag.
// Mirrors are linked to it once they are built (bindRefs).
func cref(t *cheader.Type) model.CRef {
	var r model.CRef
	for t != nil && t.Kind == cheader.Pointer {
		r.Depth++
		t = t.Elem
	}
	if t != nil && t.Kind == cheader.Struct && t.Record != nil && t.Record.Tag != "" {
		r.Handle = t.Record.Tag
	}
	if it, ok := intType(t); ok && r.Depth == 1 && t.Kind != cheader.Bool && t.Kind != cheader.Char {
		r.Int = &it
	}
	return r
}

// bindRefs links the structs the functions' parameters and results refer
// to with their mirrors; the others stay opaque handles.
func (b *builder) bindRefs() {
	link := func(r *model.CRef) {
		if m := b.mirrors[r.Handle]; m != nil && r.Handle != "" {
			r.Mirror, r.Handle = m, ""
		} else if r.Handle != "" {
			r.GoName = b.names.Name(r.Handle)
		}
	}
	for _, f := range b.p.API.Funcs {
		link(&f.Result)
		for _, p := range f.Params {
			link(&p.Ref)
		}
	}
}
