package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// The PGO rows (row.PGO) measure the same benchmarks in a test binary
// built with profile-guided optimisation from a CPU profile of their own
// Go side, as a program is built with the profile of its own hot loop
// (go build -pgo). What it buys is inlining at the hot call sites past the
// compiler's default budget (80): the builders, setters, Start and
// Complete of runtime/sq are too big to inline into a caller's loop
// otherwise, and a Go call spills every live register (issue 26, point 3:
// "state the compiler keeps in registers across a batch"). The C side is
// the same cgo code in both binaries.

// pgoKey marks a test binary built with a profile: the key of a PGO row's
// binary is its package's plus this.
const pgoKey = "+pgo"

// binKey is the test binary a row is measured in.
func (w row) binKey() string {
	if w.PGO {
		return w.Pkg + pgoKey
	}
	return w.Pkg
}

// buildPGO builds package pkg's test binary for the rows of key, with its
// code at placement j: it runs the Go side of those rows once, in pkg's
// plain test binary of that placement (built here if no plain row needs
// it), with a CPU profile, and builds pkg again with that profile to out.
func (r *runner) buildPGO(pkg, key, out string, j int) error {
	var plain string
	if bins := r.bins[pkg]; j < len(bins) {
		plain = bins[j]
	} else {
		plain = out + ".plain"
		if err := r.buildPkg(pkg, plain, "", j); err != nil {
			return err
		}
	}
	prof := out + ".pprof"
	cmd := exec.Command(plain, "-test.run=^$", "-test.bench="+r.pattern(key, false),
		"-test.benchtime="+r.benchtime, "-test.count=1", "-test.cpuprofile="+prof)
	cmd.Dir = filepath.Join(r.root, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("the profile run for the PGO rows of %s: %v\n%s", pkg, err, b)
	}
	return r.buildPkg(pkg, out, prof, j)
}

// withPGO returns rs with a PGO twin after each row whose key is in keys:
// the same benchmarks and reference, key and path marked as built with
// the profile. The target stays the plain row's: a program that is not
// built with a profile gets the plain row's figure.
func withPGO(rs []row, keys ...string) []row {
	var out []row
	for _, w := range rs {
		out = append(out, w)
		for _, k := range keys {
			if w.Key == k {
				p := w
				p.Key, p.PGO, p.Target = w.Key+"-pgo", true, ""
				p.Path = w.Path + ", the program built with its own CPU profile (go build -pgo)"
				out = append(out, p)
			}
		}
	}
	return out
}
