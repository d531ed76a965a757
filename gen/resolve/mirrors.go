package resolve

import (
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/diag"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

// leaf is a field as the spec lists it: a direct member, or a member of a
// union.
type leaf struct {
	name string
	t    *cheader.Type
}

// goAlign is the alignment Go gives a mirrored field.
func goAlign(mf *model.MirrorField) int64 {
	switch mf.Kind {
	case model.MInt, model.MArray:
		return int64(mf.Int.Bits / 8)
	case model.MPointer, model.MRawPtr, model.MPtrUnion:
		return 8
	case model.MNested:
		return mf.Target.Align
	}
	return 1
}

// buildMirrors makes a mirror of every struct of the spec the header
// defines, then lays them out (a field may point to a later mirror).
func (b *builder) buildMirrors() {
	a := b.p.API
	var specs []*spec.Struct
	for _, ss := range b.s.Structs {
		if ss.Opaque != "" {
			b.opaqueStruct(ss)
			continue
		}
		r := b.c.Struct(ss.Name)
		if !b.gated(ss.Pos, "struct "+ss.Name, ss.Gate, r != nil && !r.Incomplete) {
			continue
		}
		if r == nil || r.Incomplete {
			b.errorf(ss.Pos, "struct %s: not defined in %s (rdma-core %s)", ss.Name, b.c.Header, orUnknown(b.c.Version))
			continue
		}
		m := &model.Mirror{CName: ss.Name, GoName: b.names.Name(ss.Name), File: r.Pos.File, Size: r.Size, Align: r.Align,
			Man: ss.Man, Doc: strings.TrimSpace(ss.Doc)}
		if b.declare(ss.Pos, m.GoName, "struct "+ss.Name) {
			b.mirrors[ss.Name] = m
			b.mirrorC[m] = r
			specs = append(specs, ss)
			a.Mirrors = append(a.Mirrors, m)
		}
	}
	for i, m := range a.Mirrors {
		b.mirrorFields(m, specs[i])
	}
	goLayoutAligns(a.Mirrors)
	for _, m := range a.Mirrors {
		b.checkGoLayout(m)
	}
}

// opaqueStruct records a struct described as opaque. The header need only
// declare it (a forward declaration will do): nothing reads its layout.
func (b *builder) opaqueStruct(ss *spec.Struct) {
	r := b.c.Struct(ss.Name)
	if !b.gated(ss.Pos, "struct "+ss.Name, ss.Gate, r != nil) {
		return
	}
	if r == nil {
		b.errorf(ss.Pos, "struct %s: opaque, but %s (rdma-core %s) does not declare it", ss.Name, b.c.Header, orUnknown(b.c.Version))
		return
	}
	b.p.API.Opaque = append(b.p.API.Opaque, &model.Opaque{CName: ss.Name, GoName: b.names.Name(ss.Name),
		Reason: strings.TrimSpace(ss.Opaque), Man: ss.Man, Doc: strings.TrimSpace(ss.Doc)})
}

func hasLeaf(leaves []leaf, name string) bool {
	for _, l := range leaves {
		if l.name == name {
			return true
		}
	}
	return false
}

// leaves lists a record's fields as the spec lists them: direct members,
// anonymous union members by their names, named union members as
// union.member. ok is false for a record that cannot be mirrored.
func (b *builder) leaves(r *cheader.Record, ss *spec.Struct, what string) (out []leaf, ok bool) {
	for _, f := range flatFields(r) {
		if f.Bitfield {
			b.errorf(ss.Pos, "%s: bitfield %s cannot be mirrored", what, f.Name)
			return nil, false
		}
		if f.Type.Kind == cheader.Union && f.Type.Record.Tag == "" {
			for _, u := range f.Type.Record.Fields {
				n := u.Name
				if f.Name != "" {
					n = f.Name + "." + u.Name
				}
				out = append(out, leaf{n, u.Type})
			}
			continue
		}
		out = append(out, leaf{f.Name, f.Type})
	}
	return out, true
}

// flatFields lists a record's fields with the members of an untagged
// struct member in its place, named struct.member (mlx5dv_qp's sq.buf), or
// by their own names for a C11 anonymous struct: their C spelling in
// offsetof, and a type the spec can name (an untagged struct's spelling
// names its position in the header).
func flatFields(r *cheader.Record) []*cheader.Field {
	var out []*cheader.Field
	for _, f := range r.Fields {
		if f.Bitfield || f.Type.Kind != cheader.Struct || f.Type.Record.Tag != "" {
			out = append(out, f)
			continue
		}
		for _, u := range flatFields(f.Type.Record) {
			n := u.Name
			if f.Name != "" && n != "" {
				n = f.Name + "." + n
			}
			out = append(out, &cheader.Field{Pos: u.Pos, Name: n, Type: u.Type, Record: r, BitOffset: f.BitOffset + u.BitOffset, Aligned: u.Aligned})
		}
	}
	return out
}

// specFields checks the spec's field list of a struct against the
// header's, and returns the spec's fields by name.
func (b *builder) specFields(ss *spec.Struct, leaves []leaf, what string) map[string]*spec.StructField {
	var listed []*spec.StructField
	for _, sf := range ss.Fields {
		if b.gated(sf.Pos, what+": field "+sf.Name, sf.Gate, hasLeaf(leaves, sf.Name)) {
			listed = append(listed, sf)
		}
	}
	specOf := map[string]*spec.StructField{}
	for i, l := range leaves {
		if i >= len(listed) {
			b.errorf(ss.Pos, "%s: the header has field %s (%s), which the spec does not list (rdma-core %s)", what, l.name, l.t.Spelling(), orUnknown(b.c.Version))
			continue
		}
		sf := listed[i]
		if sf.Name != l.name {
			b.errorf(sf.Pos, "%s: field %d is %s in the header, not %s", what, i+1, l.name, sf.Name)
			continue
		}
		if normType(sf.Type) != normType(l.t.Spelling()) {
			b.errorf(sf.Pos, "%s: field %s has type %q in the header, not %q", what, sf.Name, l.t.Spelling(), sf.Type)
		}
		specOf[sf.Name] = sf
	}
	for _, sf := range listed[min(len(leaves), len(listed)):] {
		b.errorf(sf.Pos, "%s: no field %s in the header (rdma-core %s)", what, sf.Name, orUnknown(b.c.Version))
	}
	return specOf
}

// mirrorFields lays out a mirror from its C record and checks the spec's
// field list against it.
func (b *builder) mirrorFields(m *model.Mirror, ss *spec.Struct) {
	what := "struct " + m.CName
	r := b.mirrorC[m]
	leaves, ok := b.leaves(r, ss, what)
	if !ok {
		return
	}
	specOf := b.specFields(ss, leaves, what)
	for _, f := range flatFields(r) {
		mf := &model.MirrorField{CName: f.Name, GoName: model.MemberName(f.Name), Offset: f.Offset(), Size: f.Type.Size}
		if t := f.Type; t.Kind == cheader.Union && t.Record.Tag == "" {
			b.unionField(m, mf, f, specOf, what)
		} else {
			b.plainField(m, mf, f, specOf[f.Name], what)
		}
		m.Fields = append(m.Fields, mf)
	}
}

// unionField mirrors an anonymous union: each member gets accessors.
func (b *builder) unionField(m *model.Mirror, mf *model.MirrorField, f *cheader.Field, specOf map[string]*spec.StructField, what string) {
	allPtr := true
	for _, u := range f.Type.Record.Fields {
		allPtr = allPtr && u.Type.Kind == cheader.Pointer
	}
	mf.Kind = model.MUnion
	if allPtr {
		mf.Kind = model.MPtrUnion
	}
	if f.Name == "" {
		mf.GoName = model.UnionName(f.Offset())
	}
	for _, u := range f.Type.Record.Fields {
		n := u.Name
		if f.Name != "" {
			n = f.Name + "." + u.Name
		}
		um := &model.UnionMember{CName: n, GoName: model.MemberName(n), Offset: u.Offset()}
		b.mirrorKind(u.Type, &um.Kind, &um.Int, &um.Target, nil, what+"."+n)
		if sf := specOf[n]; sf != nil && sf.When != nil {
			um.When = b.cond(sf.When, m, what)
		}
		mf.Members = append(mf.Members, um)
	}
}

// plainField mirrors any other member, described by sf (nil for none).
func (b *builder) plainField(m *model.Mirror, mf *model.MirrorField, f *cheader.Field, sf *spec.StructField, what string) {
	t := f.Type
	b.mirrorKind(t, &mf.Kind, &mf.Int, &mf.Target, &mf.Len, what+"."+f.Name)
	if sf == nil {
		if t.Kind == cheader.Enumeration {
			mf.Enum = b.enumByC[t.Enum]
		}
		return
	}
	mf.Doc = strings.TrimSpace(sf.Doc)
	if (sf.Enum != "" || sf.Flags != "") && mf.Kind == model.MInt {
		mf.Enum = b.enumByTag(sf.Pos, sf.Enum+sf.Flags, what+"."+f.Name)
		mf.Names = mf.Enum
		if mf.Enum != nil && mf.Enum.Underlying.Bits != mf.Int.Bits {
			mf.Enum = nil // a uint64 field holding a 32-bit flag set keeps its C type
		}
	} else if t.Kind == cheader.Enumeration {
		mf.Enum = b.enumByC[t.Enum]
	}
	if sf.When != nil {
		mf.When = b.cond(sf.When, m, what)
	}
}

// mirrorKind decides how a C type is mirrored.
func (b *builder) mirrorKind(t *cheader.Type, kind *model.MirrorKind, it *model.IntType, target **model.Mirror, n *int64, what string) {
	switch t.Kind {
	case cheader.Bool:
		*kind = model.MBool
	case cheader.Pointer:
		*kind = model.MRawPtr
		if e := t.Elem; e != nil && (e.Kind == cheader.Struct || e.Kind == cheader.Union) {
			if m := b.mirrors[e.Record.Tag]; m != nil {
				*kind, *target = model.MPointer, m
			}
		}
	case cheader.Array:
		if x, ok := intType(t.Elem); ok && t.Len > 0 && x.Bits > 8 {
			*kind, *it = model.MArray, x
			if n != nil {
				*n = t.Len
			}
			return
		}
		*kind = model.MBytes
		if n != nil {
			*n = t.Size
		}
	case cheader.Struct, cheader.Union:
		if m := b.mirrors[t.Record.Tag]; m != nil && t.Record.Tag != "" {
			*kind, *target = model.MNested, m
			return
		}
		*kind = model.MBytes
		if n != nil {
			*n = t.Size
		}
	default:
		x, ok := intType(t)
		if !ok {
			b.errorf(diag.Pos{}, "%s: type %s cannot be mirrored", what, t.Spelling())
			return
		}
		*kind, *it = model.MInt, x
	}
}

// cond resolves a when: condition on a mirror's field.
func (b *builder) cond(c *spec.Cond, m *model.Mirror, what string) *model.Cond {
	out := &model.Cond{NotNull: c.NotNull}
	for _, f := range m.Fields {
		if f.CName == c.Field {
			out.Field = f
		}
	}
	if out.Field == nil {
		// Fields are built in order; a condition may name a later one.
		for _, f := range b.mirrorC[m].Fields {
			if f.Name == c.Field {
				out.Field = &model.MirrorField{CName: f.Name, GoName: model.MemberName(f.Name), Offset: f.Offset()}
			}
		}
	}
	if out.Field == nil {
		b.errorf(c.Pos, "%s: when: no field %s", what, c.Field)
		return nil
	}
	for _, s := range c.OneOf {
		if v, ok := b.value(c.Pos, s, what+" when"); ok {
			out.OneOf = append(out.OneOf, v)
		}
	}
	for _, s := range c.Bits {
		if v, ok := b.value(c.Pos, s, what+" when"); ok {
			out.Bits |= v
		}
	}
	for _, s := range c.Clear {
		if v, ok := b.value(c.Pos, s, what+" when"); ok {
			out.Clear |= v
		}
	}
	if len(out.OneOf) == 0 && out.Bits == 0 && out.Clear == 0 && !out.NotNull {
		b.errorf(c.Pos, "%s: when needs one_of, bits, clear or not_null", what)
	}
	return out
}

func fieldNamed(m *model.Mirror, name string) *model.MirrorField {
	for _, f := range m.Fields {
		if f.CName == name {
			return f
		}
	}
	return nil
}
