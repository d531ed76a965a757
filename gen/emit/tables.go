package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// GenerateTables renders the checker's tables package, named pkg, which
// imports the generated package at basePath: what spec/api says of each
// function (Funcs), every rule (Rules), the chain checks of the
// work-request state machine and their errors. Only the runtime's checker
// reads them; the generated package keeps what a user sees (Func,
// RuleError, the validators). One emitter file per output file:
// tablesdoc.go writes doc.go, tablesfuncs.go funcs.go, tablesrules.go
// rules.go.
func GenerateTables(p *model.Package, pkg, basePath string) ([]File, error) {
	t := tables{base: basePath, pkg: pkg}
	return render(p, pkg, []generator{
		{"doc.go", t.docFile},
		{"funcs.go", t.funcsFile},
		{"rules.go", t.rulesFile},
	})
}

// tables emits the tables package; base is the import path of the
// generated package it refers to, pkg its own name.
type tables struct{ base, pkg string }

// q names an identifier of the generated package.
func (t tables) q(name string) *jen.Statement { return jen.Qual(t.base, name) }

// constRef renders a constant of the generated package by its Go name
// when the package declares it, converted to typ; otherwise by its value.
func (t tables) constRef(p *model.Package, k *model.Const, typ string) jen.Code {
	for _, c := range p.Consts {
		if c == k {
			return jen.Id(typ).Call(t.q(k.Name))
		}
	}
	return hex(k.Value.Bits)
}
