package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// mirrorsFile writes a Go struct with the exact C layout for every struct
// of spec/api.
func mirrorsFile(p *model.Package, f *jen.File) {
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

func mirrorType(f *jen.File, m *model.Mirror) {
	doc := fmt.Sprintf("%s mirrors struct %s (%s): %d bytes, aligned to %d, laid out as C lays it out.",
		m.GoName, m.CName, m.File, m.Size, m.Align)
	if m.Man != "" {
		doc += " See " + m.Man + "."
	}
	if m.Doc != "" {
		doc += "\n" + m.Doc
	}
	comment(f, doc)
	var fields []jen.Code
	if m.GoAlign < m.Align {
		// Nothing in the Go struct needs C's alignment (a union kept as
		// bytes): a zero-size field of that alignment supplies it.
		fields = append(fields, jen.Id("_").Index(jen.Lit(0)).Id(fmt.Sprintf("uint%d", m.Align*8)))
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
	if m.Size > off {
		fields = append(fields, jen.Id("_").Index(jen.Lit(int(m.Size-off))).Byte())
	}
	f.Type().Id(m.GoName).Struct(fields...)
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
		f.Func().Params(recv).Id(model.Setter(u.GoName)).Params(jen.Id("p").Add(t)).Block(
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
			f.Func().Params(recv).Id(model.Setter(u.GoName)).Params(jen.Id("v").Add(t)).Block(
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
