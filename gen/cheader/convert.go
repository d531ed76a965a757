package cheader

import (
	"fmt"
	"strings"

	"modernc.org/cc/v4"
	"modernc.org/token"
)

type tokenPosition = token.Position

var scalarKinds = map[cc.Kind]Kind{
	cc.Void: Void, cc.Bool: Bool, cc.Char: Char, cc.SChar: SChar, cc.UChar: UChar,
	cc.Short: Short, cc.UShort: UShort, cc.Int: Int, cc.UInt: UInt, cc.Long: Long,
	cc.ULong: ULong, cc.LongLong: LongLong, cc.ULongLong: ULongLong, cc.Int128: Int128,
	cc.UInt128: UInt128, cc.Float: Float, cc.Double: Double, cc.LongDouble: LongDouble,
	cc.Float128: Float128, cc.Float32: Float, cc.Float64: Double, cc.Float64x: LongDouble,
	cc.ComplexFloat: Complex, cc.ComplexDouble: Complex, cc.ComplexLongDouble: Complex,
}

// typedefChain follows a typedef name to the typedef names it is defined
// with: __be32 -> [__be32 __u32].
func (p *parser) typedefChain(name string) []string {
	var out []string
	for name != "" && len(out) < 32 {
		out = append(out, name)
		name = p.tdefInner[name]
	}
	return out
}

func endianOf(names []string) Endian {
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "__be"):
			return BigEndian
		case strings.HasPrefix(n, "__le"):
			return LittleEndian
		}
	}
	return Host
}

// typ converts a cc type as used by a declaration at pos (what names the
// declaration in messages) into the model's type.
func (p *parser) typ(t cc.Type, pos Pos, what string) (*Type, error) {
	out, err := p.structural(t, pos, what)
	if err != nil {
		return nil, err
	}
	if d := t.Typedef(); d != nil && d.Name() != "" {
		c := *out
		c.Typedefs = p.typedefChain(d.Name())
		c.Name = c.Typedefs[0]
		c.Endian = endianOf(c.Typedefs)
		// aligned(N) on a typedef sets the alignment (gcc lets a typedef
		// both raise and lower it); inner typedefs apply first.
		for i := len(c.Typedefs) - 1; i >= 0; i-- {
			a := p.tdefAttrs[c.Typedefs[i]]
			if a.has("mode") || a.has("vector_size") && c.Kind != Vector {
				return nil, &LayoutError{Pos: p.tdefPos[c.Typedefs[i]], Decl: "typedef " + c.Typedefs[i], Reason: "mode and vector_size attributes are not modelled"}
			}
			if a.has("packed") {
				return nil, &LayoutError{Pos: p.tdefPos[c.Typedefs[i]], Decl: "typedef " + c.Typedefs[i], Reason: "packed on a typedef is not modelled"}
			}
			if n := a.aligned(); n != 0 {
				if n < 0 {
					return nil, &LayoutError{Pos: p.tdefPos[c.Typedefs[i]], Decl: "typedef " + c.Typedefs[i], Reason: "aligned without an argument is not modelled"}
				}
				if why := badAlign(n); why != "" {
					return nil, &LayoutError{Pos: p.tdefPos[c.Typedefs[i]], Decl: "typedef " + c.Typedefs[i], Reason: why}
				}
				c.Align = n
			}
		}
		out = &c
	}
	if a := t.Attributes(); a != nil && (a.IsConst() || a.IsVolatile()) {
		c := *out
		c.Const, c.Volatile = a.IsConst(), a.IsVolatile()
		out = &c
	}
	return out, nil
}

