package resolve

import (
	"fmt"
	"go/token"
	"slices"
	"sort"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/diag"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/spec"
	"github.com/mlx5gen/mlx5gen/gen/vocab"
)

// isSegment reports whether a header record is a hardware segment: a
// struct or union of mlx5dv.h tagged mlx5_ (mlx5dv_ structs are the
// library's own API).
func isSegment(r *cheader.Record) bool {
	return r.Pos.File == segmentFile && r.Tag != "" && strings.HasPrefix(r.Tag, "mlx5_") && !strings.HasPrefix(r.Tag, "mlx5dv_")
}

func (b *builder) segments() {
	specs := map[string]*spec.Segment{}
	for _, sg := range b.s.Segments {
		specs[sg.C] = sg
	}
	// Header segments first (their nested segments may be described
	// later in the header, so create them all before filling fields).
	var hdr []*cheader.Record
	for _, r := range b.c.Records {
		if isSegment(r) {
			hdr = append(hdr, r)
			sg := &model.Segment{CName: r.Tag, GoName: b.names.Name(r.Tag), Size: int(r.Size), Union: r.Kind == cheader.Union, Src: model.Source{Header: hpos(r.Pos)}}
			if s := specs[r.Tag]; s != nil {
				if s.Private != "" {
					b.errorf(s.Pos, "segment %s is declared by %s; remove private", s.C, b.c.Header)
				}
				if s.Go != "" {
					sg.GoName = s.Go
				}
				sg.Doc = strings.TrimSpace(s.Doc)
				sg.Src.Spec = s.Pos
			}
			b.segs[r.Tag] = sg
		}
	}
	var private []*spec.Segment
	for _, s := range b.s.Segments {
		if s.Private == "" {
			if b.segs[s.C] == nil {
				b.errorf(s.Pos, "segment %s: no struct %s in %s (rdma-core %s); a segment the header does not declare needs private: <source file>", s.C, s.C, b.c.Header, orUnknown(b.c.Version))
			}
			continue
		}
		if b.segs[s.C] != nil {
			continue // reported above
		}
		sg := &model.Segment{CName: s.C, GoName: b.names.Name(s.C), Size: s.Size, Private: s.Private, Doc: strings.TrimSpace(s.Doc), Src: model.Source{Spec: s.Pos}}
		if s.Go != "" {
			sg.GoName = s.Go
		}
		b.segs[s.C] = sg
		private = append(private, s)
	}
	for _, r := range hdr {
		sg := b.segs[r.Tag]
		b.headerFields(sg, r, specs[r.Tag])
	}
	for _, s := range private {
		b.privateFields(b.segs[s.C], s)
	}
	var all []*model.Segment
	for _, sg := range b.segs {
		all = append(all, sg)
	}
	// Header segments in header order, then private ones in spec order.
	sort.Slice(all, func(i, j int) bool {
		a, c := all[i], all[j]
		if (a.Private == "") != (c.Private == "") {
			return a.Private == ""
		}
		if a.Private == "" {
			return posLess(a.Src.Header, c.Src.Header)
		}
		if a.Src.Spec.File != c.Src.Spec.File {
			return a.Src.Spec.File < c.Src.Spec.File
		}
		return a.Src.Spec.Line < c.Src.Spec.Line
	})
	for _, sg := range all {
		if b.declare(srcPos(sg.Src), sg.GoName, "segment "+sg.CName) {
			b.declare(srcPos(sg.Src), sg.SizeName(), "the size of segment "+sg.CName)
			b.declare(srcPos(sg.Src), sg.FieldsName(), "the field values of segment "+sg.CName)
			b.p.Segments = append(b.p.Segments, sg)
		}
	}
}

