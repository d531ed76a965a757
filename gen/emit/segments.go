package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// segmentsFile writes a byte-array type per segment with its size, a
// compile-time layout check and a getter and setter per field and part.
func segmentsFile(p *model.Package, f *jen.File) {
	for _, sg := range p.Segments {
		segmentType(f, sg)
		for _, fd := range sg.Fields {
			accessors(f, sg, fd)
		}
		pairSetters(f, sg)
	}
}

// word32 reports whether fd is a big-endian 32-bit integer without an
// enum type, a member of the segment itself (not of a nested union's
// member, which may overlap its neighbours).
func word32(fd *model.Field) bool {
	return fd.Kind == model.IntField && fd.Int.Bits == 32 && fd.Endian == model.Big && fd.Enum == nil &&
		!strings.Contains(fd.CName, ".")
}

// pairSetters writes a setter for each two adjacent big-endian 32-bit
// fields that fill an aligned 64-bit word (byte_count and lkey of a data
// segment, say): both in one store, where the field setters take two
// (fewer stores per WQE than mlx5dv.h's helpers). A field is in one pair
// at most, taken in order; a union has none.
func pairSetters(f *jen.File, sg *model.Segment) {
	if sg.Union {
		return
	}
	names := map[string]bool{}
	for _, fd := range sg.Fields {
		names[model.Setter(fd.GoName)] = true
	}
	for i := 0; i+1 < len(sg.Fields); i++ {
		a, b := sg.Fields[i], sg.Fields[i+1]
		name := model.Setter(a.GoName + b.GoName)
		if !word32(a) || !word32(b) || a.Offset%8 != 0 || b.Offset != a.Offset+4 || names[name] {
			continue
		}
		f.Commentf("%s sets %s to a and %s to b: the big-endian 64-bit word at byte %d, in one store.", name, a.CName, b.CName, a.Offset)
		word := jen.Uint64().Call(jen.Id("a")).Op("<<").Lit(32).Op("|").Uint64().Call(jen.Id("b"))
		f.Func().Params(recv(sg)).Id(name).Params(jen.Id("a"), jen.Id("b").Uint32()).Block(
			store(64, model.Big, span(a.Offset, 8), word))
		f.Line()
		f.Commentf("%sBE sets %s and %s from v, their word in the device's byte order", name, a.CName, b.CName)
		f.Comment("(ToBE64(a<<32 | b), converted once for many stores).")
		f.Func().Params(recv(sg)).Id(name + "BE").Params(jen.Id("v").Id("BE64")).Block(
			jen.Qual(binaryPkg, "NativeEndian").Dot("PutUint64").Call(span(a.Offset, 8), jen.Uint64().Call(jen.Id("v"))))
		f.Line()
		i++
	}
}

func segDoc(sg *model.Segment) string {
	kind := "struct"
	if sg.Union {
		kind = "union"
	}
	where := sg.Src.Header.File
	if sg.Private != "" {
		where = fmt.Sprintf("rdma-core's %s, not in the public header; laid out in %s", sg.Private, sg.Src.Spec.File)
	}
	doc := fmt.Sprintf("%s is the %d bytes of %s %s (%s).", sg.GoName, sg.Size, kind, sg.CName, where)
	if sg.Doc != "" {
		doc += "\n" + docLines(sg.Doc)
	}
	if len(sg.Omitted) > 0 {
		doc += fmt.Sprintf("\nThe zero-length array %s that follows it in C is not part of the type.", strings.Join(sg.Omitted, ", "))
	}
	return doc
}

