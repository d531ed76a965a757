package emit

import (
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

var qpTypeConsts = map[string]string{
	"RC": "QPRC", "UC": "QPUC", "UD": "QPUD", "XRC_SEND": "QPXRCSend", "RAW_PACKET": "QPRawPacket", "DCI": "QPDCI",
}

func groupConst(g string) string { return "Group" + model.Camel(g) }

func chainConst(name string) string { return "Chain" + model.Camel(name) }

// funcsFile writes the table of API functions the work-request state
// machine (runtime/wrcheck) runs on.
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

	comment(f, "QPType is a set of QP types.")
	f.Type().Id("QPType").Uint8()
	f.Line()
	var qp []jen.Code
	for i, q := range spec.QPTypes {
		c := jen.Id(qpTypeConsts[q])
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
		for _, q := range spec.QPTypes {
			names = append(names, jen.Values(jen.Uint64().Call(jen.Id(qpTypeConsts[q])), jen.Lit(q)))
		}
		g.Return(jen.Id("formatFlags").Call(jen.Uint64().Call(jen.Id("t")), jen.Index().Id("flagName").Values(names...)))
	})
	f.Line()
	comment(f, "SetterGroup is a set of setter groups: what a builder takes and requires,\nand what a setter is.")
	f.Type().Id("SetterGroup").Uint16()
	f.Line()
	var gs []jen.Code
	for i, g := range spec.SetterGroups {
		c := jen.Id(groupConst(g))
		if i == 0 {
			c = c.Id("SetterGroup").Op("=").Lit(1).Op("<<").Iota()
		}
		gs = append(gs, c)
	}
	f.Const().Defs(gs...)
	f.Line()
	comment(f, "Function kinds.")
	f.Const().Defs(
		jen.Id("KindVerb").Op("=").Lit(spec.KindVerb),
		jen.Id("KindBuilder").Op("=").Lit(spec.KindBuilder),
		jen.Id("KindSetter").Op("=").Lit(spec.KindSetter),
		jen.Id("KindHelper").Op("=").Lit(spec.KindHelper),
	)
	f.Line()
	comment(f, "FuncInfo is what the spec says about a function.")
	f.Type().Id("FuncInfo").Struct(
		jen.Id("Name").String(),
		jen.Id("Man").String(),
		jen.Id("Kind").String().Comment("KindVerb, KindBuilder, KindSetter or KindHelper"),
		jen.Id("Returns").String().Comment("the return convention (spec/README.md)"),
		jen.Id("QPTypes").Id("QPType").Comment("QP types that offer it"),
		jen.Id("SendOp").Uint64().Comment("IBV_QP_EX_WITH_* bit the QP needs, 0 for none"),
		jen.Id("MlxSendOp").Uint64().Comment("MLX5DV_QP_EX_WITH_* bit the QP needs, 0 for none"),
		jen.Id("WRFlags").Uint32().Comment("builder: ibv_send_flags bits wr_flags must carry"),
		jen.Id("Takes").Id("SetterGroup").Comment("builder: setter groups that may follow it"),
		jen.Id("Requires").Id("SetterGroup").Comment("builder: setter groups each work request must get"),
		jen.Id("Group").Id("SetterGroup").Comment("setter: its group"),
		jen.Id("Of").Index().Id("Func").Comment("setter: the builders it may follow; nil for all that take its group"),
	)
	f.Line()
	var rows []jen.Code
	for _, fn := range a.Funcs {
		d := jen.Dict{
			jen.Id("Name"):    jen.Lit(fn.Name),
			jen.Id("Man"):     jen.Lit(fn.Spec.Man),
			jen.Id("Kind"):    jen.Lit(fn.Kind),
			jen.Id("Returns"): jen.Lit(fn.Spec.Returns),
		}
		if len(fn.QPTypes) > 0 {
			var qs []jen.Code
			for _, q := range fn.QPTypes {
				qs = append(qs, jen.Id(qpTypeConsts[q]))
			}
			d[jen.Id("QPTypes")] = orCodes(qs)
		}
		if fn.SendOp != nil {
			d[jen.Id("SendOp")] = constRef(p, fn.SendOp, "uint64")
		}
		if fn.MlxOp != nil {
			d[jen.Id("MlxSendOp")] = constRef(p, fn.MlxOp, "uint64")
		}
		if len(fn.WRFlags) > 0 {
			var cs []jen.Code
			for _, k := range fn.WRFlags {
				cs = append(cs, constRef(p, k, "uint32"))
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
			d[jen.Id("Group")] = jen.Id(groupConst(fn.Group))
		}
		if len(fn.Of) > 0 {
			var of []jen.Code
			for _, o := range fn.Of {
				of = append(of, jen.Id(o.GoName))
			}
			d[jen.Id("Of")] = jen.Index().Id("Func").Values(of...)
		}
		rows = append(rows, jen.Id(fn.GoName).Op(":").Values(d))
	}
	comment(f, "Funcs describes every function, indexed by Func.")
	f.Var().Id("Funcs").Op("=").Index(jen.Id("NumFuncs")).Id("FuncInfo").ValuesFunc(func(g *jen.Group) {
		for _, r := range rows {
			g.Line().Add(r)
		}
		g.Line()
	})
	f.Line()
	comment(f, "String returns the function's C name.")
	f.Func().Params(jen.Id("f").Id("Func")).Id("String").Params().String().Block(
		jen.If(jen.Id("f").Op(">=").Id("NumFuncs").Op("||").Id("Funcs").Index(jen.Id("f")).Dot("Name").Op("==").Lit("")).Block(jen.Return(jen.Id("formatUnknown").Call(jen.Lit("Func"), jen.Uint64().Call(jen.Id("f"))))),
		jen.Return(jen.Id("Funcs").Index(jen.Id("f")).Dot("Name")),
	)
}

