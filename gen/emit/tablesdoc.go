package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// docFile writes the tables package's doc comment.
func (t tables) docFile(p *model.Package, f *jen.File) {
	f.PackageComment("Package " + t.pkg + " holds the tables the work-request checker (runtime/internal/wrcheck)")
	f.PackageComment("runs on, generated from spec/api with the package " + t.base + ":")
	f.PackageComment("what the spec says of each function (Funcs, indexed by its Func), every rule")
	f.PackageComment("(Rules, as spec/RULES.md lists them), the chain checks of the state machine")
	f.PackageComment("and the RuleError each returns (ChainError). A user of the generated package")
	f.PackageComment("does not need it: a RuleError says which rule a call broke.")
}
