//go:build mlx5gen_slow

package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// TestSmokePGO builds a row and its PGO twin end to end (slow: the PGO
// build recompiles the standard library with the profile, about a
// minute): the profile run leaves a profile, the twin is measured in a
// binary of its own, built with it, and both rows get a figure.
func TestSmokePGO(t *testing.T) {
	root, err := rdmacore.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	var enc row
	for _, w := range plainRows {
		if w.Key == "encoders" {
			enc = w
		}
	}
	r := newRunner(root, tmp, withPGO([]row{enc}, "encoders"))
	r.benchtime = "100x"
	if err := r.build(); err != nil {
		t.Fatal(err)
	}
	plain, pgo := r.bins[verify], r.bins[verify+pgoKey]
	if plain == "" || pgo == "" || plain == pgo {
		t.Fatalf("binaries: %v", r.bins)
	}
	if fi, err := os.Stat(pgo + ".pprof"); err != nil || fi.Size() == 0 {
		t.Fatalf("no profile from the profile run: %v", err)
	}
	a, errA := os.ReadFile(plain)
	b, errB := os.ReadFile(pgo)
	if errA != nil || errB != nil || bytes.Equal(a, b) {
		t.Fatalf("the PGO binary is the plain one (%v, %v)", errA, errB)
	}
	if err := r.round(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"encoders", "encoders-pgo"} {
		if len(r.vals[k]) != 1 || len(r.refs[k]) != 1 || r.vals[k][0] <= 0 {
			t.Errorf("%s: values %v, references %v", k, r.vals[k], r.refs[k])
		}
	}
}
