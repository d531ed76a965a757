package cheader

import (
	"fmt"

	"modernc.org/cc/v4"
)

// layout computes r's fields, size and alignment the way gcc does for
// x86-64 (System V psABI plus the GNU packed and aligned attributes).
func (p *parser) layout(r *Record, spec *cc.StructOrUnionSpecifier, ct cc.Type) error {
	if err := p.recordLayoutAttrs(r, spec); err != nil {
		return err
	}
	fields, decls, err := p.fieldDecls(r, spec, ct)
	if err != nil {
		return err
	}
	name := r.CName()
	pl := placement{r: r, align: 1}
	for i, cf := range fields {
		md := decls[i]
		what := memberWhat(name, cf.Name())
		f, err := p.field(r, cf, md, what)
		if err != nil {
			return err
		}
		fa := memberAlign(r, f)
		if cf.IsBitfield() {
			err = pl.bitfield(f, cf.ValueBits(), fa, what)
		} else {
			err = pl.object(f, fa, what)
		}
		if err != nil {
			return err
		}
		r.Fields = append(r.Fields, f)
	}
	pl.finish()
	r.ccDiffers = ccLayoutDiffers(r, ct, fields)
	return nil
}

// recordLayoutAttrs applies the record's own attributes and the #pragma
// pack in force to r, refusing those the model does not lay out.
func (p *parser) recordLayoutAttrs(r *Record, spec *cc.StructOrUnionSpecifier) error {
	ra := recordAttrs(spec)
	name := r.CName()
	// designated_init changes no layout, so it is not among these.
	for _, bad := range []string{"mode", "vector_size", "ms_struct", "gcc_struct"} {
		if ra.has(bad) {
			return &LayoutError{Pos: r.Pos, Decl: name, Reason: "attribute " + bad + " is not modelled"}
		}
	}
	pack, pos, err := p.packFor(r, spec)
	if err != nil {
		return err
	}
	r.Pack = pack
	if pack != 0 {
		r.PackPos = pos
	}
	r.Packed = ra.has("packed")
	if n := ra.aligned(); n != 0 {
		if n < 0 {
			return &LayoutError{Pos: r.Pos, Decl: name, Reason: "aligned without an argument"}
		}
		if why := badAlign(n); why != "" {
			return &LayoutError{Pos: r.Pos, Decl: name, Reason: why}
		}
		r.Aligned = n
	}
	return nil
}

// fieldDecls pairs cc's fields of ct with their declarations in spec: cc
// has resolved the types, the syntax tree keeps the attributes and
// positions cc drops. The two must agree one to one.
func (p *parser) fieldDecls(r *Record, spec *cc.StructOrUnionSpecifier, ct cc.Type) ([]*cc.Field, []member, error) {
	var nfields int
	var fieldAt func(int) *cc.Field
	switch x := ct.(type) {
	case *cc.StructType:
		nfields, fieldAt = x.NumFields(), x.FieldByIndex
	case *cc.UnionType:
		nfields, fieldAt = x.NumFields(), x.FieldByIndex
	}
	decls := p.members(spec)
	if len(decls) != nfields {
		return nil, nil, &LayoutError{Pos: r.Pos, Decl: r.CName(), Reason: fmt.Sprintf("the syntax tree has %d member declarations, the type has %d fields", len(decls), nfields)}
	}
	fields := make([]*cc.Field, nfields)
	for i := range fields {
		fields[i] = fieldAt(i)
	}
	return fields, decls, nil
}

// memberWhat names a member in messages: rec.name, or rec.<anonymous>
// for an anonymous struct, union or bitfield.
func memberWhat(rec, name string) string {
	if name == "" {
		return rec + ".<anonymous>"
	}
	return rec + "." + name
}

// field converts one member of r to the model, with its attributes
// applied, before it is placed.
func (p *parser) field(r *Record, cf *cc.Field, md member, what string) (*Field, error) {
	fname := cf.Name()
	ft, err := p.typ(cf.Type(), md.pos, what)
	if err != nil {
		return nil, err
	}
	if md.baseConst && (ft.Kind == Pointer || ft.Kind == Array) {
		ft = withBaseConst(ft) // cc/v4 loses a const below a pointer or array
	}
	f := &Field{Pos: md.pos, Name: fname, Type: ft, Record: r}
	// An anonymous record defined in place belongs to r: link it so that
	// its members are named by their path from r.
	if ft.Record != nil && ft.Record.Tag == "" && ft.Record.Parent == nil && ft.Record.Typedef == "" {
		ft.Record.Parent = r
		ft.Record.Path = fname
	}
	if err := p.memberAttrs(md, what, f); err != nil {
		return nil, err
	}
	return f, nil
}