func (p *parser) structural(t cc.Type, pos Pos, what string) (*Type, error) {
	if vs := t.VectorSize(); vs > 0 {
		return &Type{Kind: Vector, Size: vs, Align: int64(t.Align()), Elem: &Type{Kind: scalarKinds[t.Kind()], Size: t.Size(), Align: int64(t.Align())}}, nil
	}
	switch x := t.(type) {
	case *cc.PointerType:
		elem, err := p.typ(x.Elem(), pos, what)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: Pointer, Size: x.Size(), Align: int64(x.Align()), Elem: elem}, nil
	case *cc.ArrayType:
		elem, err := p.typ(x.Elem(), pos, what)
		if err != nil {
			return nil, err
		}
		if x.IsVLA() {
			return nil, &LayoutError{Pos: pos, Decl: what, Reason: "variable length array"}
		}
		n := x.Len()
		size := int64(0)
		if n > 0 {
			if elem.Size > 0 && n > maxObjectSize/elem.Size {
				return nil, &LayoutError{Pos: pos, Decl: what, Reason: fmt.Sprintf("array of %d elements of %d bytes is too large (the model lays out objects under 2^59 bytes)", n, elem.Size)}
			}
			size = n * elem.Size
		} else if n < 0 {
			n = -1
		}
		return &Type{Kind: Array, Size: size, Align: elem.Align, Elem: elem, Len: n}, nil
	case *cc.StructType, *cc.UnionType:
		r, err := p.record(t, nil)
		if err != nil {
			return nil, err
		}
		k := Struct
		if t.Kind() == cc.Union {
			k = Union
		}
		return &Type{Kind: k, Size: r.Size, Align: r.Align, Record: r}, nil
	case *cc.EnumType:
		e, err := p.enum(x)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: Enumeration, Size: e.Underlying.Size, Align: e.Underlying.Align, Enum: e}, nil
	case *cc.FunctionType:
		ft, err := p.funcType(x, pos, what)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: Function, Size: 1, Align: 1, Func: ft}, nil
	case *cc.PredefinedType:
		k, ok := scalarKinds[x.Kind()]
		if !ok {
			return nil, &LayoutError{Pos: pos, Decl: what, Reason: fmt.Sprintf("type %s is not modelled", x)}
		}
		size, align := x.Size(), int64(x.Align())
		if k == Void {
			size, align = 1, 1
		}
		return &Type{Kind: k, Size: size, Align: align}, nil
	}
	return nil, &LayoutError{Pos: pos, Decl: what, Reason: fmt.Sprintf("type %s (%T) is not modelled", t, t)}
}

func (p *parser) funcType(ft *cc.FunctionType, pos Pos, what string) (*FuncType, error) {
	res, err := p.typ(ft.Result(), pos, what)
	if err != nil {
		return nil, err
	}
	out := &FuncType{Result: res, Variadic: ft.IsVariadic()}
	for _, prm := range ft.Parameters() {
		pt, err := p.typ(prm.Type(), pos, what)
		if err != nil {
			return nil, err
		}
		if pt.Kind == Void && prm.Name() == "" {
			continue // f(void)
		}
		out.Params = append(out.Params, &Param{Name: prm.Name(), Type: pt})
	}
	return out, nil
}

func ccTag(t cc.Type) string {
	switch x := t.(type) {
	case *cc.StructType:
		tk := x.Tag()
		return tk.SrcStr()
	case *cc.UnionType:
		tk := x.Tag()
		return tk.SrcStr()
	case *cc.EnumType:
		tk := x.Tag()
		return tk.SrcStr()
	}
	return ""
}

// record returns the model of a struct or union type, laying it out on
// first use. spec is its definition when the caller has it.
func (p *parser) record(t cc.Type, spec *cc.StructOrUnionSpecifier) (*Record, error) {
	kind := Struct
	if t.Kind() == cc.Union {
		kind = Union
	}
	tag := ccTag(t)
	if spec == nil {
		spec = p.recSpecs[t]
	}
	if spec == nil && tag == "" && t.Typedef() != nil {
		spec = p.tdefSpec[t.Typedef().Name()]
	}
	key := kind.String() + " " + tag
	if tag == "" {
		if spec == nil {
			return nil, fmt.Errorf("internal error: anonymous %s %s has no definition in the syntax tree", kind, t)
		}
		key = fmt.Sprintf("%s@%p", kind, spec)
	}
	if r := p.records[key]; r != nil {
		return r, nil
	}
	if spec == nil && tag != "" {
		// A reference to a tag: find its definition, if the translation
		// unit has one.
		for ct, s := range p.recSpecs {
			if ct.Kind() == t.Kind() && ccTag(ct) == tag {
				spec = s
				break
			}
		}
	}
	r := &Record{Kind: kind, Tag: tag}
	p.records[key] = r
	if spec == nil {
		r.Incomplete = true
		r.External = true
		return r, nil
	}
	r.Pos = p.pos(spec)
	r.External = !p.isRDMA(spec.Position())
	p.recOrder = append(p.recOrder, r)
	if err := p.layout(r, spec, spec.Type()); err != nil {
		return nil, err
	}
	return r, nil
}