func orCodes(cs []jen.Code) jen.Code {
	s := jen.Add(cs[0])
	for _, c := range cs[1:] {
		s = s.Op("|").Add(c)
	}
	return s
}

func groups(gs []string) jen.Code {
	var cs []jen.Code
	for _, g := range gs {
		cs = append(cs, jen.Id(groupConst(g)))
	}
	return orCodes(cs)
}

// rulesFile writes the rule errors, the table of every rule, and the chain
// checks with their errors.
func rulesFile(p *model.Package, f *jen.File) {
	a := p.API
	// One error value per argument rule, named after its first function.
	var defs []jen.Code
	for _, r := range a.Rules {
		if r.Arg == nil {
			continue
		}
		fn := r.Funcs[0].GoName
		if r.Arg.Func != nil {
			fn = r.Arg.Func.GoName
		}
		defs = append(defs, jen.Id(r.GoName).Op("=").Op("&").Id("RuleError").Values(ruleErr(r, jen.Id(fn))))
	}
	if len(defs) > 0 {
		f.Var().Defs(defs...)
		f.Line()
	}

	comment(f, "RuleInfo is one rule of spec/api.")
	f.Type().Id("RuleInfo").Struct(
		jen.Id("ID").String(),
		jen.Id("Man").String(),
		jen.Id("Section").String(),
		jen.Id("Says").String(),
		jen.Id("Applies").String().Comment("the rule as its check applies it, when stricter than Says"),
		jen.Id("Kind").String().Comment("argument, chain, qp, device, object, use, info"),
		jen.Id("Errno").Qual("syscall", "Errno").Comment("0 for use and info rules"),
		jen.Id("Chain").Id("ChainCheck").Comment("the state machine's check, or -1"),
		jen.Id("Libmlx5").String().Comment("how libmlx5 differs, if it does"),
		jen.Id("Funcs").Index().String().Comment("the C functions it applies to"),
		jen.Id("Libmlx5Accepts").Bool().Comment("libmlx5 accepts what this rule rejects (spec: libmlx5_accepts)"),
		jen.Id("Follows").String().Comment("the rdma-core release whose changed behaviour mlx5gen follows, if any"),
	)
	f.Line()
	comment(f, "Rules lists every rule of the spec that applies to this rdma-core release, in spec order.")
	f.Var().Id("Rules").Op("=").Index().Id("RuleInfo").ValuesFunc(func(g *jen.Group) {
		for _, r := range a.Rules {
			d := jen.Dict{
				jen.Id("ID"): jen.Lit(r.ID), jen.Id("Man"): jen.Lit(r.Spec.Man), jen.Id("Section"): jen.Lit(r.Spec.Section),
				jen.Id("Says"): jen.Lit(oneLine(r.Spec.Says)), jen.Id("Kind"): jen.Lit(r.Spec.Kind),
				jen.Id("Chain"): jen.Lit(r.Chain - 1),
			}
			if r.Errno != "" {
				d[jen.Id("Errno")] = jen.Qual("syscall", r.Errno)
			}
			if r.Spec.Applies != "" {
				d[jen.Id("Applies")] = jen.Lit(oneLine(r.Spec.Applies))
			}
			if r.Spec.Libmlx5 != "" {
				d[jen.Id("Libmlx5")] = jen.Lit(oneLine(r.Spec.Libmlx5))
			}
			if len(r.Spec.Funcs) > 0 {
				d[jen.Id("Funcs")] = jen.Index().String().ValuesFunc(func(g *jen.Group) {
					for _, fn := range r.Spec.Funcs {
						g.Lit(fn)
					}
				})
			}
			if r.Spec.Libmlx5Accepts {
				d[jen.Id("Libmlx5Accepts")] = jen.True()
			}
			if r.Spec.Follows != "" {
				d[jen.Id("Follows")] = jen.Lit(r.Spec.Follows)
			}
			g.Line().Values(d)
		}
		g.Line()
	})
	f.Line()

	comment(f, "ChainCheck is a check of the work-request state machine (runtime/wrcheck).")
	f.Type().Id("ChainCheck").Int8()
	f.Line()
	var cs []jen.Code
	for i, name := range model.ChainChecks {
		c := jen.Id(chainConst(name))
		if i == 0 {
			c = c.Id("ChainCheck").Op("=").Iota()
		}
		cs = append(cs, c.Comment(name))
	}
	cs = append(cs, jen.Id("NumChainChecks"))
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
	f.Var().Id("chainRules").Op("=").Index().Id("RuleError").ValuesFunc(func(g *jen.Group) {
		for _, r := range chainRules {
			g.Line().Values(ruleErr(r, nil))
		}
		g.Line()
	})
	f.Line()
	comment(f, "chainRuleOf[c][f] indexes chainRules: the rule a failure of check c in function f breaks.")
	f.Var().Id("chainRuleOf").Op("=").Index(jen.Id("NumChainChecks")).Index(jen.Id("NumFuncs")).Uint16().ValuesFunc(func(g *jen.Group) {
		for i := range model.ChainChecks {
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
	f.Var().Id("chainErrors").Op("=").Func().Params().Op("*").Index(jen.Id("NumChainChecks")).Index(jen.Id("NumFuncs")).Id("RuleError").Block(
		jen.Var().Id("t").Index(jen.Id("NumChainChecks")).Index(jen.Id("NumFuncs")).Id("RuleError"),
		jen.If(jen.Len(jen.Id("chainRules")).Op("==").Lit(0)).Block(jen.Return(jen.Op("&").Id("t"))),
		jen.For(jen.Id("c").Op(":=").Range().Id("t")).Block(
			jen.For(jen.Id("f").Op(":=").Range().Id("t").Index(jen.Id("c"))).Block(
				jen.Id("t").Index(jen.Id("c")).Index(jen.Id("f")).Op("=").Id("chainRules").Index(jen.Id("chainRuleOf").Index(jen.Id("c")).Index(jen.Id("f"))),
				jen.Id("t").Index(jen.Id("c")).Index(jen.Id("f")).Dot("Func").Op("=").Id("Func").Call(jen.Id("f")),
				jen.Id("t").Index(jen.Id("c")).Index(jen.Id("f")).Dot("WR").Op("=").Lit(-1),
			),
		),
		jen.Return(jen.Op("&").Id("t")),
	).Call()
	f.Line()
	comment(f, "ChainError returns the error for chain check c failing in function fn.")
	f.Func().Id("ChainError").Params(jen.Id("c").Id("ChainCheck"), jen.Id("fn").Id("Func")).Op("*").Id("RuleError").Block(
		jen.Return(jen.Op("&").Id("chainErrors").Index(jen.Id("c")).Index(jen.Id("fn"))),
	)
	f.Line()
	comment(f, "String returns the check's name as spec/README.md lists it.")
	f.Func().Params(jen.Id("c").Id("ChainCheck")).Id("String").Params().String().BlockFunc(func(g *jen.Group) {
		var cases []jen.Code
		for _, name := range model.ChainChecks {
			cases = append(cases, jen.Case(jen.Id(chainConst(name))).Block(jen.Return(jen.Lit(name))))
		}
		g.Switch(jen.Id("c")).Block(cases...)
		g.Return(jen.Id("formatUnknown").Call(jen.Lit("ChainCheck"), jen.Uint64().Call(jen.Id("c"))))
	})
}

func ruleErr(r *model.Rule, fn jen.Code) jen.Dict {
	d := jen.Dict{
		jen.Id("Rule"):  jen.Lit(r.ID),
		jen.Id("Man"):   jen.Lit(r.Spec.Man),
		jen.Id("Says"):  jen.Lit(oneLine(ruleApplies(r))),
		jen.Id("Errno"): jen.Qual("syscall", r.Errno),
		jen.Id("WR"):    jen.Lit(-1),
	}
	if fn != nil {
		d[jen.Id("Func")] = fn
	}
	return d
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// constRef renders a constant by its Go name when the package declares
// it, converted to typ; otherwise by its value.
func constRef(p *model.Package, k *model.Const, typ string) jen.Code {
	for _, c := range p.Consts {
		if c == k {
			return jen.Id(typ).Call(jen.Id(k.Name))
		}
	}
	return hex(k.Value.Bits)
}
