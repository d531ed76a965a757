package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// rulesFile writes the rule errors of the argument rules, which the
// validators return; the table of every rule and the chain checks are in
// the tables package (tablesrules.go).
func rulesFile(p *model.Package, f *jen.File) {
	ruleVars(p, f)
}

// ruleVars writes one error value per argument rule, named after its
// first function.
func ruleVars(p *model.Package, f *jen.File) {
	a := p.API
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
}

func ruleErr(r *model.Rule, fn jen.Code) jen.Dict {
	d := jen.Dict{
		jen.Id("Rule"):  jen.Lit(r.ID),
		jen.Id("Man"):   jen.Lit(r.Man),
		jen.Id("Says"):  jen.Lit(oneLine(r.Applied())),
		jen.Id("Errno"): jen.Qual("syscall", r.Errno),
		jen.Id("WR"):    jen.Lit(-1),
	}
	if fn != nil {
		d[jen.Id("Func")] = fn
	}
	return d
}