func segmentType(f *jen.File, sg *model.Segment) {
	size := sg.SizeName()
	comment(f, segDoc(sg))
	f.Type().Id(sg.GoName).Index(jen.Id(size)).Byte()
	f.Line()
	f.Commentf("%s is sizeof(%s %s).", size, map[bool]string{true: "union", false: "struct"}[sg.Union], sg.CName)
	f.Const().Id(size).Op("=").Lit(sg.Size)
	f.Line()
	// The layout this code was generated with: the stringer trick makes
	// the build fail if the size or a nested segment's size moves.
	checks := []jen.Code{
		jen.Var().Id("x").Index(jen.Lit(1)).Struct(),
		jen.Id("_").Op("=").Id("x").Index(jen.Id(size).Op("-").Lit(sg.Size)),
	}
	for _, fd := range sg.Fields {
		if fd.Kind == model.NestedField {
			checks = append(checks, jen.Id("_").Op("=").Id("x").Index(jen.Id(fd.Nested.SizeName()).Op("-").Lit(fd.Nested.Size)))
		}
	}
	f.Func().Id("_").Params().Block(checks...)
	f.Line()
	f.Commentf("CName returns %q.", sg.CName)
	f.Func().Params(jen.Op("*").Id(sg.GoName)).Id("CName").Params().String().Block(jen.Return(jen.Lit(sg.CName)))
	f.Line()
}

// span renders s[off:off+n].
func span(off, n int) jen.Code {
	return jen.Id("s").Index(jen.Lit(off), jen.Lit(off+n))
}

func endianQual(e model.Endian) jen.Code {
	switch e {
	case model.Little:
		return jen.Qual(binaryPkg, "LittleEndian")
	case model.Native:
		return jen.Qual(binaryPkg, "NativeEndian")
	}
	return jen.Qual(binaryPkg, "BigEndian")
}

// load renders the expression reading an integer of bits at b (for a
// byte, b is the byte itself). Big-endian values go through BEn, whose
// conversion is a single byte swap on little-endian hosts.
func load(bits int, e model.Endian, b jen.Code) jen.Code {
	switch {
	case bits == 8:
		return b
	case e == model.Big:
		return jen.Id(fmt.Sprintf("BE%d", bits)).Call(jen.Qual(binaryPkg, "NativeEndian").Dot(fmt.Sprintf("Uint%d", bits)).Call(b)).Dot("Value").Call()
	}
	return jen.Add(endianQual(e)).Dot(fmt.Sprintf("Uint%d", bits)).Call(b)
}

// store renders the statement writing v, an integer of bits, at b.
func store(bits int, e model.Endian, b, v jen.Code) jen.Code {
	switch {
	case bits == 8:
		return jen.Add(b).Op("=").Add(v)
	case e == model.Big:
		return jen.Qual(binaryPkg, "NativeEndian").Dot(fmt.Sprintf("PutUint%d", bits)).Call(b,
			jen.Id(fmt.Sprintf("uint%d", bits)).Call(jen.Id(fmt.Sprintf("ToBE%d", bits)).Call(v)))
	}
	return jen.Add(endianQual(e)).Dot(fmt.Sprintf("PutUint%d", bits)).Call(b, v)
}

// at renders the bytes of an integer field: s[off] for a byte, else
// s[off:off+n].
func at(off, bits int) jen.Code {
	if bits == 8 {
		return jen.Id("s").Index(jen.Lit(off))
	}
	return span(off, bits/8)
}

func recv(sg *model.Segment) jen.Code { return jen.Id("s").Op("*").Id(sg.GoName) }

func cType(fd *model.Field) string {
	switch fd.Kind {
	case model.IntField:
		return fd.Int.String()
	case model.IntArray:
		return fmt.Sprintf("%d x %s", fd.Len, fd.Int)
	case model.BytesField:
		return fmt.Sprintf("%d bytes", fd.Len)
	}
	return fd.Nested.CName
}

func endianName(fd *model.Field) string {
	if fd.Kind != model.IntField && fd.Kind != model.IntArray || fd.Int.Bits == 8 {
		return ""
	}
	switch fd.Endian {
	case model.Little:
		return "little-endian "
	case model.Native:
		return "host-order "
	}
	return "big-endian "
}

