package device_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// apiTypes are the types of the device API whose methods may create,
// register or modify objects.
var apiTypes = []any{(*device.Context)(nil), (*device.PD)(nil), (*device.QP)(nil), (*device.CQ)(nil),
	(*device.SRQ)(nil), (*device.CompChannel)(nil), (*device.MR)(nil), (*device.Umem)(nil),
	(*device.Mkey)(nil), (*device.DEK)(nil), (*device.DevxObj)(nil), (*device.FlowMatcher)(nil), (*device.Flow)(nil)}

// entryPrefixes start the names of the methods that stand for a C call
// with arguments the man pages constrain.
var entryPrefixes = []string{"Create", "Reg", "Modify", "Alloc"}

// TestEntryPointsMapped: every Create/Reg/Modify/Alloc method of the API
// is mapped to the C functions whose validators it runs
// (devicetest.EntryPoints), and every argument rule of those functions
// is either run through the API on every backend the conformance suite
// runs on (devicetest.RuleCases, good and bad) or says in its descriptor
// why no Go value can break it (device_api, read from generated/mlx5rules).
// A new entry point, or a new rule of a mapped function, fails here until
// it is covered.
func TestEntryPointsMapped(t *testing.T) {
	methods := map[string]bool{}
	for _, v := range apiTypes {
		typ := reflect.TypeOf(v)
		for i := range typ.NumMethod() {
			name := typ.Elem().Name() + "." + typ.Method(i).Name
			for _, p := range entryPrefixes {
				if strings.HasPrefix(typ.Method(i).Name, p) {
					methods[name] = true
				}
			}
		}
	}
	for m := range methods {
		if _, ok := devicetest.EntryPoints[m]; !ok {
			t.Errorf("%s is not mapped to the C functions whose validators it runs (devicetest.EntryPoints)", m)
		}
	}
	cfuncs := map[string]bool{}
	known := map[string]bool{}
	for _, f := range mlx5rules.Funcs {
		known[f.Name] = true
	}
	for m, fs := range devicetest.EntryPoints {
		if !methods[m] {
			t.Errorf("devicetest.EntryPoints maps %s, which is no Create/Reg/Modify/Alloc method of the API", m)
		}
		for _, f := range fs {
			if !known[f] {
				t.Errorf("%s: no C function %s in generated/mlx5rules", m, f)
			}
			cfuncs[f] = true
		}
	}
	checkRulesCovered(t, cfuncs)
}

// checkRulesCovered checks the rules of the mapped C functions cfuncs
// against rules, the generated rule table.
func checkRulesCovered(t *testing.T, cfuncs map[string]bool) {
	for _, e := range rulesCovered(cfuncs, mlx5rules.Rules) {
		t.Error(e)
	}
}

// rulesCovered says what is wrong with the coverage of rules: an
// argument rule of cfuncs with neither a case nor a device_api note, or
// with both; a case that is no such rule; a note on a rule the device API
// does not stand for (a note nothing reads would go stale unseen).
func rulesCovered(cfuncs map[string]bool, rules []mlx5rules.RuleInfo) []string {
	var errs []string
	mapped := map[string]bool{}
	for _, r := range rules {
		if r.Kind != "argument" || !slices.ContainsFunc(r.Funcs, func(f string) bool { return cfuncs[f] }) {
			if r.DeviceAPI != "" {
				errs = append(errs, fmt.Sprintf("rule %s has a device_api note but is no argument rule of a C function devicetest.EntryPoints maps", r.ID))
			}
			continue
		}
		mapped[r.ID] = true
		_, hasCase := devicetest.RuleCases[r.ID]
		switch {
		case hasCase && r.DeviceAPI != "":
			errs = append(errs, fmt.Sprintf("rule %s has a case in devicetest.RuleCases and a device_api note saying the API cannot break it", r.ID))
		case !hasCase && r.DeviceAPI == "":
			errs = append(errs, fmt.Sprintf("rule %s (%v) is run by no entry point: add a case to devicetest.RuleCases, or a device_api note to its descriptor in spec/api saying why no call of the API can break it", r.ID, r.Funcs))
		}
	}
	for id := range devicetest.RuleCases {
		if !mapped[id] {
			errs = append(errs, fmt.Sprintf("devicetest.RuleCases has %s, no argument rule of a mapped C function", id))
		}
	}
	slices.Sort(errs)
	return errs
}

// TestRulesCoveredFails: the coverage check fails for a rule whose
// device_api note is removed, for a note beside a case, and for a note
// on a rule the device API does not stand for, so that
// TestEntryPointsMapped passing means every rule is covered.
func TestRulesCoveredFails(t *testing.T) {
	cfuncs := map[string]bool{}
	for _, fs := range devicetest.EntryPoints {
		for _, f := range fs {
			cfuncs[f] = true
		}
	}
	if errs := rulesCovered(cfuncs, mlx5rules.Rules); len(errs) > 0 {
		t.Fatalf("the generated rules: %v", errs)
	}
	change := func(id string, set func(*mlx5rules.RuleInfo)) []string {
		rules := slices.Clone(mlx5rules.Rules)
		i := slices.IndexFunc(rules, func(r mlx5rules.RuleInfo) bool { return r.ID == id })
		if i < 0 {
			t.Fatalf("no rule %s", id)
		}
		set(&rules[i])
		return rulesCovered(cfuncs, rules)
	}
	for _, c := range []struct {
		id   string
		set  func(*mlx5rules.RuleInfo)
		want string
	}{
		{"dek.pd", func(r *mlx5rules.RuleInfo) { r.DeviceAPI = "" }, "rule dek.pd ([mlx5dv_dek_create]) is run by no entry point"},
		{"reg_mr.access", func(r *mlx5rules.RuleInfo) { r.DeviceAPI = "x" }, "rule reg_mr.access has a case in devicetest.RuleCases and a device_api note"},
		{"ibv_wr.flags", func(r *mlx5rules.RuleInfo) { r.DeviceAPI = "x" }, "rule ibv_wr.flags has a device_api note but is no argument rule"},
	} {
		if errs := change(c.id, c.set); len(errs) != 1 || !strings.HasPrefix(errs[0], c.want) {
			t.Errorf("%s changed: %q, want one error %q", c.id, errs, c.want)
		}
	}
}
