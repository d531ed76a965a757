package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFreshCopy: each round's copy of a binary is a new executable file
// with the same bytes, which runs; a missing binary is an error naming it.
func TestFreshCopy(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	script := []byte("#!/bin/sh\necho ran\n")
	if err := os.WriteFile(bin, script, 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := freshCopy(bin, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := freshCopy(bin, dir)
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a == bin {
		t.Fatalf("copies %s and %s of %s are not distinct files", a, b, bin)
	}
	got, err := os.ReadFile(a)
	if err != nil || !bytes.Equal(got, script) {
		t.Fatalf("copy holds %q, %v", got, err)
	}
	if out, err := exec.Command(a).Output(); err != nil || string(out) != "ran\n" {
		t.Fatalf("the copy ran: %q, %v", out, err)
	}
	if _, err := freshCopy(filepath.Join(dir, "missing"), dir); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("a missing binary: %v", err)
	}
}

// TestRoundsRotatePlacements: round i runs the libmlx5 harness's binary of
// placement i mod the placements built, and a package built once its one
// binary in every round.
func TestRoundsRotatePlacements(t *testing.T) {
	r := newRunner(t.TempDir(), t.TempDir(), nil)
	r.bins[libPkg] = []string{"p0", "p1", "p2", "p3"}
	r.bins[verify] = []string{"v"}
	var got []string
	for range 6 {
		got = append(got, r.bin(libPkg)+r.bin(verify))
		if err := r.round(); err != nil { // no rows: nothing runs
			t.Fatal(err)
		}
	}
	if want := "p0v p1v p2v p3v p0v p1v"; strings.Join(got, " ") != want {
		t.Errorf("binaries by round: %s, want %s", strings.Join(got, " "), want)
	}
}