// headerFields makes a field per leaf member of a header struct.
func (b *builder) headerFields(sg *model.Segment, r *cheader.Record, s *spec.Segment) {
	overrides := map[string]*spec.Field{}
	if s != nil {
		for _, f := range s.Fields {
			overrides[f.Name] = f
		}
	}
	used := map[string]bool{}
	for _, mb := range r.Members() {
		t := mb.Field.Type
		if (t.Kind == cheader.Struct || t.Kind == cheader.Union) && t.Record.Tag == "" {
			continue // its members are listed themselves
		}
		f := &model.Field{CName: mb.Path, GoName: model.MemberName(mb.Path), Offset: int(mb.Offset), Src: model.Source{Header: hpos(mb.Field.Pos)}}
		what := fmt.Sprintf("%s.%s", r.CName(), mb.Path)
		switch {
		case mb.Field.Bitfield:
			b.errorf(hpos(mb.Field.Pos), "%s: bitfields in segments are not supported; describe the bits as parts", what)
			continue
		case t.Kind == cheader.Array && t.Len <= 0:
			sg.Omitted = append(sg.Omitted, mb.Path)
			continue
		case t.Kind == cheader.Array:
			it, ok := intType(t.Elem)
			if !ok {
				b.errorf(hpos(mb.Field.Pos), "%s: array of %s is not supported in a segment", what, t.Elem.Spelling())
				continue
			}
			if it.Bits == 8 {
				f.Kind, f.Len = model.BytesField, int(t.Len)
			} else {
				f.Kind, f.Int, f.Len, f.Endian = model.IntArray, model.IntType{Bits: it.Bits}, int(t.Len), endian(t.Elem)
			}
		case t.Kind == cheader.Struct || t.Kind == cheader.Union:
			if n := b.segs[t.Record.Tag]; n != nil && isSegment(t.Record) {
				f.Kind, f.Nested = model.NestedField, n
			} else {
				f.Kind, f.Len = model.BytesField, int(t.Size)
				f.Doc = "holds a " + t.Record.CName()
			}
		default:
			it, ok := intType(t)
			if !ok {
				b.errorf(hpos(mb.Field.Pos), "%s: type %s is not supported in a segment", what, t.Spelling())
				continue
			}
			f.Kind, f.Int, f.Endian = model.IntField, model.IntType{Bits: it.Bits}, endian(t)
		}
		if o := overrides[mb.Path]; o != nil {
			used[mb.Path] = true
			f.Src.Spec = o.Pos
			f.Doc = strings.TrimSpace(o.Doc)
			switch o.Endian {
			case "big":
				f.Endian = model.Big
			case "little":
				f.Endian = model.Little
			}
			if (o.Endian != "" || o.Enum != "" || len(o.Parts) > 0) && f.Kind != model.IntField {
				b.errorf(o.Pos, "%s: endian, enum and parts apply to integer fields", what)
			}
			b.fieldExtras(f, o, what)
		}
		sg.Fields = append(sg.Fields, f)
	}
	for _, o := range overridesInOrder(s) {
		if !used[o.Name] {
			b.errorf(o.Pos, "segment %s: %s has no field %s (rdma-core %s)", sg.CName, r.CName(), o.Name, orUnknown(b.c.Version))
		}
	}
	b.checkNames(sg)
}

func overridesInOrder(s *spec.Segment) []*spec.Field {
	if s == nil {
		return nil
	}
	return s.Fields
}

func endian(t *cheader.Type) model.Endian {
	switch {
	case t.Size == 1:
		return model.Big // one byte: order does not matter
	case t.Endian == cheader.BigEndian:
		return model.Big
	case t.Endian == cheader.LittleEndian:
		return model.Little
	}
	return model.Native
}

// orders are the model's byte orders of vocab's.
var orders = map[string]model.Endian{vocab.BigEndian: model.Big, vocab.LittleEndian: model.Little, vocab.HostOrder: model.Native}

// privateFields makes the fields of a segment the spec lays out.
func (b *builder) privateFields(sg *model.Segment, s *spec.Segment) {
	type span struct {
		lo, hi int
		name   string
	}
	var spans []span
	for _, o := range s.Fields {
		f := &model.Field{CName: o.Name, GoName: model.MemberName(o.Name), Offset: o.Offset, Doc: strings.TrimSpace(o.Doc), Src: model.Source{Spec: o.Pos}}
		what := sg.CName + "." + o.Name
		switch o.Type {
		case "bytes":
			f.Kind, f.Len = model.BytesField, o.Len
		case "segment":
			n := b.segs[o.Segment]
			if n == nil {
				b.errorf(o.Pos, "%s: no segment %s", what, o.Segment)
				continue
			}
			if n == sg {
				b.errorf(o.Pos, "%s: a segment cannot contain itself", what)
				continue
			}
			f.Kind, f.Nested = model.NestedField, n
		default:
			t := vocab.IntFields[o.Type]
			f.Kind, f.Int, f.Endian = model.IntField, model.IntType{Bits: t.Bits}, orders[t.Order]
			if o.Len > 0 {
				f.Kind, f.Len = model.IntArray, o.Len
			}
		}
		if f.Kind != model.IntField && (o.Enum != "" || len(o.Parts) > 0) {
			b.errorf(o.Pos, "%s: enum and parts apply to integer fields", what)
		}
		b.fieldExtras(f, o, what)
		if o.Offset < 0 || o.Offset+f.Size() > sg.Size {
			b.errorf(o.Pos, "%s: bytes %d..%d are outside the %d-byte segment", what, o.Offset, o.Offset+f.Size()-1, sg.Size)
			continue
		}
		for _, sp := range spans {
			if o.Offset < sp.hi && sp.lo < o.Offset+f.Size() {
				b.errorf(o.Pos, "%s overlaps %s", what, sp.name)
			}
		}
		spans = append(spans, span{o.Offset, o.Offset + f.Size(), o.Name})
		sg.Fields = append(sg.Fields, f)
	}
	b.checkNames(sg)
}

