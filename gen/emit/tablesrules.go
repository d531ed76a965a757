package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/vocab"
)

// rulesFile writes the table of every rule and the chain checks with
// their errors.
func (t tables) rulesFile(p *model.Package, f *jen.File) {
	t.ruleTable(p, f)
	t.chainChecks(p, f)
}

// ruleTable writes RuleInfo and Rules, every rule in spec order.
func (t tables) ruleTable(p *model.Package, f *jen.File) {
	comment(f, "RuleInfo is one rule of spec/api.")
	f.Type().Id("RuleInfo").Struct(
		jen.Id("ID").String().Comment("the rule's id in spec/api"),
		jen.Id("Man").String().Comment("the man page that states it"),
		jen.Id("Section").String().Comment("the section of the man page"),
		jen.Id("Says").String().Comment("what the page says, in the spec's words"),
		jen.Id("Applies").String().Comment("the rule as its check applies it, when stricter than Says"),
		jen.Id("Kind").String().Comment("argument, chain, qp, device, object, use, info"),
		jen.Id("Errno").Qual("syscall", "Errno").Comment("0 for use and info rules"),
		jen.Id("Chain").Id("ChainCheck").Comment("the state machine's check, or -1"),
		jen.Id("Libmlx5").String().Comment("how libmlx5 differs, if it does"),
		jen.Id("Funcs").Index().String().Comment("the C functions it applies to"),
		jen.Id("Libmlx5Accepts").Bool().Comment("libmlx5 accepts what this rule rejects (spec: libmlx5_accepts)"),
		jen.Id("Follows").String().Comment("the rdma-core release whose changed behaviour mlx5gen follows, if any"),
		jen.Id("DeviceAPI").String().Comment("why no call of runtime/device can break this argument rule (spec: device_api), if none can"),
	)
	f.Line()
	comment(f, "Rules lists every rule of the spec that applies to this rdma-core release, in spec order.")
	f.Var().Id("Rules").Op("=").Index().Id("RuleInfo").ValuesFunc(func(g *jen.Group) {
		for _, r := range p.API.Rules {
			g.Line().Values(ruleInfo(r))
		}
		g.Line()
	})
	f.Line()
}

