package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// runner holds the binaries built once for a run and the measurements of
// every round: samples[row key] is one value per round, refs likewise.
type runner struct {
	root, tmp    string
	benchtime    string // for gen/verify's benchmarks
	genBenchtime string // for BenchmarkGenerate
	rows         []row
	bins         map[string][]string // package -> test binaries (one a placement), "process" -> mlx5gen
	placements   int                 // of the libmlx5 harness's code (layout.go)
	pad          padPkg              // the package a placement pads ("": the harness)
	samples      int                 // runs of each benchmark a round, the least of them kept
	done         int                 // rounds run
	include      string              // 44.0 headers, for the whole-process row
	vals, refs   map[string][]float64
	allocs       map[string][]float64
	lib          *libBuild // libmlx5's build for the Lib rows (nil: none measured)
}

func newRunner(root, tmp string, rs []row) *runner {
	return &runner{root: root, tmp: tmp, rows: rs, bins: map[string][]string{}, placements: 1, samples: 1,
		vals: map[string][]float64{}, refs: map[string][]float64{}, allocs: map[string][]float64{}}
}

// packages lists the test binaries of the measured rows in table order:
// a package, or a package built with a profile (binKey).
func (r *runner) packages() []string {
	var ps []string
	for _, w := range r.rows {
		if w.NotMeasured == "" && !contains(ps, w.binKey()) {
			ps = append(ps, w.binKey())
		}
	}
	return ps
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// build compiles each benchmark package's test binary once (and once more
// with a profile for the PGO rows), the libmlx5 harness's once a
// placement, and mlx5gen for the whole-process row.
func (r *runner) build() error {
	for i, p := range r.packages() {
		pkg, pgo := strings.CutSuffix(p, pgoKey)
		n := 1
		if pkg == libPkg {
			n = r.placements
		}
		for j := range n {
			out := filepath.Join(r.tmp, fmt.Sprintf("bench%d.%d", i, j))
			var err error
			if pgo {
				err = r.buildPGO(pkg, p, out, j)
			} else {
				err = r.buildPkg(p, out, "", j)
			}
			if err != nil {
				return err
			}
			r.bins[p] = append(r.bins[p], out)
		}
	}
	return nil
}

// buildPkg compiles package p's test binary to out, with the CPU profile
// pgo unless it is "" (mlx5gen itself for "process"), and checks a
// libmlx5 binary's bytes; the libmlx5 harness with its code at placement
// j.
func (r *runner) buildPkg(p, out, pgo string, j int) error {
	args := []string{"test", "-c", "-o", out}
	if pgo != "" {
		args = append(args, "-pgo="+pgo)
	}
	if p == libPkg {
		ov, err := r.layoutOverlay(j)
		if err != nil {
			return err
		}
		args = append(args, "-tags", "libmlx5", "-overlay", ov)
	}
	args = append(args, p)
	if p == "process" {
		args = []string{"build", "-o", out, "./cmd/mlx5gen"}
		inc, err := rdmacore.IncludeRoot(r.root, "44.0")
		if err != nil {
			return err
		}
		r.include = inc
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = r.root
	if p == libPkg {
		cmd.Env = r.lib.cgoEnv()
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, b)
	}
	if p == libPkg {
		return r.checkBytes(out)
	}
	return nil
}

// checkBytes runs the harness's byte check (TestBytesAgree): a figure of a
// libmlx5 path that writes other bytes than its Go twin would compare
// different work.
func (r *runner) checkBytes(bin string) error {
	cmd := exec.Command(bin, "-test.run=^TestBytesAgree$", "-test.count=1")
	cmd.Dir = filepath.Join(r.root, libPkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("libmlx5 %s (from %s) and runtime/sq do not write the same bytes, so no libmlx5 row is measured: %v\n%s",
			r.lib.Version, r.lib.Src, err, b)
	}
	return nil
}

// pattern is the -test.bench expression selecting exactly the benchmarks
// the rows of test binary key need and their references (one level per
// '/'); without the references when refs is false (a profile's run).
func (r *runner) pattern(key string, refs bool) string {
	var tops, subs []string
	for _, w := range r.rows {
		if w.binKey() != key || w.NotMeasured != "" {
			continue
		}
		bs := []string{w.Bench, w.Ref}
		if !refs {
			bs = bs[:1]
		}
		for _, b := range bs {
			if b == "" {
				continue
			}
			top, sub, _ := strings.Cut(b, "/")
			top, sub = regexp.QuoteMeta(top), regexp.QuoteMeta(sub)
			if !contains(tops, top) {
				tops = append(tops, top)
			}
			if sub != "" && !contains(subs, sub) {
				subs = append(subs, sub)
			}
		}
	}
	p := "^(" + strings.Join(tops, "|") + ")$"
	if len(subs) > 0 {
		p += "/^(" + strings.Join(subs, "|") + ")$"
	}
	return p
}

// round runs every package's benchmarks once, back to back, and records
// each row's value and reference from that one process; the libmlx5 rows
// in the binary of the next placement.
func (r *runner) round() error {
	defer func() { r.done++ }()
	for _, p := range r.packages() {
		res, err := r.runPkg(p)
		if err != nil {
			return err
		}
		for _, w := range r.rows {
			if w.binKey() != p || w.NotMeasured != "" {
				continue
			}
			v, ok := res[w.Bench][w.Unit]
			if !ok {
				return fmt.Errorf("%s: no %s for %s in the output", p, w.Unit, w.Bench)
			}
			r.vals[w.Key] = append(r.vals[w.Key], v)
			if a, ok := res[w.Bench]["allocs/op"]; ok {
				r.allocs[w.Key] = append(r.allocs[w.Key], a)
			}
			if w.Ref != "" {
				u := w.RefUnit
				if u == "" {
					u = "ns/op"
				}
				rv, ok := res[w.Ref][u]
				if !ok {
					return fmt.Errorf("%s: no %s for %s in the output", p, u, w.Ref)
				}
				r.refs[w.Key] = append(r.refs[w.Key], rv)
			}
		}
	}
	return nil
}

// bin is package p's test binary for the next round: the libmlx5
// harness's of the round's placement.
func (r *runner) bin(p string) string {
	bs := r.bins[p]
	return bs[r.done%len(bs)]
}

func (r *runner) runPkg(p string) (map[string]result, error) {
	bin := r.bin(p)
	if p == "process" {
		return r.runProcess(bin)
	}
	bt := r.benchtime
	if p == command {
		bt = r.genBenchtime
	}
	// Each round runs its own copy of the binary: on the machines this was
	// measured on, one copy of a test binary ran a row up to 50% slower
	// than another copy of the same file, run after run (the placement of
	// its pages; docs/performance.md, "Copies of one binary"), so a run of
	// one copy would report that copy's draw in every round.
	run, err := freshCopy(bin, r.tmp)
	if err != nil {
		return nil, err
	}
	defer os.Remove(run)
	cmd := exec.Command(run, "-test.run=^$", "-test.bench="+r.pattern(p, true),
		"-test.benchtime="+bt, fmt.Sprintf("-test.count=%d", r.samples), "-test.benchmem")
	cmd.Dir = filepath.Join(r.root, strings.TrimSuffix(p, pgoKey))
	if p == command {
		// BenchmarkGenerate is the cold run: never the model cache the
		// environment may name.
		cmd.Env = append(os.Environ(), "MLX5GENCACHE=off")
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", p, err, out.Bytes())
	}
	return parseBench(&out, r.samples)
}

// freshCopy copies the executable bin into a new file in dir and returns
// its path; the caller removes it.
func freshCopy(bin, dir string) (string, error) {
	src, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp(dir, "run-*-"+filepath.Base(bin))
	if err != nil {
		return "", err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(dst.Name(), 0o755)
	}
	if err != nil {
		os.Remove(dst.Name())
		return "", fmt.Errorf("copying %s: %w", bin, err)
	}
	return dst.Name(), nil
}

// runProcess times two fresh runs of `mlx5gen generate` of the 44.0
// header with new, empty caches: the first is cold (a miss: it parses the
// header, emits, and stores the model and the output), the second warm
// (nothing changed: an output cache hit over the tree the first wrote).
func (r *runner) runProcess(bin string) (map[string]result, error) {
	out, err := os.MkdirTemp(r.tmp, "gen")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	cache, err := os.MkdirTemp(r.tmp, "cache")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(cache)
	res := map[string]result{}
	for _, name := range []string{"mlx5gen generate", "mlx5gen generate warm"} {
		cmd := exec.Command(bin, "generate", "-I", r.include, "-out", out, "-rules", filepath.Join(out, "RULES.md"))
		cmd.Env = append(os.Environ(), "MLX5GENCACHE="+cache)
		start := time.Now()
		b, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("%s: %v\n%s", name, err, b)
		}
		res[name] = result{"ns/op": float64(d.Nanoseconds())}
	}
	return res, nil
}
