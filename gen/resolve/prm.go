package resolve

import (
	"go/token"

	"github.com/mlx5gen/mlx5gen/gen/diag"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

// PRMReserved are the identifiers the PRM package's static code declares
// (gen/emit/prm_static.go.txt); a layout or enum taking one is an error.
var PRMReserved = []string{"FieldError", "CmdError", "CheckStatus", "Layouts", "LayoutInfo",
	"FieldInfo", "FieldKind", "IntField", "BytesField", "NestedField", "UnionField", "LayoutByName",
	"Enums", "EnumInfo", "EnumValue"}

// prmBuilder resolves the PRM descriptors: the package's own namespace
// (generated/mlx5prm is not the header's package), enum and layout names.
type prmBuilder struct {
	errs    diag.List
	idents  map[string]diag.Pos
	enums   map[string]*model.PRMEnum
	layouts map[string]*model.Layout
}

// prm builds the PRM model of s, nil when s describes no layout.
func (b *builder) prm() {
	if len(b.s.Layouts) == 0 && len(b.s.PRMEnums) == 0 {
		return
	}
	pb := &prmBuilder{idents: map[string]diag.Pos{}, enums: map[string]*model.PRMEnum{}, layouts: map[string]*model.Layout{}}
	for _, n := range PRMReserved {
		pb.idents[n] = diag.Pos{}
	}
	out := &model.PRM{}
	files := map[string]bool{}
	rel := map[string]string{}
	for i, f := range b.s.Files {
		rel[f] = b.s.Rel[i]
	}
	addFile := func(p diag.Pos) {
		if r := rel[p.File]; r != "" && !files[r] {
			files[r] = true
			out.Spec = append(out.Spec, r)
		}
	}
	for _, e := range b.s.PRMEnums {
		addFile(e.Pos)
		out.Enums = append(out.Enums, pb.enum(e))
	}
	// Layouts first by name, then their fields: a field may name a
	// layout described after it.
	for _, l := range b.s.Layouts {
		addFile(l.Pos)
		m := &model.Layout{Name: l.Name, GoName: orDefault(l.Go, model.GoCase(l.Name)), Bits: l.Bits, Doc: l.Doc, Src: model.Source{Spec: l.Pos}}
		pb.declare(l.Pos, m.GoName, "prm layout "+l.Name)
		pb.declare(l.Pos, m.GoName+"Size", "the size constant of prm layout "+l.Name)
		pb.declare(l.Pos, "View"+m.GoName, "the view function of prm layout "+l.Name)
		pb.layouts[l.Name] = m
		out.Layouts = append(out.Layouts, m)
	}
	for i, l := range b.s.Layouts {
		pb.fields(l, out.Layouts[i])
	}
	if len(b.s.Layouts) > 0 {
		pb.checkStatusNeeds(b.s.Layouts[0].Pos)
	}
	b.errs = append(b.errs, pb.errs...)
	b.p.PRM = out
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// declare reserves a package-level identifier of the PRM package.
func (pb *prmBuilder) declare(pos diag.Pos, name, what string) {
	if !token.IsIdentifier(name) || !token.IsExported(name) {
		pb.errs.Add(pos, "Go name %q of %s is not an exported Go identifier", name, what)
		return
	}
	if prev, dup := pb.idents[name]; dup {
		at := "the PRM package's own code"
		if prev.File != "" {
			at = prev.String()
		}
		pb.errs.Add(pos, "Go name %s of %s is already used (%s)", name, what, at)
		return
	}
	pb.idents[name] = pos
}

func (pb *prmBuilder) enum(e *spec.PRMEnum) *model.PRMEnum {
	m := &model.PRMEnum{Name: e.Name, GoName: orDefault(e.Go, model.GoCase(e.Name)), Width: e.Width,
		Type: uintFor(e.Width), Doc: e.Doc, Src: model.Source{Spec: e.Pos}}
	pb.declare(e.Pos, m.GoName, "prm enum "+e.Name)
	byValue := map[uint64]string{}
	for _, v := range e.Values {
		if prev, dup := byValue[v.Value]; dup {
			pb.errs.Add(v.Pos, "prm enum %s: value %s = %#x is %s's too; a value has one name", e.Name, v.Name, v.Value, prev)
		}
		byValue[v.Value] = v.Name
		pb.declare(v.Pos, v.Name, "value "+v.Name+" of prm enum "+e.Name)
		m.Values = append(m.Values, &model.PRMValue{Name: v.Name, Value: v.Value, Meaning: v.Meaning})
	}
	pb.enums[e.Name] = m
	return m
}

// uintFor is the smallest unsigned Go type of width bits.
func uintFor(width int) model.IntType {
	for _, n := range []int{8, 16, 32} {
		if width <= n {
			return model.IntType{Bits: n}
		}
	}
	return model.IntType{Bits: 64}
}

// fields resolves the fields of l into m: kinds, names, nested layouts,
// and the order and overlap the spec check could not see (a nested
// layout's width is its layout's).
func (pb *prmBuilder) fields(l *spec.Layout, m *model.Layout) {
	methods := map[string]string{}
	end := 0
	for _, f := range l.Fields {
		bad := func(format string, args ...any) {
			pb.errs.Add(f.Pos, "prm layout %s: field %s: "+format, append([]any{l.Name, f.Name}, args...)...)
		}
		mf := &model.LayoutField{Name: f.Name, GoName: orDefault(f.Go, model.GoCase(f.Name)), Bit: f.Bit,
			Width: f.Width, Doc: f.Doc, Src: model.Source{Spec: f.Pos}}
		switch {
		case f.Layout != "":
			n := pb.layouts[f.Layout]
			if n == nil {
				bad("no prm layout %s", f.Layout)
				continue
			}
			if n == m {
				bad("a layout cannot contain itself")
				continue
			}
			mf.Kind, mf.Nested, mf.Width = model.LayoutNested, []*model.Layout{n}, n.Bits
		case len(f.Union) > 0:
			mf.Kind = model.LayoutUnion
			for _, u := range f.Union {
				n := pb.layouts[u]
				switch {
				case n == nil:
					bad("union member: no prm layout %s", u)
				case n == m:
					bad("union member %s: a layout cannot contain itself", u)
				case n.Bits > f.Width:
					bad("union member %s (%#x bits) is wider than the field (%#x bits)", u, n.Bits, f.Width)
				default:
					mf.Nested = append(mf.Nested, n)
				}
			}
		case f.Width > 64:
			mf.Kind = model.LayoutBytes
		default:
			mf.Kind, mf.Type = model.LayoutInt, uintFor(f.Width)
			if f.Enum != "" {
				mf.Enum = pb.enums[f.Enum]
				switch {
				case mf.Enum == nil:
					bad("no prm enum %s", f.Enum)
				case mf.Enum.Width > f.Width:
					bad("enum %s takes %d bits; the field has %d", f.Enum, mf.Enum.Width, f.Width)
				}
			}
		}
		if f.Bit < end {
			bad("bit %#x overlaps the field before it (which ends at bit %#x); list fields in bit order", f.Bit, end)
		}
		if f.Bit+mf.Width > l.Bits {
			bad("bits %#x..%#x pass the end of the %#x-bit layout", f.Bit, f.Bit+mf.Width-1, l.Bits)
		}
		end = f.Bit + mf.Width
		for _, name := range accessors(mf) {
			if prev, dup := methods[name]; dup {
				bad("accessor %s is already field %s's", name, prev)
			} else if !token.IsIdentifier(name) || !token.IsExported(name) {
				bad("accessor name %q is not an exported Go identifier", name)
			}
			methods[name] = f.Name
		}
		m.Fields = append(m.Fields, mf)
	}
}

// accessors are the method names a field gets (gen/emit/prm.go prints
// them): a getter and setter for values, a getter for bytes and nested
// layouts, one getter per union member.
func accessors(f *model.LayoutField) []string {
	switch f.Kind {
	case model.LayoutInt:
		return []string{f.GoName, "Set" + f.GoName}
	case model.LayoutUnion:
		var names []string
		for _, n := range f.Nested {
			names = append(names, f.GoName+n.GoName)
		}
		return append(names, f.GoName)
	}
	return []string{f.GoName}
}

// checkStatusNeeds checks what the package's CheckStatus reads
// (gen/emit/prm_static.go.txt): every output mailbox starts with mbox_out,
// an 8-bit status of enum cmd_status and a 32-bit syndrome.
func (pb *prmBuilder) checkStatusNeeds(pos diag.Pos) {
	need := "the PRM layouts need prm enum cmd_status (go name CmdStatus, width 8) and layout mbox_out (go name MboxOut) with fields status (enum cmd_status) and syndrome (32 bits): CheckStatus reads them"
	st, out := pb.enums["cmd_status"], pb.layouts["mbox_out"]
	if st == nil || st.GoName != "CmdStatus" || st.Width != 8 || out == nil || out.GoName != "MboxOut" {
		pb.errs.Add(pos, "%s", need)
		return
	}
	ok := 0
	for _, f := range out.Fields {
		if f.GoName == "Status" && f.Kind == model.LayoutInt && f.Enum == st ||
			f.GoName == "Syndrome" && f.Kind == model.LayoutInt && f.Width == 32 {
			ok++
		}
	}
	if ok != 2 {
		pb.errs.Add(pos, "%s", need)
	}
}
