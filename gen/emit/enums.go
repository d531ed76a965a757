package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// enumsFile writes a named type per enum with its constants and String.
func enumsFile(p *model.Package, f *jen.File) {
	for _, e := range p.Enums {
		kind := "a value enum"
		if e.Flags {
			kind = "a flag set"
		}
		doc := fmt.Sprintf("%s is %s (%s), %s.", e.GoName, e.CName, e.Src.Header.File, kind)
		if e.Man != "" {
			doc += " See " + e.Man + "."
		}
		if e.Doc != "" {
			doc += "\n" + docLines(e.Doc)
		}
		comment(f, doc)
		f.Type().Id(e.GoName).Add(intType(e.Underlying))
		f.Line()
		if len(e.Members) > 0 {
			var defs []jen.Code
			for _, m := range e.Members {
				defs = append(defs, jen.Id(m.Name).Id(e.GoName).Op("=").Add(num(m.Value.Int64(), m.Value.Signed)))
			}
			f.Const().Defs(defs...)
			f.Line()
		}
		if e.Flags {
			flagsString(f, e)
		} else {
			valueString(f, e)
		}
	}
}

// namesVar is the unexported table of an enum's members.
func namesVar(e *model.Enum) string {
	return strings.ToLower(e.GoName[:1]) + e.GoName[1:] + "Names"
}

func flagsString(f *jen.File, e *model.Enum) {
	f.Var().Id(namesVar(e)).Op("=").Index().Id("flagName").ValuesFunc(func(g *jen.Group) {
		for _, m := range e.Members {
			g.Line().Values(jen.Uint64().Call(jen.Id(m.Name)), jen.Lit(m.Name))
		}
		g.Line()
	})
	f.Line()
	f.Commentf("String prints the flags joined by |, unknown bits in hex.")
	f.Func().Params(jen.Id("v").Id(e.GoName)).Id("String").Params().String().Block(
		jen.Return(jen.Id("formatFlags").Call(jen.Uint64().Call(jen.Id("v")), jen.Id(namesVar(e)))),
	)
	f.Line()
}

func valueString(f *jen.File, e *model.Enum) {
	var cases []jen.Code
	seen := map[uint64]bool{}
	for _, m := range e.Members {
		if seen[m.Value.Bits] {
			continue // an alias: the first name wins
		}
		seen[m.Value.Bits] = true
		cases = append(cases, jen.Case(jen.Id(m.Name)).Block(jen.Return(jen.Lit(m.Name))))
	}
	conv := jen.Id("formatUnknown").Call(jen.Lit(e.GoName), jen.Uint64().Call(jen.Id("v")))
	if e.Underlying.Signed {
		conv = jen.Id("formatUnknownSigned").Call(jen.Lit(e.GoName), jen.Int64().Call(jen.Id("v")))
	}
	f.Commentf("String prints the name of the value, or %s(n) for an unknown one.", e.GoName)
	body := []jen.Code{}
	if len(cases) > 0 {
		body = append(body, jen.Switch(jen.Id("v")).Block(cases...))
	}
	body = append(body, jen.Return(conv))
	f.Func().Params(jen.Id("v").Id(e.GoName)).Id("String").Params().String().Block(body...)
	f.Line()
}

