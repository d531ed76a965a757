package resolve

import (
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/diag"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

// enums decides which C enums become named Go types.
func (b *builder) enums() {
	described := b.describedEnums()
	used := b.usedEnums()
	var list []*cheader.Enum
	for _, e := range b.c.Enums {
		if described[e] != nil || (e.Tag != "" && (inConstFile(e.Pos.File) || used[e])) {
			list = append(list, e)
		}
	}
	sortByHeader(list, func(e *cheader.Enum) diag.Pos { return hpos(e.Pos) })
	for _, ce := range list {
		b.enum(ce, described[ce])
	}
}

// enum makes the named type of ce, described by se (nil for none).
func (b *builder) enum(ce *cheader.Enum, se *spec.Enum) {
	it, _ := intType(&cheader.Type{Kind: cheader.Enumeration, Enum: ce, Size: ce.Underlying.Size})
	e := &model.Enum{CName: ce.CName(), Underlying: it, Src: model.Source{Header: hpos(ce.Pos)}}
	if ce.Tag == "" && ce.Typedef == "" && len(ce.Enumerators) > 0 {
		e.CName = "the anonymous enum that starts with " + ce.Enumerators[0].Name
	}
	name := ce.Tag
	if name == "" {
		name = ce.Typedef
	}
	e.GoName = b.names.Name(name)
	if se != nil {
		e.Flags, e.Man, e.Doc = se.Flags(), se.Man, strings.TrimSpace(se.Doc)
		e.Src.Spec = se.Pos
		b.enumSpec[e] = se
		if se.Go != "" {
			e.GoName = se.Go
		}
	}
	if !model.IsIdent(e.GoName) {
		b.errorf(srcPos(e.Src), "%s: Go name %q is not an exported identifier", e.CName, e.GoName)
		return
	}
	if !b.declare(srcPos(e.Src), e.GoName, e.CName) {
		return
	}
	b.enumByC[ce] = e
	b.enumByGo[e.GoName] = e
	b.p.Enums = append(b.p.Enums, e)
}

// describedEnums resolves the spec's enums to the header's, keeping those
// their gates let in.
func (b *builder) describedEnums() map[*cheader.Enum]*spec.Enum {
	gated := map[*cheader.Enum]*spec.Enum{}
	for _, se := range b.s.Enums {
		var ce *cheader.Enum
		if se.C != "" {
			ce = b.c.Enum(se.C)
		} else if k, ok := b.c.Constant(se.Anonymous).(*cheader.Enumerator); ok {
			ce = k.Enum
		}
		if !b.gated(se.Pos, "enum "+se.C+se.Anonymous, se.Gate, ce != nil) {
			continue
		}
		if ce == nil {
			what := "enum " + se.C
			if se.C == "" {
				what = "an enum with enumerator " + se.Anonymous
			}
			b.errorf(se.Pos, "%s: not in %s (rdma-core %s)", what, b.c.Header, orUnknown(b.c.Version))
			continue
		}
		if se.C != "" && ce.Tag == "" && ce.Typedef != se.C {
			b.errorf(se.Pos, "enum %s is anonymous in the header", se.C)
			continue
		}
		if prev := gated[ce]; prev != nil {
			b.errorf(se.Pos, "%s is already described at %s", ce.CName(), prev.Pos)
			continue
		}
		gated[ce] = se
	}
	return gated
}

// usedEnums finds the enums the declarations of mlx5dv.h use: they are
// typed too.
func (b *builder) usedEnums() map[*cheader.Enum]bool {
	used := map[*cheader.Enum]bool{}
	var visit func(t *cheader.Type, depth int)
	visit = func(t *cheader.Type, depth int) {
		if t == nil || depth > 8 {
			return
		}
		switch t.Kind {
		case cheader.Enumeration:
			used[t.Enum] = true
		case cheader.Pointer, cheader.Array:
			visit(t.Elem, depth+1)
		case cheader.Function:
			visit(t.Func.Result, depth+1)
			for _, p := range t.Func.Params {
				visit(p.Type, depth+1)
			}
		}
	}
	for _, r := range b.c.Records {
		if r.Pos.File == segmentFile {
			for _, f := range r.Fields {
				visit(f.Type, 0)
			}
		}
	}
	for _, f := range b.c.Funcs {
		if f.Pos.File == segmentFile {
			visit(&cheader.Type{Kind: cheader.Function, Func: f.Type}, 0)
		}
	}
	return used
}

// constants collects the constants to generate, in source order.
func (b *builder) constants() {
	var items []*model.Const
	for _, ce := range b.c.Enums {
		e := b.enumByC[ce]
		if e == nil && !inConstFile(ce.Pos.File) {
			continue
		}
		var from *model.CEnum
		if len(ce.Enumerators) > 0 {
			from = &model.CEnum{File: ce.Pos.File, First: ce.Enumerators[0].Name}
		}
		for _, x := range ce.Enumerators {
			items = append(items, &model.Const{Name: x.Name, Value: model.Value(x.Value), Enum: e, CEnum: from, Src: model.Source{Header: hpos(x.Pos)}})
		}
	}
	for _, m := range b.c.Macros {
		if inConstFile(m.Pos.File) {
			items = append(items, &model.Const{Name: m.Name, Value: model.Value(m.Value), Src: model.Source{Header: hpos(m.Pos)}})
		}
	}
	sortByHeader(items, func(k *model.Const) diag.Pos { return k.Src.Header })
	for _, k := range items {
		if !b.declare(k.Src.Header, k.Name, "constant "+k.Name) {
			continue
		}
		if k.Enum != nil {
			k.Enum.Members = append(k.Enum.Members, k)
			if k.Enum.Flags && k.Value.Negative() {
				b.errorf(k.Src.Header, "%s: flag set %s has a negative member", k.Name, k.Enum.CName)
			}
		}
		b.consts[k.Name] = k
		b.p.Consts = append(b.p.Consts, k)
	}
}

// meanings gives the members of described enums their spec meanings. A
// meaning for a name that is not a member of the enum is an error: it is
// a typo, or the header moved the enumerator elsewhere.
func (b *builder) meanings() {
	for _, e := range b.p.Enums {
		se := b.enumSpec[e]
		if se == nil {
			continue
		}
		for _, sm := range se.Members {
			var k *model.Const
			for _, m := range e.Members {
				if m.Name == sm.Name {
					k = m
				}
			}
			if k == nil {
				b.errorf(sm.Pos, "%s: %s is not one of its members", e.CName, sm.Name)
				continue
			}
			k.Meaning = sm.Meaning
		}
	}
}
