package gen_test

import "testing"

// TestFuncValuesStable: a Func value names the same function in the
// packages of every release, so a downstream package generated from a newer
// header can alias Func and compare a RuleError's Func with its constants.
func TestFuncValuesStable(t *testing.T) {
	base := generate(t, committed).Package.API
	for _, v := range []string{"56.1", "65.0"} {
		api := generate(t, v).Package.API
		if api.NumFuncs != base.NumFuncs {
			t.Errorf("%s: NumFuncs %d, %s has %d", v, api.NumFuncs, committed, base.NumFuncs)
		}
		ids := map[string]int{}
		for _, f := range api.Funcs {
			ids[f.Name] = f.ID
		}
		for _, f := range base.Funcs {
			if id, ok := ids[f.Name]; ok && id != f.ID {
				t.Errorf("%s: %s is Func %d, in %s %d", v, f.Name, id, committed, f.ID)
			}
		}
	}
}