// member is a field's declaration as the syntax tree has it.
type member struct {
	pos       Pos
	attrs     attrs
	alignas   []*cc.AlignmentSpecifier
	baseConst bool // "const" among the specifiers: cc/v4 drops it below a pointer
}

// hasConst reports whether a specifier-qualifier list says const.
func hasConst(l *cc.SpecifierQualifierList) bool {
	for ; l != nil; l = l.SpecifierQualifierList {
		if q := l.TypeQualifier; q != nil && q.Case == cc.TypeQualifierConst {
			return true
		}
	}
	return false
}

// withBaseConst returns t with the type at the bottom of its pointer and
// array chain marked const.
func withBaseConst(t *Type) *Type {
	c := *t
	switch t.Kind {
	case Pointer, Array:
		c.Elem = withBaseConst(t.Elem)
	default:
		c.Const = true
	}
	return &c
}

// members lists the declarations of a record's fields in order, one per
// cc field: one per declarator, one for an anonymous struct or union.
func (p *parser) members(spec *cc.StructOrUnionSpecifier) []member {
	var out []member
	for l := spec.StructDeclarationList; l != nil; l = l.StructDeclarationList {
		sd := l.StructDeclaration
		if sd == nil || sd.Case != cc.StructDeclarationDecl {
			continue
		}
		a, alignas := declAttrs(sd)
		bc := hasConst(sd.SpecifierQualifierList)
		if sd.StructDeclaratorList == nil {
			out = append(out, member{pos: p.pos(sd), attrs: a, alignas: alignas, baseConst: bc})
			continue
		}
		for dl := sd.StructDeclaratorList; dl != nil; dl = dl.StructDeclaratorList {
			m := member{pos: p.pos(sd), attrs: a, alignas: alignas, baseConst: bc}
			if d := dl.StructDeclarator; d != nil {
				m.pos = p.pos(d)
			}
			out = append(out, m)
		}
	}
	return out
}

func alignUp(n, a int64) int64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

// enum returns the model of an enum type.
func (p *parser) enum(t *cc.EnumType) (*Enum, error) {
	tag := ccTag(t)
	key := "enum " + tag
	if tag == "" {
		key = fmt.Sprintf("enum@%p", t)
		if len(t.Enumerators()) > 0 {
			key = fmt.Sprintf("enum@%s", p.tokPos(t.Enumerators()[0].Position()))
		}
	}
	if e := p.enums[key]; e != nil {
		return e, nil
	}
	e := &Enum{Tag: tag}
	p.enums[key] = e
	ut := t.UnderlyingType()
	if ut == nil || t.Size() <= 0 {
		// Declared, never defined: gcc treats it as int-sized.
		e.Underlying = &Type{Kind: UInt, Size: 4, Align: 4}
		e.External = true
		return e, nil
	}
	k := scalarKinds[ut.Kind()]
	if !k.IsInteger() {
		return nil, fmt.Errorf("%s: %s: enum with underlying type %s", p.tokPos(t.Enumerators()[0].Position()), e.CName(), ut)
	}
	e.Underlying = &Type{Kind: k, Size: t.Size(), Align: int64(t.Align())}
	enums := t.Enumerators()
	if len(enums) > 0 {
		e.Pos = p.tokPos(enums[0].Position())
		e.External = !p.isRDMA(enums[0].Position())
		if a := t.Attributes(); a != nil && (a.IsAttrSet("packed") || a.IsAttrSet("__packed__") || a.IsAttrSet("mode") || a.IsAttrSet("__mode__")) {
			return nil, &LayoutError{Pos: e.Pos, Decl: e.CName(), Reason: "packed or mode attribute on an enum is not modelled"}
		}
	}
	var next enumNext
	for _, en := range enums {
		v, err := constValue(en.Value())
		if err != nil {
			return nil, fmt.Errorf("%s: enumerator %s: %v", p.tokPos(en.Position()), en.Token.SrcStr(), err)
		}
		if err := next.check(p, en, v); err != nil {
			return nil, err
		}
		// GNU C gives an enumeration constant type int when its value
		// fits, and the enum's own integer type when it does not.
		et := &Type{Kind: Int, Size: 4, Align: 4}
		if !fitsInt(v) {
			et = e.Underlying
		}
		v.Signed = et.Kind.IsSigned()
		e.Enumerators = append(e.Enumerators, &Enumerator{Pos: p.tokPos(en.Position()), Name: en.Token.SrcStr(), Value: v, Type: et, Enum: e})
	}
	p.enumList = append(p.enumList, e)
	return e, nil
}