// memberAlign is the alignment a member asks for inside r: packed lowers
// it to 1, aligned(N) on the member raises it, and #pragma pack(n) caps
// the result, the member's aligned(N) included.
func memberAlign(r *Record, f *Field) int64 {
	fa := f.Type.Align
	if r.Packed {
		fa = 1
	}
	if f.Aligned > fa {
		fa = f.Aligned
	}
	if r.Pack > 0 && fa > r.Pack {
		fa = r.Pack
	}
	return fa
}

// placement is the running state of laying out a record's members in
// declaration order, in bits so that bitfields share the arithmetic.
type placement struct {
	r       *Record
	bit     int64 // where the next member may start
	maxBits int64 // the extent of the members placed so far
	align   int64 // the record's alignment so far
}

// start returns the first free bit for the next member: every member of a
// union starts at 0.
func (s *placement) start() int64 {
	if s.r.Kind == Union {
		s.bit = 0
	}
	return s.bit
}

// extend grows the record's extent to the end of the member just placed.
func (s *placement) extend() {
	if s.bit > s.maxBits {
		s.maxBits = s.bit
	}
}

// bitfield places a bitfield of width bits and alignment fa.
func (s *placement) bitfield(f *Field, width, fa int64, what string) error {
	r, ft := s.r, f.Type
	f.Bitfield = true
	f.BitWidth = width
	if !ft.Kind.IsInteger() && ft.Kind != Enumeration {
		return &LayoutError{Pos: f.Pos, Decl: what, Reason: "bitfield of non-integer type " + ft.Spelling()}
	}
	if f.Aligned != 0 {
		return &LayoutError{Pos: f.Pos, Decl: what, Reason: "aligned attribute on a bitfield is not modelled"}
	}
	unit := ft.Align * 8
	s.start()
	if width == 0 {
		if r.Packed {
			return &LayoutError{Pos: f.Pos, Decl: what, Reason: "zero-width bitfield in a packed record is not modelled"}
		}
		// ':0' moves to the next unit of its type and does not add
		// to the record's alignment.
		s.bit = alignUp(s.bit, unit)
		f.BitOffset = s.bit
		return nil
	}
	if !r.Packed && r.Pack == 0 && s.bit/unit != (s.bit+width-1)/unit {
		// It must not straddle a unit of its type (gcc drops the rule
		// under #pragma pack).
		s.bit = alignUp(s.bit, unit)
	}
	f.BitOffset = s.bit
	s.bit += width
	if f.Name != "" && fa > s.align {
		s.align = fa // unnamed bitfields do not align the record
	}
	s.extend()
	return nil
}

// object places a member that is not a bitfield at the next multiple of
// its alignment fa. A flexible or zero-length array has size 0: it takes
// its alignment but no room.
func (s *placement) object(f *Field, fa int64, what string) error {
	s.bit = alignUp(s.start(), fa*8)
	f.BitOffset = s.bit
	if f.Type.Size > maxObjectSize || s.bit/8+f.Type.Size > maxObjectSize {
		return &LayoutError{Pos: f.Pos, Decl: what, Reason: "the record is too large (the model lays out objects under 2^59 bytes)"}
	}
	s.bit += f.Type.Size * 8
	if fa > s.align {
		s.align = fa
	}
	s.extend()
	return nil
}

// finish sets the record's alignment (aligned(N) on the record can only
// raise it) and its size, the extent rounded up to that alignment.
func (s *placement) finish() {
	if s.r.Aligned > s.align {
		s.align = s.r.Aligned
	}
	s.r.Align = s.align
	s.r.Size = alignUp((s.maxBits+7)/8, s.align)
}

// ccLayoutDiffers reports whether cc/v4's own layout of ct differs from
// the model's r: a macro that applies sizeof or offsetof to such a record
// has a value cc computed wrongly. Bitfield offsets are not compared.
func ccLayoutDiffers(r *Record, ct cc.Type, fields []*cc.Field) bool {
	if ct.Size() != r.Size || int64(ct.Align()) != r.Align {
		return true
	}
	for i, f := range r.Fields {
		cf := fields[i]
		if int64(cf.Offset())*8+int64(cf.OffsetBits()) != f.BitOffset && !f.Bitfield || f.Type.Record != nil && f.Type.Record.ccDiffers {
			return true
		}
	}
	return false
}