// fieldExtras resolves a field's enum type and parts.
func (b *builder) fieldExtras(f *model.Field, o *spec.Field, what string) {
	if o.Enum != "" {
		f.Enum = b.enumFor(o.Pos, o.Enum, f.Int.Bits, what)
	}
	for _, sp := range o.Parts {
		p := &model.Part{Name: sp.Name, GoName: model.MemberName(sp.Name), Shift: sp.Shift, Width: sp.Width, Doc: strings.TrimSpace(sp.Doc), Src: model.Source{Spec: sp.Pos}}
		if sp.Shift+sp.Width > f.Int.Bits {
			b.errorf(sp.Pos, "%s: part %s (bits %d..%d) does not fit the %d-bit field", what, sp.Name, sp.Shift, sp.Shift+sp.Width-1, f.Int.Bits)
			continue
		}
		for _, q := range f.Parts {
			if sp.Shift < q.Shift+q.Width && q.Shift < sp.Shift+sp.Width {
				b.errorf(sp.Pos, "%s: part %s overlaps part %s", what, sp.Name, q.Name)
			}
		}
		switch {
		case sp.Width <= 8:
			p.Type = model.IntType{Bits: 8}
		case sp.Width <= 16:
			p.Type = model.IntType{Bits: 16}
		case sp.Width <= 32:
			p.Type = model.IntType{Bits: 32}
		default:
			p.Type = model.IntType{Bits: 64}
		}
		if sp.Enum != "" {
			p.Enum = b.enumFor(sp.Pos, sp.Enum, sp.Width, what+" part "+sp.Name)
		}
		f.Parts = append(f.Parts, p)
	}
}

// enumFor resolves an enum named by its Go name and checks that its values
// fit in bits.
func (b *builder) enumFor(pos diag.Pos, name string, bits int, what string) *model.Enum {
	e := b.enumByGo[name]
	if e == nil {
		b.errorf(pos, "%s: no enum type %s (give the Go name of an enum in spec/enums)", what, name)
		return nil
	}
	for _, m := range e.Members {
		if bits < 64 && (m.Value.Negative() || m.Value.Bits>>uint(bits) != 0) {
			b.errorf(pos, "%s: %s = %v does not fit in %d bits", what, m.Name, m.Value, bits)
		}
	}
	return e
}

// checkNames makes sure the accessors of a segment do not collide.
func (b *builder) checkNames(sg *model.Segment) {
	seen := map[string]string{}
	add := func(pos diag.Pos, name, what string) {
		if !token.IsIdentifier(name) {
			b.errorf(pos, "segment %s: %s would be named %q, which is not a Go identifier", sg.CName, what, name)
			return
		}
		for _, n := range []string{name, model.Setter(name)} {
			if slices.Contains(model.SegmentMethods, n) {
				b.errorf(pos, "segment %s: %s would be named %s, which every segment already has", sg.CName, what, n)
			}
			if prev, dup := seen[n]; dup {
				b.errorf(pos, "segment %s: %s and %s both want the accessor %s", sg.CName, what, prev, n)
			}
			seen[n] = what
		}
	}
	for _, f := range sg.Fields {
		pos := srcPos(f.Src)
		add(pos, f.GoName, "field "+f.CName)
		if f.Kind == model.IntField && f.Endian == model.Big && f.Int.Bits > 8 && f.Enum == nil {
			add(pos, model.WireName(f.GoName), "the wire-order accessors of field "+f.CName)
		}
		for _, p := range f.Parts {
			add(p.Src.Spec, p.GoName, "part "+p.Name+" of "+f.CName)
		}
	}
}
