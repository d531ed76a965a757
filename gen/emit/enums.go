package emit

import (
	"fmt"

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
				if m.Meaning != "" {
					defs = append(defs, jen.Comment(m.Name+": "+m.Meaning))
				}
				defs = append(defs, jen.Id(m.Name).Id(e.GoName).Op("=").Add(num(m.Value.Int64(), m.Value.Signed)))
			}
			comment(f, "The members of "+e.CName+".")
			f.Const().Defs(defs...)
			f.Line()
		}
		if e.Flags {
			flagsString(f, e)
		} else {
			valueString(f, e)
			valueMeaning(f, e)
		}
	}
}

func flagsString(f *jen.File, e *model.Enum) {
	f.Var().Id(e.NamesVar()).Op("=").Index().Id("flagName").ValuesFunc(func(g *jen.Group) {
		for _, m := range e.Members {
			g.Line().Values(jen.Uint64().Call(jen.Id(m.Name)), jen.Lit(m.Name))
		}
		g.Line()
	})
	f.Line()
	f.Commentf("String prints the flags joined by |, unknown bits in hex.")
	f.Func().Params(jen.Id("v").Id(e.GoName)).Id("String").Params().String().Block(
		jen.Return(jen.Id("formatFlags").Call(jen.Uint64().Call(jen.Id("v")), jen.Id(e.NamesVar()))),
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

// valueMeaning writes Meaning for a value enum whose spec gives members a
// meaning: a raw value (an error CQE's syndrome) can then explain itself
// without the reader looking it up.
func valueMeaning(f *jen.File, e *model.Enum) {
	var cases []jen.Code
	seen := map[uint64]bool{}
	for _, m := range e.Members {
		if seen[m.Value.Bits] {
			continue // an alias: the first name wins, as in String
		}
		seen[m.Value.Bits] = true
		if m.Meaning != "" {
			cases = append(cases, jen.Case(jen.Id(m.Name)).Block(jen.Return(jen.Lit(m.Meaning))))
		}
	}
	if len(cases) == 0 {
		return
	}
	f.Comment("Meaning says in one line what the value means, or \"\" for a value the spec")
	f.Comment("gives no meaning.")
	f.Func().Params(jen.Id("v").Id(e.GoName)).Id("Meaning").Params().String().Block(
		jen.Switch(jen.Id("v")).Block(cases...),
		jen.Return(jen.Lit("")),
	)
	f.Line()
}
