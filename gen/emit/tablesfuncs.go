package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/vocab"
)

// funcsFile writes the table of API functions the work-request state
// machine (runtime/internal/wrcheck) runs on: the setter groups, the function kinds
// and Funcs.
func (t tables) funcsFile(p *model.Package, f *jen.File) {
	t.setterGroups(f)
	t.funcTable(p, f)
}

// setterGroups writes SetterGroup, a bit per group of vocab.SetterGroups,
// and the function kinds.
func (t tables) setterGroups(f *jen.File) {
	comment(f, "SetterGroup is a set of setter groups: what a builder takes and requires,\nand what a setter is.")
	f.Type().Id("SetterGroup").Uint16()
	f.Line()
	var gs []jen.Code
	for i, g := range vocab.SetterGroups {
		c := jen.Id(model.GroupName(g))
		if i == 0 {
			c = c.Id("SetterGroup").Op("=").Lit(1).Op("<<").Iota()
		}
		gs = append(gs, c.Comment("the setter group "+g))
	}
	f.Const().Defs(gs...)
	f.Line()
	comment(f, "Function kinds.")
	var kinds []jen.Code
	for _, k := range vocab.FuncKinds {
		kinds = append(kinds, jen.Id(model.KindName(k)).Op("=").Lit(k))
	}
	f.Const().Defs(kinds...)
	f.Line()
}

// funcTable writes FuncInfo and the Funcs table, indexed by Func.
func (t tables) funcTable(p *model.Package, f *jen.File) {
	a := p.API
	comment(f, "FuncInfo is what the spec says about a function.")
	f.Type().Id("FuncInfo").Struct(
		jen.Id("Name").String().Comment("the C name"),
		jen.Id("Man").String().Comment("the man page that documents it"),
		jen.Id("Kind").String().Comment("KindVerb, KindBuilder, KindSetter or KindHelper"),
		jen.Id("Returns").String().Comment("the return convention (spec/README.md)"),
		jen.Id("QPTypes").Add(t.q("QPType")).Comment("QP types that offer it"),
		jen.Id("SendOp").Uint64().Comment("IBV_QP_EX_WITH_* bit the QP needs, 0 for none"),
		jen.Id("MlxSendOp").Uint64().Comment("MLX5DV_QP_EX_WITH_* bit the QP needs, 0 for none"),
		jen.Id("WRFlags").Uint32().Comment("builder: ibv_send_flags bits wr_flags must carry"),
		jen.Id("Takes").Id("SetterGroup").Comment("builder: setter groups that may follow it"),
		jen.Id("Requires").Id("SetterGroup").Comment("builder: setter groups each work request must get"),
		jen.Id("Group").Id("SetterGroup").Comment("setter: its group"),
		jen.Id("Of").Index().Add(t.q("Func")).Comment("setter: the builders it may follow; nil for all that take its group"),
	)
	f.Line()
	var rows []jen.Code
	for _, fn := range a.Funcs {
		rows = append(rows, t.q(fn.GoName).Op(":").Values(t.funcInfo(p, fn)))
	}
	comment(f, "Funcs describes every function, indexed by Func.")
	f.Var().Id("Funcs").Op("=").Index(t.q("NumFuncs")).Id("FuncInfo").ValuesFunc(func(g *jen.Group) {
		for _, r := range rows {
			g.Line().Add(r)
		}
		g.Line()
	})
}

func groups(gs []string) jen.Code {
	var cs []jen.Code
	for _, g := range gs {
		cs = append(cs, jen.Id(model.GroupName(g)))
	}
	return orCodes(cs)
}

// funcInfo is the FuncInfo of a function.
func (t tables) funcInfo(p *model.Package, fn *model.Func) jen.Dict {
	d := jen.Dict{
		jen.Id("Name"):    jen.Lit(fn.Name),
		jen.Id("Man"):     jen.Lit(fn.Man),
		jen.Id("Kind"):    jen.Lit(fn.Kind),
		jen.Id("Returns"): jen.Lit(fn.Returns),
	}
	if len(fn.QPTypes) > 0 {
		var qs []jen.Code
		for _, q := range fn.QPTypes {
			qs = append(qs, t.q(model.QPTypeName(q)))
		}
		d[jen.Id("QPTypes")] = orCodes(qs)
	}
	if fn.SendOp != nil {
		d[jen.Id("SendOp")] = t.constRef(p, fn.SendOp, "uint64")
	}
	if fn.MlxOp != nil {
		d[jen.Id("MlxSendOp")] = t.constRef(p, fn.MlxOp, "uint64")
	}
	if len(fn.WRFlags) > 0 {
		var cs []jen.Code
		for _, k := range fn.WRFlags {
			cs = append(cs, t.constRef(p, k, "uint32"))
		}
		d[jen.Id("WRFlags")] = orCodes(cs)
	}
	if len(fn.Takes) > 0 {
		d[jen.Id("Takes")] = groups(fn.Takes)
	}
	if len(fn.Needs) > 0 {
		d[jen.Id("Requires")] = groups(fn.Needs)
	}
	if fn.Group != "" {
		d[jen.Id("Group")] = jen.Id(model.GroupName(fn.Group))
	}
	if len(fn.Of) > 0 {
		var of []jen.Code
		for _, o := range fn.Of {
			of = append(of, t.q(o.GoName))
		}
		d[jen.Id("Of")] = jen.Index().Add(t.q("Func")).Values(of...)
	}
	return d
}
