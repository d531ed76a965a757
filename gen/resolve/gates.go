package resolve

import (
	"github.com/mlx5gen/mlx5gen/gen/diag"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

// A warning is a disagreement between a since/until gate and the header
// that does not stop generation: the header decides, the gate only
// documents. The header decides whether a gated item is generated: an rdma-core
// release may come from a distribution or vendor with backports, from a
// source tree or from a copied include directory without libibverbs.pc.
// The gate records the upstream release that added or removed the item;
// when the release is known and the header disagrees with it, a warning
// names both, so a wrong gate or an unusual header is seen, not refused.
//
// An item without a gate is in every release and must be in the header.

// gated reports whether an item is generated: true for an ungated item
// (the caller reports its absence), else whether the header declares it.
func (b *builder) gated(pos diag.Pos, what string, g spec.Gate, declared bool) bool {
	if g.Since == "" && g.Until == "" {
		return true
	}
	b.crossCheck(pos, what, g, declared)
	return declared
}

// crossCheck warns when the known release's gate and the header disagree.
func (b *builder) crossCheck(pos diag.Pos, what string, g spec.Gate, declared bool) {
	v := b.c.Version
	if v == "" || g.Includes(v) == declared {
		return
	}
	if declared {
		b.warnf(pos, "%s is gated to rdma-core %s, but the rdma-core %s header declares it; generated from the header", what, gateString(g), v)
		return
	}
	b.warnf(pos, "%s is gated to rdma-core %s, but the rdma-core %s header does not declare it; left out", what, gateString(g), v)
}

func (b *builder) warnf(pos diag.Pos, format string, args ...any) {
	b.p.Warnings = append(b.p.Warnings, diag.Errorf(pos, format, args...))
}

// declares reports whether the header declares name: a function, a
// constant (macro or enumerator), a struct or enum tag, or a typedef.
func (b *builder) declares(name string) bool {
	return b.c.Func(name) != nil || b.c.Constant(name) != nil || b.c.Struct(name) != nil ||
		b.c.Enum(name) != nil || b.c.Typedef(name) != nil
}

// ruleAvailable decides whether a rule is generated. A rule with
// if_declared follows the header like any gated item. A gated rule without
// one (a man page statement added in a release, nothing the header shows)
// follows its gate when the release is known, and is kept when it is not.
// A rule naming only gated functions the header lacks is left out with
// them.
func (b *builder) ruleAvailable(sr *spec.Rule) bool {
	if sr.IfDeclared != "" {
		what := "rule " + sr.ID + " (if_declared " + sr.IfDeclared + ")"
		declared := b.declares(sr.IfDeclared)
		if sr.Since == "" && sr.Until == "" {
			return declared
		}
		return b.gated(sr.Pos, what, sr.Gate, declared)
	}
	if b.c.Version != "" && !sr.Gate.Includes(b.c.Version) {
		return false
	}
	if len(sr.Funcs) == 0 {
		return true
	}
	for _, fn := range sr.Funcs {
		sf := specFunc(b.s, fn)
		if sf == nil || (sf.Since == "" && sf.Until == "") || b.c.Func(fn) != nil {
			return true
		}
	}
	return false
}
