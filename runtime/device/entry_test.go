package device_test

import (
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
	(*device.Mkey)(nil), (*device.DEK)(nil)}

// entryPrefixes start the names of the methods that stand for a C call
// with arguments the man pages constrain.
var entryPrefixes = []string{"Create", "Reg", "Modify", "Alloc"}

// TestEntryPointsMapped: every Create/Reg/Modify/Alloc method of the API
// is mapped to the C functions whose validators it runs
// (devicetest.EntryPoints), and every argument rule of those functions
// is either run through the API on every backend the conformance suite
// runs on (devicetest.RuleCases, good and bad) or says why no Go value
// can break it (devicetest.Unreachable). A new entry point, or a new rule
// of a mapped function, fails here until it is covered.
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

// checkRulesCovered: every argument rule of cfuncs has a case or a
// reason, and every case and reason is such a rule.
func checkRulesCovered(t *testing.T, cfuncs map[string]bool) {
	rules := map[string]bool{}
	for _, r := range mlx5rules.Rules {
		if r.Kind != "argument" || !slices.ContainsFunc(r.Funcs, func(f string) bool { return cfuncs[f] }) {
			continue
		}
		rules[r.ID] = true
		_, hasCase := devicetest.RuleCases[r.ID]
		why, unreachable := devicetest.Unreachable[r.ID]
		switch {
		case hasCase && unreachable:
			t.Errorf("rule %s has a case and is listed unreachable", r.ID)
		case unreachable && why == "":
			t.Errorf("rule %s is unreachable without a reason", r.ID)
		case !hasCase && !unreachable:
			t.Errorf("rule %s (%v) is run by no entry point: add a case to devicetest.RuleCases or a reason to Unreachable", r.ID, r.Funcs)
		}
	}
	for id := range devicetest.RuleCases {
		if !rules[id] {
			t.Errorf("devicetest.RuleCases has %s, no argument rule of a mapped C function", id)
		}
	}
	for id := range devicetest.Unreachable {
		if !rules[id] {
			t.Errorf("devicetest.Unreachable has %s, no argument rule of a mapped C function", id)
		}
	}
}
