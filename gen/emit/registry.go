package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// registryFile writes lookups by C name, for tools and tests (the send
// path uses the types and validators directly).
func registryFile(p *model.Package, f *jen.File) {
	comment(f, "NewMirror returns a pointer to a zero mirror of the C struct named cname, and\nfalse if the spec describes no such struct.")
	f.Func().Id("NewMirror").Params(jen.Id("cname").String()).Params(jen.Any(), jen.Bool()).BlockFunc(func(g *jen.Group) {
		var cases []jen.Code
		for _, m := range p.API.Mirrors {
			cases = append(cases, jen.Case(jen.Lit(m.CName)).Block(jen.Return(jen.New(jen.Id(m.GoName)), jen.True())))
		}
		if len(cases) > 0 {
			g.Switch(jen.Id("cname")).Block(cases...)
		}
		g.Return(jen.Nil(), jen.False())
	})
	f.Line()
	comment(f, "ArgValidators holds, for each function with rules on its arguments, its\nValidateArgs function taking the arguments by their C names: integers as\nuint64, pointers as unsafe.Pointer; a missing argument is 0 or nil.")
	f.Var().Id("ArgValidators").Op("=").Map(jen.Id("Func")).Func().Params(jen.Map(jen.String()).Any()).Error().ValuesFunc(func(g *jen.Group) {
		for _, fn := range p.API.Funcs {
			if len(fn.Rules) == 0 {
				continue
			}
			var args []jen.Code
			for _, prm := range fn.Params {
				used := false
				for _, r := range fn.Rules {
					used = used || r.Arg.Param == prm
				}
				if !used {
					continue
				}
				if prm.Kind == model.ParamInt {
					args = append(args, jen.Add(paramType(prm)).Call(jen.Id("argUint").Call(jen.Id("a"), jen.Lit(prm.Name))))
				} else {
					args = append(args, jen.Id("argPtr").Call(jen.Id("a"), jen.Lit(prm.Name)))
				}
			}
			g.Line().Id(fn.GoName).Op(":").Func().Params(jen.Id("a").Map(jen.String()).Any()).Error().Block(
				jen.Return(jen.Id(fn.Validator()).Call(args...)))
		}
		g.Line()
	})
	f.Line()
	f.Func().Id("argUint").Params(jen.Id("a").Map(jen.String()).Any(), jen.Id("k").String()).Uint64().Block(
		jen.List(jen.Id("v"), jen.Id("_")).Op(":=").Id("a").Index(jen.Id("k")).Assert(jen.Uint64()),
		jen.Return(jen.Id("v")))
	f.Line()
	f.Func().Id("argPtr").Params(jen.Id("a").Map(jen.String()).Any(), jen.Id("k").String()).Add(unsafePointer).Block(
		jen.List(jen.Id("v"), jen.Id("_")).Op(":=").Id("a").Index(jen.Id("k")).Assert(unsafePointer),
		jen.Return(jen.Id("v")))
}