func accessors(f *jen.File, sg *model.Segment, fd *model.Field) {
	name := fd.GoName
	doc := fmt.Sprintf("%s returns %s, the %s%s at byte %d.", name, fd.CName, endianName(fd), cType(fd), fd.Offset)
	if fd.Doc != "" {
		doc += "\n" + docLines(fd.Doc)
	}
	switch fd.Kind {
	case model.IntField:
		valType := intType(fd.Int)
		get := load(fd.Int.Bits, fd.Endian, at(fd.Offset, fd.Int.Bits))
		var put jen.Code = jen.Id("v")
		if fd.Enum != nil {
			valType = jen.Id(fd.Enum.GoName)
			get = jen.Id(fd.Enum.GoName).Call(get)
			put = jen.Add(intType(fd.Int)).Call(jen.Id("v"))
		}
		comment(f, doc)
		f.Func().Params(recv(sg)).Id(name).Params().Add(valType).Block(jen.Return(get))
		f.Line()
		f.Commentf("Set%s sets %s.", name, fd.CName)
		f.Func().Params(recv(sg)).Id(model.Setter(name)).Params(jen.Id("v").Add(valType)).Block(
			store(fd.Int.Bits, fd.Endian, at(fd.Offset, fd.Int.Bits), put))
		f.Line()
		if fd.Endian == model.Big && fd.Int.Bits > 8 && fd.Enum == nil {
			wireAccessors(f, sg, fd)
		}
		for _, pt := range fd.Parts {
			partAccessors(f, sg, fd, pt)
		}
	case model.IntArray:
		n := fd.Int.Bits / 8
		// Slicing the field's array panics for i out of range, so an
		// element access never strays into the next field.
		arr := jen.Parens(jen.Op("*").Index(jen.Lit(fd.Size())).Byte()).Call(span(fd.Offset, fd.Size()))
		elem := jen.Add(arr).Index(jen.Lit(n).Op("*").Id("i"), jen.Lit(n).Op("*").Id("i").Op("+").Lit(n))
		if n == 1 {
			elem = jen.Add(arr).Index(jen.Id("i"))
		}
		comment(f, strings.Replace(doc, " returns "+fd.CName, " returns element i of "+fd.CName, 1))
		f.Func().Params(recv(sg)).Id(name).Params(jen.Id("i").Int()).Add(intType(fd.Int)).Block(
			jen.Return(load(fd.Int.Bits, fd.Endian, elem)))
		f.Line()
		f.Commentf("Set%s sets element i of %s.", name, fd.CName)
		f.Func().Params(recv(sg)).Id(model.Setter(name)).Params(jen.Id("i").Int(), jen.Id("v").Add(intType(fd.Int))).Block(
			store(fd.Int.Bits, fd.Endian, elem, jen.Id("v")))
		f.Line()
	case model.BytesField:
		comment(f, strings.Replace(doc, " returns ", " returns a pointer to ", 1))
		f.Func().Params(recv(sg)).Id(name).Params().Op("*").Index(jen.Lit(fd.Len)).Byte().Block(
			jen.Return(jen.Parens(jen.Op("*").Index(jen.Lit(fd.Len)).Byte()).Call(span(fd.Offset, fd.Len))))
		f.Line()
		f.Commentf("Set%s sets %s.", name, fd.CName)
		f.Func().Params(recv(sg)).Id(model.Setter(name)).Params(jen.Id("v").Index(jen.Lit(fd.Len)).Byte()).Block(
			jen.Copy(span(fd.Offset, fd.Len), jen.Id("v").Index(jen.Op(":"))))
		f.Line()
	case model.NestedField:
		t := fd.Nested.GoName
		comment(f, strings.Replace(doc, " returns ", " returns a view of ", 1))
		f.Func().Params(recv(sg)).Id(name).Params().Op("*").Id(t).Block(
			jen.Return(jen.Parens(jen.Op("*").Id(t)).Call(span(fd.Offset, fd.Size()))))
		f.Line()
		f.Commentf("Set%s sets %s.", name, fd.CName)
		f.Func().Params(recv(sg)).Id(model.Setter(name)).Params(jen.Id("v").Op("*").Id(t)).Block(
			jen.Op("*").Id("s").Dot(name).Call().Op("=").Op("*").Id("v"))
		f.Line()
	}
}

