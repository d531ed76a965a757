package resolve

import (
	"slices"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/diag"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/spec"
	"github.com/mlx5gen/mlx5gen/gen/vocab"
)

// buildRules resolves the rules whose gates let them in.
func (b *builder) buildRules() {
	a := b.p.API
	for _, sr := range b.s.Rules {
		if !b.ruleAvailable(sr) {
			continue
		}
		r := &model.Rule{ID: sr.ID, GoName: model.RuleVarName(sr.ID), Man: sr.Man, Section: sr.Section, Says: sr.Says,
			Applies: sr.Applies, Kind: sr.Kind, Errno: sr.Errno, Libmlx5: sr.Libmlx5, Follows: sr.Follows,
			Vectors: sr.Vectors, Libmlx5Accepts: sr.Libmlx5Accepts, FuncNames: sr.Funcs,
			Src: model.Source{Spec: sr.Pos}, SpecFile: b.relSpec(sr.Pos.File)}
		if sr.DeviceAPI != nil {
			r.DeviceAPI = *sr.DeviceAPI
		}
		for _, fn := range sr.Funcs {
			// A function the header lacks is reported, or left out by
			// its gate, where it is described.
			if f := b.funcs[fn]; f != nil {
				r.Funcs = append(r.Funcs, f)
			}
		}
		if !b.ruleCheck(sr, r) {
			continue
		}
		if len(r.Funcs) == 0 && (r.Arg != nil || r.Chain != 0) {
			b.errorf(sr.Pos, "rule %s applies to no available function", sr.ID)
		}
		a.Rules = append(a.Rules, r)
	}
}

// ruleCheck resolves how a rule is enforced: a chain check, or an argument
// check its mirror or function validates. It reports whether the rule is
// generated.
func (b *builder) ruleCheck(sr *spec.Rule, r *model.Rule) bool {
	c := sr.Check
	switch {
	case c == nil:
		return true
	case c.Chain != "":
		i := indexOf(vocab.ChainChecks, c.Chain)
		if i < 0 {
			b.errorf(c.Pos, "rule %s: unknown chain check %q (known: %s)", sr.ID, c.Chain, strings.Join(vocab.ChainChecks, ", "))
			return false
		}
		r.Chain = i + 1
		return true
	}
	r.Arg = b.argCheck(sr, c)
	if r.Arg == nil {
		return false
	}
	if r.Arg.Mirror != nil {
		r.Arg.Mirror.Rules = append(r.Arg.Mirror.Rules, r)
	} else {
		r.Arg.Func.Rules = append(r.Arg.Func.Rules, r)
	}
	return true
}

// relSpec is a spec file's name relative to the spec directory.
func (b *builder) relSpec(file string) string {
	for i, f := range b.s.Files {
		if f == file {
			return b.s.Rel[i]
		}
	}
	return file
}

// chainRules checks that every chain check has a rule, and decides which
// rule each function reports for each check.
func (b *builder) chainRules() {
	a := b.p.API
	// Every chain check the state machine performs needs a rule, so that
	// its error names a man page; it runs on work requests only, so a
	// spec without builders and setters needs none. The receive checks
	// (runtime/rq) run on the receive verbs, so only a spec that describes
	// one needs their rules.
	wr, recv := false, false
	for _, f := range a.Funcs {
		wr = wr || f.Kind == vocab.KindBuilder || f.Kind == vocab.KindSetter
		recv = recv || f.Name == "ibv_post_recv" || f.Name == "ibv_post_srq_recv"
	}
	for i, name := range vocab.ChainChecks {
		found := false
		for _, r := range a.Rules {
			found = found || r.Chain == i+1
		}
		need := wr
		if slices.Contains(vocab.ReceiveChecks, name) {
			need = recv
		}
		if !found && need && len(b.s.Rules) > 0 {
			b.errorf(diag.Pos{File: "spec", Line: 1, Col: 1}, "no rule enforces chain check %s", name)
		}
	}
	a.ChainRule = make([][]*model.Rule, len(vocab.ChainChecks))
	for i := range vocab.ChainChecks {
		a.ChainRule[i] = b.chainRow(i)
	}
}

// chainRow is ChainRule[i]: for each function, the rule of check i that
// names it, else the check's first rule.
func (b *builder) chainRow(i int) []*model.Rule {
	a := b.p.API
	row := make([]*model.Rule, a.NumFuncs)
	var first *model.Rule
	for _, r := range a.Rules {
		if r.Chain != i+1 {
			continue
		}
		if first == nil {
			first = r
		}
		for _, f := range r.Funcs {
			if prev := row[f.ID]; prev != nil {
				b.errorf(r.Src.Spec, "rule %s: function %s already reports chain check %s as rule %s (%s); name each function in one rule per check", r.ID, f.Name, vocab.ChainChecks[i], prev.ID, prev.Src.Spec)
				continue
			}
			row[f.ID] = r
		}
	}
	for j := range row {
		if row[j] == nil {
			row[j] = first
		}
	}
	return row
}
