package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// fieldsFile writes, per segment, a struct holding every field as a value,
// Fields and SetFields to convert, and String to print the fields by name.
func fieldsFile(p *model.Package, f *jen.File) {
	for _, sg := range p.Segments {
		valueStruct(f, sg)
		stringMethod(f, sg)
	}
}

func fieldType(fd *model.Field) jen.Code {
	switch fd.Kind {
	case model.IntField:
		if fd.Enum != nil {
			return jen.Id(fd.Enum.GoName)
		}
		return intType(fd.Int)
	case model.IntArray:
		return jen.Index(jen.Lit(fd.Len)).Add(intType(fd.Int))
	case model.BytesField:
		return jen.Index(jen.Lit(fd.Len)).Byte()
	}
	return jen.Id(fd.Nested.FieldsName())
}

func valueStruct(f *jen.File, sg *model.Segment) {
	typ := sg.FieldsName()
	var members []jen.Code
	for _, fd := range sg.Fields {
		members = append(members, jen.Id(fd.GoName).Add(fieldType(fd)).Comment(fd.CName))
	}
	f.Commentf("%s holds every field of %s as a value.", typ, sg.CName)
	if sg.Union {
		comment(f, "The fields of a union overlap: SetFields writes them in order, so the last wins.")
	}
	f.Type().Id(typ).Struct(members...)
	f.Line()

	var get, set []jen.Code
	get = append(get, jen.Var().Id("v").Id(typ))
	for _, fd := range sg.Fields {
		switch fd.Kind {
		case model.IntField:
			get = append(get, jen.Id("v").Dot(fd.GoName).Op("=").Id("s").Dot(fd.GoName).Call())
			set = append(set, jen.Id("s").Dot(model.Setter(fd.GoName)).Call(jen.Id("v").Dot(fd.GoName)))
		case model.IntArray:
			get = append(get, jen.For(jen.Id("i").Op(":=").Range().Id("v").Dot(fd.GoName)).Block(
				jen.Id("v").Dot(fd.GoName).Index(jen.Id("i")).Op("=").Id("s").Dot(fd.GoName).Call(jen.Id("i"))))
			set = append(set, jen.For(jen.List(jen.Id("i"), jen.Id("x")).Op(":=").Range().Id("v").Dot(fd.GoName)).Block(
				jen.Id("s").Dot(model.Setter(fd.GoName)).Call(jen.Id("i"), jen.Id("x"))))
		case model.BytesField:
			get = append(get, jen.Id("v").Dot(fd.GoName).Op("=").Op("*").Id("s").Dot(fd.GoName).Call())
			set = append(set, jen.Id("s").Dot(model.Setter(fd.GoName)).Call(jen.Id("v").Dot(fd.GoName)))
		case model.NestedField:
			get = append(get, jen.Id("v").Dot(fd.GoName).Op("=").Id("s").Dot(fd.GoName).Call().Dot("Fields").Call())
			set = append(set, jen.Id("s").Dot(fd.GoName).Call().Dot("SetFields").Call(jen.Op("&").Id("v").Dot(fd.GoName)))
		}
	}
	get = append(get, jen.Return(jen.Id("v")))
	f.Commentf("Fields reads every field of the segment.")
	f.Func().Params(recv(sg)).Id("Fields").Params().Id(typ).Block(get...)
	f.Line()
	f.Commentf("SetFields writes every field of the segment.")
	f.Func().Params(recv(sg)).Id("SetFields").Params(jen.Id("v").Op("*").Id(typ)).Block(set...)
	f.Line()
}

// stringMethod prints name{field: value, ...}: integers in hex, with their
// parts in parentheses; enum-typed values by name; byte arrays in hex.
func stringMethod(f *jen.File, sg *model.Segment) {
	b := jen.Id("b")
	var body []jen.Code
	body = append(body, jen.Id("b").Op(":=").Make(jen.Index().Byte(), jen.Lit(0), jen.Lit(64+48*len(sg.Fields))))
	body = append(body, appendStr(sg.CName+"{"))
	for i, fd := range sg.Fields {
		sep := ", "
		if i == 0 {
			sep = ""
		}
		body = append(body, appendStr(sep+fd.CName+": "))
		switch fd.Kind {
		case model.IntField:
			body = append(body, appendValue(jen.Id("s").Dot(fd.GoName).Call(), fd.Enum)...)
			for j, pt := range fd.Parts {
				open := ", "
				if j == 0 {
					open = " ("
				}
				body = append(body, appendStr(open+pt.Name+": "))
				body = append(body, appendValue(jen.Id("s").Dot(pt.GoName).Call(), pt.Enum)...)
			}
			if len(fd.Parts) > 0 {
				body = append(body, appendStr(")"))
			}
		case model.IntArray:
			body = append(body, appendStr("["),
				jen.For(jen.Id("i").Op(":=").Lit(0).Op(";").Id("i").Op("<").Lit(fd.Len).Op(";").Id("i").Op("++")).Block(
					jen.If(jen.Id("i").Op(">").Lit(0)).Block(jen.Id("b").Op("=").Append(b, jen.LitRune(' '))),
					jen.Id("b").Op("=").Id("appendHex").Call(b, jen.Uint64().Call(jen.Id("s").Dot(fd.GoName).Call(jen.Id("i")))),
				),
				appendStr("]"))
		case model.BytesField:
			body = append(body, jen.Id("b").Op("=").Id("appendBytes").Call(b, jen.Id("s").Dot(fd.GoName).Call().Index(jen.Op(":"))))
		case model.NestedField:
			body = append(body, jen.Id("b").Op("=").Append(b, jen.Id("s").Dot(fd.GoName).Call().Dot("String").Call().Op("...")))
		}
	}
	body = append(body, appendStr("}"), jen.Return(jen.String().Call(b)))
	f.Commentf("String prints every field of %s by name.", sg.CName)
	f.Func().Params(recv(sg)).Id("String").Params().String().Block(body...)
	f.Line()
}

func appendStr(s string) jen.Code {
	return jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit(s).Op("..."))
}

func appendValue(v jen.Code, e *model.Enum) []jen.Code {
	if e != nil {
		return []jen.Code{jen.Id("b").Op("=").Append(jen.Id("b"), jen.Add(v).Dot("String").Call().Op("..."))}
	}
	return []jen.Code{jen.Id("b").Op("=").Id("appendHex").Call(jen.Id("b"), jen.Uint64().Call(v))}
}
