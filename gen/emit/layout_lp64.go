package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// layoutFile writes, for the LP64 targets, the compile-time checks of every
// mirror's size and offsets, and MirrorLayout.
func layoutFile(p *model.Package, f *jen.File) {
	f.HeaderComment("//go:build " + lp64)
	comment(f, "MirrorLayout reports whether the struct mirrors have C's layout on this\ntarget: they do (the build checks every size and offset).")
	f.Func().Id("MirrorLayout").Params().Error().Block(jen.Return(jen.Nil()))
	f.Line()
	for _, m := range p.API.Mirrors {
		layoutChecks(f, m)
	}
}

// layoutChecks makes the build fail unless every size and offset of m
// equals what the header model says.
func layoutChecks(f *jen.File, m *model.Mirror) {
	// The stringer trick, both ways: the build fails unless every size and
	// offset equals what the header model says.
	sz := jen.Qual("unsafe", "Sizeof").Call(jen.Id(m.GoName).Values())
	checks := []jen.Code{
		jen.Var().Id("x").Index(jen.Lit(1)).Struct(),
		jen.Id("_").Op("=").Id("x").Index(jen.Add(sz).Op("-").Lit(int(m.Size))),
		jen.Id("_").Op("=").Id("x").Index(jen.Lit(int(m.Size)).Op("-").Add(sz)),
	}
	for _, mf := range m.Fields {
		of := jen.Qual("unsafe", "Offsetof").Call(jen.Id(m.GoName).Values().Dot(mf.GoName))
		checks = append(checks,
			jen.Id("_").Op("=").Id("x").Index(jen.Add(of).Op("-").Lit(int(mf.Offset))),
			jen.Id("_").Op("=").Id("x").Index(jen.Lit(int(mf.Offset)).Op("-").Add(of)))
	}
	f.Func().Id("_").Params().Block(checks...)
	f.Line()
}