// formatFile writes the helpers the String methods share.
func formatFile(p *model.Package, f *jen.File) {
	comment(f, "flagName is one member of a flag set.")
	f.Type().Id("flagName").Struct(jen.Id("v").Uint64(), jen.Id("n").String())
	f.Line()
	comment(f, "formatFlags prints v as names joined by |: an exact member first (masks and\naliases), else every member whose bits are all set, then the rest in hex.")
	f.Func().Id("formatFlags").Params(jen.Id("v").Uint64(), jen.Id("names").Index().Id("flagName")).String().Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("e")).Op(":=").Range().Id("names")).Block(
			jen.If(jen.Id("e").Dot("v").Op("==").Id("v")).Block(jen.Return(jen.Id("e").Dot("n"))),
		),
		jen.If(jen.Id("v").Op("==").Lit(0)).Block(jen.Return(jen.Lit("0"))),
		jen.Var().Id("b").Index().Byte(),
		jen.Id("rest").Op(":=").Id("v"),
		jen.For(jen.List(jen.Id("_"), jen.Id("e")).Op(":=").Range().Id("names")).Block(
			jen.If(jen.Id("e").Dot("v").Op("!=").Lit(0).Op("&&").Id("rest").Op("&").Id("e").Dot("v").Op("==").Id("e").Dot("v")).Block(
				jen.If(jen.Len(jen.Id("b")).Op(">").Lit(0)).Block(jen.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune('|'))),
				jen.Id("b").Op("=").Append(jen.Id("b"), jen.Id("e").Dot("n").Op("...")),
				jen.Id("rest").Op("&^=").Id("e").Dot("v"),
			),
		),
		jen.If(jen.Id("rest").Op("!=").Lit(0)).Block(
			jen.If(jen.Len(jen.Id("b")).Op(">").Lit(0)).Block(jen.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune('|'))),
			jen.Id("b").Op("=").Id("appendHex").Call(jen.Id("b"), jen.Id("rest")),
		),
		jen.Return(jen.String().Call(jen.Id("b"))),
	)
	f.Line()
	comment(f, "formatUnknown prints a value no member has, as Type(n).")
	f.Func().Id("formatUnknown").Params(jen.Id("typ").String(), jen.Id("v").Uint64()).String().Block(
		jen.Return(jen.Id("typ").Op("+").Lit("(").Op("+").Qual("strconv", "FormatUint").Call(jen.Id("v"), jen.Lit(10)).Op("+").Lit(")")),
	)
	f.Line()
	comment(f, "formatUnknownSigned is formatUnknown for signed enums.")
	f.Func().Id("formatUnknownSigned").Params(jen.Id("typ").String(), jen.Id("v").Int64()).String().Block(
		jen.Return(jen.Id("typ").Op("+").Lit("(").Op("+").Qual("strconv", "FormatInt").Call(jen.Id("v"), jen.Lit(10)).Op("+").Lit(")")),
	)
	f.Line()
	comment(f, "appendHex appends v as 0x followed by lower-case hex digits.")
	f.Func().Id("appendHex").Params(jen.Id("b").Index().Byte(), jen.Id("v").Uint64()).Index().Byte().Block(
		jen.Return(jen.Qual("strconv", "AppendUint").Call(jen.Append(jen.Id("b"), jen.Lit("0x").Op("...")), jen.Id("v"), jen.Lit(16))),
	)
	f.Line()
	for _, bits := range []int{16, 32, 64} {
		be := fmt.Sprintf("BE%d", bits)
		comment(f, fmt.Sprintf("%s is a %d-bit value in the device's byte order (big-endian), as a\nsegment stores it: convert once with To%s, store many times with a\nsegment's Set...BE method.", be, bits, be))
		f.Type().Id(be).Id(fmt.Sprintf("uint%d", bits))
		f.Line()
	}
	comment(f, "appendBytes appends p as lower-case hex.")
	f.Func().Id("appendBytes").Params(jen.Id("b").Index().Byte(), jen.Id("p").Index().Byte()).Index().Byte().Block(
		jen.Return(jen.Qual("encoding/hex", "AppendEncode").Call(jen.Id("b"), jen.Id("p"))),
	)
}

// littleEndianArchs are the GOARCH values whose byte order is little-endian.
const littleEndianArchs = "386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm"

// byteOrderFile writes ToBEn and BEn.Value for little-endian hosts (a byte
// swap) or big-endian ones (nothing); build constraints pick the file.
func byteOrderFile(little bool) func(*model.Package, *jen.File) {
	return func(p *model.Package, f *jen.File) {
		if little {
			f.HeaderComment("//go:build " + littleEndianArchs)
		} else {
			f.HeaderComment("//go:build !(" + littleEndianArchs + ")")
		}
		for _, bits := range []int{16, 32, 64} {
			be := fmt.Sprintf("BE%d", bits)
			u := fmt.Sprintf("uint%d", bits)
			conv := func(v jen.Code) jen.Code { return v }
			if little {
				conv = func(v jen.Code) jen.Code { return jen.Qual("math/bits", fmt.Sprintf("ReverseBytes%d", bits)).Call(v) }
			}
			f.Commentf("To%s converts v to the device's byte order.", be)
			f.Func().Id("To" + be).Params(jen.Id("v").Id(u)).Id(be).Block(jen.Return(jen.Id(be).Call(conv(jen.Id("v")))))
			f.Line()
			f.Commentf("Value converts v back to a host integer.")
			f.Func().Params(jen.Id("v").Id(be)).Id("Value").Params().Id(u).Block(jen.Return(conv(jen.Id(u).Call(jen.Id("v")))))
			f.Line()
		}
	}
}
