package emit

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// constsFile writes the constants that belong to no named enum, grouped as
// the header groups them.
func constsFile(p *model.Package, f *jen.File) {
	var group []jen.Code
	var groupKey string
	flush := func() {
		if len(group) > 0 {
			comment(f, groupKey)
			f.Const().Defs(group...)
			f.Line()
		}
		group = nil
	}
	for _, k := range p.Consts {
		if k.Enum != nil {
			continue
		}
		key := constGroup(k)
		if key != groupKey {
			flush()
			groupKey = key
		}
		group = append(group, jen.Id(k.Name).Op("=").Add(num(k.Value.Int64(), k.Value.Signed)))
	}
	flush()
}

// constGroup names where an untyped constant comes from: its anonymous
// enum, or the macros of its header.
func constGroup(k *model.Const) string {
	if k.CEnum != nil {
		return fmt.Sprintf("From the anonymous enum of %s that starts with %s.", k.CEnum.File, k.CEnum.First)
	}
	return fmt.Sprintf("Macros of %s.", k.Src.Header.File)
}