func partAccessors(f *jen.File, sg *model.Segment, fd *model.Field, pt *model.Part) {
	valType := intType(pt.Type)
	field := jen.Id("s").Dot(fd.GoName).Call()
	var raw jen.Code = field
	if fd.Enum != nil {
		raw = jen.Add(intType(fd.Int)).Call(field)
	}
	shifted := jen.Add(raw)
	if pt.Shift > 0 {
		// Shift in 64 bits: Go 1.26 on ppc64/ppc64le compiles
		// uint16(uint32 >> n) to a 24-bit mask even with the & below
		// (TestPartShiftPPC64 in generated/mlx5dv).
		shifted = jen.Parens(jen.Uint64().Call(raw).Op(">>").Lit(pt.Shift))
	}
	get := jen.Add(intType(pt.Type)).Call(jen.Add(shifted).Op("&").Add(mask(pt.Width)))
	var in jen.Code = jen.Id("v")
	if pt.Enum != nil {
		valType = jen.Id(pt.Enum.GoName)
		get = jen.Id(pt.Enum.GoName).Call(get)
	}
	in = jen.Add(intType(fd.Int)).Call(jen.Id("v"))
	doc := fmt.Sprintf("%s returns %s, bits %d..%d of %s.", pt.GoName, pt.Name, pt.Shift, pt.Shift+pt.Width-1, fd.CName)
	if pt.Doc != "" {
		doc += "\n" + docLines(pt.Doc)
	}
	comment(f, doc)
	f.Func().Params(recv(sg)).Id(pt.GoName).Params().Add(valType).Block(jen.Return(get))
	f.Line()
	// Read-modify-write of the whole field; bits of v above Width are
	// dropped.
	newVal := jen.Add(raw).Op("&^").Parens(jen.Add(mask(pt.Width)).Op("<<").Lit(pt.Shift)).Op("|").
		Parens(jen.Add(in).Op("&").Add(mask(pt.Width))).Op("<<").Lit(pt.Shift)
	if pt.Shift == 0 {
		newVal = jen.Add(raw).Op("&^").Add(mask(pt.Width)).Op("|").Add(in).Op("&").Add(mask(pt.Width))
	}
	var set jen.Code = jen.Id("s").Dot(model.Setter(fd.GoName)).Call(newVal)
	if fd.Enum != nil {
		set = jen.Id("s").Dot(model.Setter(fd.GoName)).Call(jen.Id(fd.Enum.GoName).Call(newVal))
	}
	f.Commentf("Set%s sets bits %d..%d of %s to v; bits of v above them are dropped.", pt.GoName, pt.Shift, pt.Shift+pt.Width-1, fd.CName)
	f.Func().Params(recv(sg)).Id(model.Setter(pt.GoName)).Params(jen.Id("v").Add(valType)).Block(set)
	f.Line()
}

// wireAccessors lets a caller store a big-endian field from a value it
// converted once (with ToBE16/32/64): Go does not hoist byte swaps out of
// loops, so a hot loop stores lkeys, rkeys and qpn_ds words it swapped up
// front, as C's optimiser would.
func wireAccessors(f *jen.File, sg *model.Segment, fd *model.Field) {
	be := fmt.Sprintf("BE%d", fd.Int.Bits)
	native := jen.Qual(binaryPkg, "NativeEndian")
	b := at(fd.Offset, fd.Int.Bits)
	f.Commentf("%sBE returns %s as stored, in the device's byte order.", fd.GoName, fd.CName)
	f.Func().Params(recv(sg)).Id(model.WireName(fd.GoName)).Params().Id(be).Block(
		jen.Return(jen.Id(be).Call(jen.Add(native).Dot(fmt.Sprintf("Uint%d", fd.Int.Bits)).Call(b))))
	f.Line()
	f.Commentf("Set%sBE stores v, already in the device's byte order, into %s.", fd.GoName, fd.CName)
	f.Func().Params(recv(sg)).Id(model.Setter(model.WireName(fd.GoName))).Params(jen.Id("v").Id(be)).Block(
		jen.Add(native).Dot(fmt.Sprintf("PutUint%d", fd.Int.Bits)).Call(b, jen.Add(jen.Id(fmt.Sprintf("uint%d", fd.Int.Bits))).Call(jen.Id("v"))))
	f.Line()
}