// chainChecks writes ChainCheck, the rules behind the checks and which one
// each function reports, and ChainError.
func (t tables) chainChecks(p *model.Package, f *jen.File) {
	a := p.API

	comment(f, "ChainCheck is a check of the work-request state machine (runtime/internal/wrcheck).")
	f.Type().Id("ChainCheck").Int8()
	f.Line()
	var cs []jen.Code
	for i, name := range vocab.ChainChecks {
		c := jen.Id(model.ChainName(name))
		if i == 0 {
			c = c.Id("ChainCheck").Op("=").Iota()
		}
		cs = append(cs, c.Comment(name))
	}
	cs = append(cs, jen.Id("NumChainChecks").Comment("the number of chain checks"))
	f.Const().Defs(cs...)
	f.Line()
	// The rules behind the chain checks, and which one each function
	// reports.
	var chainRules []*model.Rule
	index := map[*model.Rule]int{}
	for _, r := range a.Rules {
		if r.Chain != 0 {
			index[r] = len(chainRules)
			chainRules = append(chainRules, r)
		}
	}
	comment(f, "chainRules are the rules the state machine enforces (Func filled in per function).")
	f.Var().Id("chainRules").Op("=").Index().Add(t.q("RuleError")).ValuesFunc(func(g *jen.Group) {
		for _, r := range chainRules {
			g.Line().Values(ruleErr(r, nil))
		}
		g.Line()
	})
	f.Line()
	comment(f, "chainRuleOf[c][f] indexes chainRules: the rule a failure of check c in function f breaks.")
	f.Var().Id("chainRuleOf").Op("=").Index(jen.Id("NumChainChecks")).Index(t.q("NumFuncs")).Uint16().ValuesFunc(func(g *jen.Group) {
		for i := range vocab.ChainChecks {
			var row []jen.Code
			for j := range a.NumFuncs {
				k := 0
				if r := a.ChainRule[i][j]; r != nil {
					k = index[r]
				}
				row = append(row, jen.Lit(k))
			}
			g.Line().Values(row...)
		}
		g.Line()
	})
	f.Line()
	comment(f, "chainErrors holds one error per chain check and function, made once, so\nthat reporting a violation does not allocate.")
	f.Var().Id("chainErrors").Op("=").Func().Params().Op("*").Index(jen.Id("NumChainChecks")).Index(t.q("NumFuncs")).Add(t.q("RuleError")).Block(
		jen.Var().Id("t").Index(jen.Id("NumChainChecks")).Index(t.q("NumFuncs")).Add(t.q("RuleError")),
		jen.If(jen.Len(jen.Id("chainRules")).Op("==").Lit(0)).Block(jen.Return(jen.Op("&").Id("t"))),
		jen.For(jen.Id("c").Op(":=").Range().Id("t")).Block(
			jen.For(jen.Id("f").Op(":=").Range().Id("t").Index(jen.Id("c"))).Block(
				jen.Id("t").Index(jen.Id("c")).Index(jen.Id("f")).Op("=").Id("chainRules").Index(jen.Id("chainRuleOf").Index(jen.Id("c")).Index(jen.Id("f"))),
				jen.Id("t").Index(jen.Id("c")).Index(jen.Id("f")).Dot("Func").Op("=").Add(t.q("Func")).Call(jen.Id("f")),
				jen.Id("t").Index(jen.Id("c")).Index(jen.Id("f")).Dot("WR").Op("=").Lit(-1),
			),
		),
		jen.Return(jen.Op("&").Id("t")),
	).Call()
	f.Line()
	comment(f, "ChainError returns the error for chain check c failing in function fn.")
	f.Func().Id("ChainError").Params(jen.Id("c").Id("ChainCheck"), jen.Id("fn").Add(t.q("Func"))).Op("*").Add(t.q("RuleError")).Block(
		jen.Return(jen.Op("&").Id("chainErrors").Index(jen.Id("c")).Index(jen.Id("fn"))),
	)
	f.Line()
	comment(f, "String returns the check's name as spec/README.md lists it.")
	f.Func().Params(jen.Id("c").Id("ChainCheck")).Id("String").Params().String().BlockFunc(func(g *jen.Group) {
		var cases []jen.Code
		for _, name := range vocab.ChainChecks {
			cases = append(cases, jen.Case(jen.Id(model.ChainName(name))).Block(jen.Return(jen.Lit(name))))
		}
		g.Switch(jen.Id("c")).Block(cases...)
		g.Return(jen.Lit("ChainCheck(").Op("+").Qual("strconv", "Itoa").Call(jen.Int().Call(jen.Id("c"))).Op("+").Lit(")"))
	})
}

// ruleInfo is the RuleInfo of a rule.
func ruleInfo(r *model.Rule) jen.Dict {
	d := jen.Dict{
		jen.Id("ID"): jen.Lit(r.ID), jen.Id("Man"): jen.Lit(r.Man), jen.Id("Section"): jen.Lit(r.Section),
		jen.Id("Says"): jen.Lit(oneLine(r.Says)), jen.Id("Kind"): jen.Lit(r.Kind),
		jen.Id("Chain"): jen.Lit(r.Chain - 1),
	}
	if r.Errno != "" {
		d[jen.Id("Errno")] = jen.Qual("syscall", r.Errno)
	}
	if r.Applies != "" {
		d[jen.Id("Applies")] = jen.Lit(oneLine(r.Applies))
	}
	if r.Libmlx5 != "" {
		d[jen.Id("Libmlx5")] = jen.Lit(oneLine(r.Libmlx5))
	}
	if len(r.FuncNames) > 0 {
		d[jen.Id("Funcs")] = jen.Index().String().ValuesFunc(func(g *jen.Group) {
			for _, fn := range r.FuncNames {
				g.Lit(fn)
			}
		})
	}
	if r.Libmlx5Accepts {
		d[jen.Id("Libmlx5Accepts")] = jen.True()
	}
	if r.Follows != "" {
		d[jen.Id("Follows")] = jen.Lit(r.Follows)
	}
	if r.DeviceAPI != "" {
		d[jen.Id("DeviceAPI")] = jen.Lit(r.DeviceAPI)
	}
	return d
}
