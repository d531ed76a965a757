package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/vocab"
)

// funcsFile writes Func, the functions of the API a RuleError names, and
// QPType; the table the work-request checker runs on is in the tables
// package (tablesfuncs.go).
func funcsFile(p *model.Package, f *jen.File) {
	a := p.API
	comment(f, "Func names a function of the API described in spec/api.")
	f.Type().Id("Func").Uint16()
	f.Line()
	var ids []jen.Code
	for _, fn := range a.Funcs {
		ids = append(ids, jen.Id(fn.GoName).Id("Func").Op("=").Lit(fn.ID).Comment(fn.Name))
	}
	ids = append(ids, jen.Id("NumFuncs").Id("Func").Op("=").Lit(a.NumFuncs).Comment("the number of Func values: the spec's functions, also those this release lacks"))
	f.Const().Defs(ids...)
	f.Line()
	comment(f, "funcNames are the C names of the functions, indexed by Func.")
	f.Var().Id("funcNames").Op("=").Index(jen.Id("NumFuncs")).String().ValuesFunc(func(g *jen.Group) {
		for _, fn := range a.Funcs {
			g.Line().Id(fn.GoName).Op(":").Lit(fn.Name)
		}
		g.Line()
	})
	f.Line()
	comment(f, "String returns the function's C name.")
	f.Func().Params(jen.Id("f").Id("Func")).Id("String").Params().String().Block(
		jen.If(jen.Id("f").Op(">=").Id("NumFuncs").Op("||").Id("funcNames").Index(jen.Id("f")).Op("==").Lit("")).Block(jen.Return(jen.Id("formatUnknown").Call(jen.Lit("Func"), jen.Uint64().Call(jen.Id("f"))))),
		jen.Return(jen.Id("funcNames").Index(jen.Id("f"))),
	)
	f.Line()
	qpTypes(f)
}

// qpTypes writes QPType, a bit per QP type of vocab.QPTypes.
func qpTypes(f *jen.File) {
	comment(f, "QPType is a set of QP types.")
	f.Type().Id("QPType").Uint8()
	f.Line()
	var qp []jen.Code
	for i, q := range vocab.QPTypes {
		c := jen.Id(model.QPTypeName(q))
		if i == 0 {
			c = c.Id("QPType").Op("=").Lit(1).Op("<<").Iota()
		}
		qp = append(qp, c.Comment(q))
	}
	f.Const().Defs(qp...)
	f.Line()
	comment(f, "String names the QP types of the set, joined by |.")
	f.Func().Params(jen.Id("t").Id("QPType")).Id("String").Params().String().BlockFunc(func(g *jen.Group) {
		var names []jen.Code
		for _, q := range vocab.QPTypes {
			names = append(names, jen.Values(jen.Uint64().Call(jen.Id(model.QPTypeName(q))), jen.Lit(q)))
		}
		g.Return(jen.Id("formatFlags").Call(jen.Uint64().Call(jen.Id("t")), jen.Index().Id("flagName").Values(names...)))
	})
	f.Line()
}
