package spec

import (
	"regexp"
	"slices"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/diag"
	"github.com/mlx5gen/mlx5gen/gen/vocab"
)

var (
	manRE    = regexp.MustCompile(`^[a-z0-9_]+\([0-9]\)$`)
	ruleIDRE = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_]+)*$`)
	cIdentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

var errnos = []string{"EINVAL", "ENOMEM", "EOPNOTSUPP", "EBADF"}

// checker collects the problems of the API descriptors.
type checker struct {
	errs diag.List
	// partial: a spec file did not decode, so a name not described
	// here may be described there; such references are not reported.
	partial bool
}

func (k *checker) bad(p Pos, format string, args ...any) {
	k.errs.Add(p, format, args...)
}

func (k *checker) man(p Pos, what, m string) {
	if m == "" {
		k.bad(p, "%s: no man page (give man: here or at the top of the file)", what)
	} else if !manRE.MatchString(m) {
		k.bad(p, "%s: man page %q is not written like name(3)", what, m)
	}
}

// checkAPI validates the functions, structs and rules on their own; the
// resolver checks them against the header (and the rules' chain checks
// against vocab.ChainChecks).
func (s *Spec) checkAPI(partial bool) diag.List {
	k := checker{partial: partial}
	funcs := k.functions(s.Functions)
	structs := k.structs(s.Structs)
	k.rules(s.Rules, funcs, structs)
	return k.errs
}

// functions checks the function descriptors and returns them by name.
func (k *checker) functions(list []*Function) map[string]*Function {
	funcs := map[string]*Function{}
	for _, f := range list {
		what := "function " + f.Name
		if prev := funcs[f.Name]; prev != nil {
			k.bad(f.Pos, "%s described twice (first at %s)", what, prev.Pos)
		}
		funcs[f.Name] = f
		k.man(f.Pos, what, f.Man)
		k.errs = append(k.errs, checkGate(f.Pos, f.Gate)...)
		if !slices.Contains(vocab.FuncKinds, f.Kind) {
			k.bad(f.Pos, "%s: kind must be verb, builder, setter or helper, not %q", what, f.Kind)
		}
		if !slices.Contains([]string{ReturnsPointer, ReturnsErrno, ReturnsNegErrno, ReturnsMinusOne, ReturnsDeferred, ReturnsVoid, ReturnsValue}, f.Returns) {
			k.bad(f.Pos, "%s: returns must be pointer-errno, errno, negative-errno, minus-one-errno, deferred, void or value, not %q", what, f.Returns)
		}
		if f.Macro != "" && !cIdentRE.MatchString(f.Macro) {
			k.bad(f.Pos, "%s: macro must name a C function, not %q", what, f.Macro)
		}
		wr := f.Kind == vocab.KindBuilder || f.Kind == vocab.KindSetter
		if !wr && (len(f.QPTypes) > 0 || f.SendOp != "" || f.MlxSendOp != "" || len(f.WRFlags) > 0 || len(f.Takes) > 0 || len(f.Requires) > 0 || f.Group != "" || len(f.Of) > 0) {
			k.bad(f.Pos, "%s: qp_types, send_op, mlx5_send_op, wr_flags, takes, requires, group and of are for builders and setters", what)
		}
		for _, q := range f.QPTypes {
			if !slices.Contains(vocab.QPTypes, q) {
				k.bad(f.Pos, "%s: unknown QP type %q (want one of %v)", what, q, vocab.QPTypes)
			}
		}
		if wr && len(f.QPTypes) == 0 {
			k.bad(f.Pos, "%s: a %s needs qp_types", what, f.Kind)
		}
		for _, g := range append(append([]string(nil), f.Takes...), f.Requires...) {
			if !slices.Contains(vocab.SetterGroups, g) {
				k.bad(f.Pos, "%s: unknown setter group %q (want one of %v)", what, g, vocab.SetterGroups)
			}
		}
		for _, g := range f.Requires {
			if !slices.Contains(f.Takes, g) {
				k.bad(f.Pos, "%s: requires %s but does not take it", what, g)
			}
		}
		switch f.Kind {
		case vocab.KindSetter:
			if !slices.Contains(vocab.SetterGroups, f.Group) {
				k.bad(f.Pos, "%s: a setter needs a group, one of %v", what, vocab.SetterGroups)
			}
			if len(f.Takes) > 0 || len(f.Requires) > 0 {
				k.bad(f.Pos, "%s: takes and requires are for builders", what)
			}
		case vocab.KindBuilder:
			if f.Group != "" || len(f.Of) > 0 {
				k.bad(f.Pos, "%s: group and of are for setters", what)
			}
		}
		params := map[string]bool{}
		for _, p := range f.Params {
			if params[p.Name] {
				k.bad(p.Pos, "%s: parameter %s listed twice", what, p.Name)
			}
			params[p.Name] = true
			if p.Enum != "" && p.Flags != "" {
				k.bad(p.Pos, "%s: parameter %s: enum or flags, not both", what, p.Name)
			}
		}
	}
	for _, f := range list {
		for _, b := range f.Of {
			if g := funcs[b]; g == nil || g.Kind != vocab.KindBuilder {
				k.bad(f.Pos, "function %s: of names %s, which is not a builder in the spec", f.Name, b)
			} else if !slices.Contains(g.Takes, f.Group) {
				k.bad(f.Pos, "function %s: builder %s does not take group %s", f.Name, b, f.Group)
			}
		}
	}

	return funcs
}

// structs checks the struct descriptors and returns them by name.
func (k *checker) structs(list []*Struct) map[string]*Struct {
	structs := map[string]*Struct{}
	for _, st := range list {
		what := "struct " + st.Name
		if prev := structs[st.Name]; prev != nil {
			k.bad(st.Pos, "%s described twice (first at %s)", what, prev.Pos)
		}
		structs[st.Name] = st
		k.man(st.Pos, what, st.Man)
		k.errs = append(k.errs, checkGate(st.Pos, st.Gate)...)
		k.opaque(st, what)
		names := map[string]bool{}
		for _, f := range st.Fields {
			if names[f.Name] {
				k.bad(f.Pos, "%s: field %s listed twice", what, f.Name)
			}
			names[f.Name] = true
			if f.Enum != "" && f.Flags != "" {
				k.bad(f.Pos, "%s: field %s: enum or flags, not both", what, f.Name)
			}
			k.errs = append(k.errs, checkGate(f.Pos, f.Gate)...)
		}
	}

	return structs
}

// opaque checks that a struct either lists its fields or says, in one
// line, why it has no mirror: an empty struct descriptor would otherwise
// count as described while generating nothing, hiding the gap.
func (k *checker) opaque(st *Struct, what string) {
	reason := strings.TrimSpace(st.Opaque)
	switch {
	case st.Opaque != "" && (reason == "" || strings.Contains(reason, "\n")):
		k.bad(st.Pos, "%s: opaque must be one non-empty line saying why the struct has no mirror", what)
	case st.Opaque != "" && len(st.Fields) > 0:
		k.bad(st.Fields[0].Pos, "%s: an opaque struct lists no fields (it gets no mirror, only a handle)", what)
	case st.Opaque == "" && len(st.Fields) == 0:
		k.bad(st.Pos, "%s: no fields: list every field of the header's struct, or give opaque: with the reason it gets no mirror", what)
	}
}

// rules checks the rules.
func (k *checker) rules(list []*Rule, funcs map[string]*Function, structs map[string]*Struct) {
	ids := map[string]*Rule{}
	for _, r := range list {
		what := "rule " + r.ID
		if !ruleIDRE.MatchString(r.ID) {
			k.bad(r.Pos, "%s: ids are lower-case words joined by dots", what)
		}
		if prev := ids[r.ID]; prev != nil {
			k.bad(r.Pos, "%s described twice (first at %s)", what, prev.Pos)
		}
		ids[r.ID] = r
		k.man(r.Pos, what, r.Man)
		k.errs = append(k.errs, checkGate(r.Pos, r.Gate)...)
		if r.IfDeclared != "" && !cIdentRE.MatchString(r.IfDeclared) {
			k.bad(r.Pos, "%s: if_declared %q is not a C identifier", what, r.IfDeclared)
		}
		kinds := []string{RuleArgument, RuleChain, RuleQP, RuleDevice, RuleObject, RuleUse, RuleInfo}
		if !slices.Contains(kinds, r.Kind) {
			k.bad(r.Pos, "%s: kind must be one of %v, not %q", what, kinds, r.Kind)
		}
		for _, fn := range r.Funcs {
			if funcs[fn] == nil && !k.partial {
				k.bad(r.Pos, "%s: funcs names %s, which the spec does not describe", what, fn)
			}
		}
		enforced := r.Check != nil
		switch r.Kind {
		case RuleUse, RuleInfo:
			if enforced {
				k.bad(r.Pos, "%s: a %s rule states what cannot be checked when posting; it takes no check", what, r.Kind)
			}
			if r.Errno != "" {
				k.bad(r.Pos, "%s: a %s rule has no errno", what, r.Kind)
			}
		default:
			if !enforced {
				k.bad(r.Pos, "%s: a %s rule needs a check (or is it kind use?)", what, r.Kind)
			}
			if !slices.Contains(errnos, r.Errno) {
				k.bad(r.Pos, "%s: errno must be one of %v", what, errnos)
			}
			if len(r.Funcs) == 0 {
				k.bad(r.Pos, "%s: name the functions it applies to (funcs)", what)
			}
			if r.Tests == nil || r.Tests.Good.Kind == 0 || r.Tests.Bad.Kind == 0 {
				k.bad(r.Pos, "%s: an enforced rule needs tests with good and bad examples", what)
			}
		}
		if r.Libmlx5Accepts && (!enforced || r.Libmlx5 == "") {
			k.bad(r.Pos, "%s: libmlx5_accepts is for an enforced rule whose libmlx5 text says what libmlx5 does instead", what)
		}
		if r.DeviceAPI != nil {
			if *r.DeviceAPI = strings.TrimSpace(*r.DeviceAPI); *r.DeviceAPI == "" || strings.Contains(*r.DeviceAPI, "\n") {
				k.bad(r.Pos, "%s: device_api must be one non-empty line", what)
			}
			if r.Kind != RuleArgument {
				k.bad(r.Pos, "%s: device_api says why the device API cannot break an argument rule; this rule is kind %s", what, r.Kind)
			}
		}
		if r.Follows != "" {
			if _, _, ok := ParseVersion(r.Follows); !ok || r.Libmlx5 == "" || len(r.Funcs) == 0 {
				k.bad(r.Pos, "%s: follows takes a release (\"61.0\") and needs funcs and a libmlx5 text saying what changed", what)
			}
		}
		if r.Check != nil {
			k.check(r, funcs, structs)
		}
	}
}

// check checks how a rule is enforced.
func (k *checker) check(r *Rule, funcs map[string]*Function, structs map[string]*Struct) {
	what := "rule " + r.ID
	c := r.Check
	forms := 0
	if c.Struct != "" {
		forms++
		if st := structs[c.Struct]; st == nil && !k.partial {
			k.bad(c.Pos, "%s: check names struct %s, which the spec does not describe", what, c.Struct)
		} else if st != nil && st.Opaque != "" {
			k.bad(c.Pos, "%s: check names struct %s, which is opaque: it has no mirror whose fields a validator could read", what, c.Struct)
		}
		if c.Field == "" && len(c.NotAllNull) == 0 {
			k.bad(c.Pos, "%s: a struct check needs field (or not_all_null)", what)
		}
	}
	if c.Func != "" {
		forms++
		switch f := funcs[c.Func]; {
		case f == nil && k.partial:
		case f == nil:
			k.bad(c.Pos, "%s: check names function %s, which the spec does not describe", what, c.Func)
		case c.Param == "" || !slices.ContainsFunc(f.Params, func(p *Param) bool { return p.Name == c.Param }):
			k.bad(c.Pos, "%s: check names parameter %q, which function %s does not have", what, c.Param, c.Func)
		}
	}
	if c.Chain != "" {
		forms++
	}
	if forms != 1 {
		k.bad(c.Pos, "%s: a check is on a struct field, on a function parameter, or a chain check: exactly one of struct, func, chain", what)
	}
	preds := 0
	for _, set := range []bool{len(c.OneOf) > 0, c.Enum != "", c.Flags != "", len(c.Bits) > 0, c.Zero, c.NotNull, c.Max != "", c.MultipleOf != "", len(c.NotAllNull) > 0, len(c.Has) > 0, c.NotNeg} {
		if set {
			preds++
		}
	}
	if c.Chain != "" && (preds > 0 || c.When != nil) {
		k.bad(c.Pos, "%s: a chain check takes no predicate", what)
	}
	if c.Chain == "" && preds != 1 {
		k.bad(c.Pos, "%s: give exactly one predicate (one_of, enum, flags, bits, has, zero, not_null, not_negative, max, multiple_of, not_all_null)", what)
	}
	if r.Kind == RuleChain && c.Chain == "" {
		k.bad(c.Pos, "%s: a chain rule is checked by the state machine (check: {chain: name})", what)
	}
	if r.Kind == RuleArgument && c.Chain != "" {
		k.bad(c.Pos, "%s: an argument rule is checked on a struct field or parameter", what)
	}
}