func constValue(v cc.Value) (Value, error) {
	switch x := v.(type) {
	case cc.Int64Value:
		return Value{Bits: uint64(x), Signed: true}, nil
	case cc.UInt64Value:
		return Value{Bits: uint64(x)}, nil
	}
	return Value{}, errNotConst
}

// fitsInt reports whether an enumerator value, as cc computed it, is
// representable in int.
func fitsInt(v Value) bool {
	if v.Signed {
		return int64(v.Bits) >= -1<<31 && int64(v.Bits) < 1<<31
	}
	return v.Bits < 1<<31
}

// alignas evaluates _Alignas(N) or _Alignas(type) with the model's own
// alignments.
func (p *parser) alignas(as *cc.AlignmentSpecifier, pos Pos, what string) (int64, error) {
	switch as.Case {
	case cc.AlignmentSpecifierExpr:
		v, err := constValue(as.ConstantExpression.Value())
		if err != nil || v.Int64() <= 0 {
			return 0, &LayoutError{Pos: pos, Decl: what, Reason: "_Alignas without a positive constant"}
		}
		if why := badAlign(v.Int64()); why != "" {
			return 0, &LayoutError{Pos: pos, Decl: what, Reason: why}
		}
		return v.Int64(), nil
	case cc.AlignmentSpecifierType:
		t, err := p.typ(as.TypeName.Type(), pos, what)
		if err != nil {
			return 0, err
		}
		return t.Align, nil
	}
	return 0, &LayoutError{Pos: pos, Decl: what, Reason: "unknown _Alignas form"}
}

// maxObjectSize bounds the objects the model lays out, so that bit offsets
// never overflow.
const maxObjectSize = 1 << 59

// maxAlign is the largest alignment gcc accepts on x86-64 ELF.
const maxAlign = 1 << 28

// badAlign says why n is not an alignment gcc accepts, or "".
func badAlign(n int64) string {
	switch {
	case n <= 0 || n&(n-1) != 0:
		return fmt.Sprintf("alignment %d is not a power of two", n)
	case n > maxAlign:
		return fmt.Sprintf("alignment %d exceeds gcc's maximum of %d", n, maxAlign)
	}
	return ""
}

// memberAttrs applies a member's attributes and _Alignas to f, refusing
// those the model does not lay out.
func (p *parser) memberAttrs(md member, what string, f *Field) error {
	for _, bad := range []string{"mode", "vector_size"} {
		if md.attrs.has(bad) {
			return &LayoutError{Pos: md.pos, Decl: what, Reason: "attribute " + bad + " on a member is not modelled"}
		}
	}
	if md.attrs.has("packed") {
		return &LayoutError{Pos: md.pos, Decl: what, Reason: "packed on a single member is not modelled"}
	}
	if n := md.attrs.aligned(); n != 0 {
		if n < 0 {
			return &LayoutError{Pos: md.pos, Decl: what, Reason: "aligned without an argument"}
		}
		if why := badAlign(n); why != "" {
			return &LayoutError{Pos: md.pos, Decl: what, Reason: why}
		}
		f.Aligned = n
	}
	for _, as := range md.alignas {
		n, err := p.alignas(as, md.pos, what)
		if err != nil {
			return err
		}
		if n > f.Aligned {
			f.Aligned = n
		}
	}
	return nil
}
