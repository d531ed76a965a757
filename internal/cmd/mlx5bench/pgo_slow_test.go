//go:build mlx5gen_slow

package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// TestSmokePGO builds a PGO row end to end without its plain row (slow:
// the PGO build recompiles the standard library with the profile, about
// a minute): the plain binary is built for the profile run, the profile
// run leaves a profile, the twin is measured in a binary of its own,
// built with it, and gets a figure. (With the plain row selected too,
// buildPGO takes that row's binary instead.)
func TestSmokePGO(t *testing.T) {
	root, err := rdmacore.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	var twin []row
	for _, w := range withPGO(plainRows, "encoders") {
		if w.Key == "encoders-pgo" {
			twin = append(twin, w)
		}
	}
	if len(twin) != 1 {
		t.Fatalf("no PGO twin of the encoders row: %v", twin)
	}
	r := newRunner(root, tmp, twin)
	r.benchtime = "100x"
	if err := r.build(); err != nil {
		t.Fatal(err)
	}
	bins := r.bins[verify+pgoKey]
	if _, ok := r.bins[verify]; ok || len(bins) != 1 {
		t.Fatalf("binaries: %v", r.bins)
	}
	pgo := bins[0]
	if fi, err := os.Stat(pgo + ".pprof"); err != nil || fi.Size() == 0 {
		t.Fatalf("no profile from the profile run: %v", err)
	}
	a, errA := os.ReadFile(pgo + ".plain")
	b, errB := os.ReadFile(pgo)
	if errA != nil || errB != nil || bytes.Equal(a, b) {
		t.Fatalf("the PGO binary is the plain one, or either is missing (%v, %v)", errA, errB)
	}
	if err := r.round(); err != nil {
		t.Fatal(err)
	}
	if k := "encoders-pgo"; len(r.vals[k]) != 1 || len(r.refs[k]) != 1 || r.vals[k][0] <= 0 {
		t.Errorf("%s: values %v, references %v", k, r.vals[k], r.refs[k])
	}
}
