package lint

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// flow ranks the generator's pipeline, header + spec -> model -> emit: a
// package may import only packages of a lower rank (gen/emit's whole
// import graph is checked by TestEmitImports).
var flow = map[string]int{
	"gen/diag": 0, "gen/vocab": 0,
	"gen/cheader": 1, "gen/spec": 1, "gen/model": 1,
	"gen/resolve": 2, "gen/emit": 2, "gen/wqedecode": 2,
	"gen": 3,
}

func TestGenFlow(t *testing.T) {
	root := moduleRoot(t)
	for pkg, rank := range flow {
		for _, imp := range imports(t, filepath.Join(root, filepath.FromSlash(pkg))) {
			if r, ok := flow[imp]; ok && r >= rank {
				t.Errorf("%s (rank %d) imports %s (rank %d): the flow is header + spec -> model -> emit", pkg, rank, imp, r)
			}
		}
	}
}

// runtimeFlow ranks the runtime: the generated encoders at the bottom,
// then the checker's generated tables (which name the encoders' Func and
// RuleError) and the hardware-facing helpers (barriers, register stores,
// queue and DMA memory), then the work-request checker, then the queue
// writers that use them, then the CQ poller, which reads the writers'
// bookkeeping. A package may import only lower ranks, so the checker never
// reaches back into a writer.
var runtimeFlow = map[string]int{
	"generated/mlx5dv":  0,
	"generated/mlx5prm": 0, // the PRM command layouts
	// The DEVX command header (opcode, status, syndrome) the device API
	// and the simulator read; a stand-in for generated/mlx5prm's views.
	"runtime/internal/prmcmd": 1,
	// The DEVX commands the device API sends for mkeys, PSVs, DEKs and
	// capabilities, written with generated/mlx5prm.
	"runtime/internal/devxcmd": 1,
	"generated/mlx5rules":      1,
	"runtime/barrier":          1, "runtime/mmio": 1, "runtime/dma": 1,
	"runtime/internal/gate":    1, // the owner/closer hand-off of the writers and the poller
	"runtime/qmem":             2, // queue memory is a runtime/dma mapping
	"runtime/internal/wrcheck": 3,
	"runtime/sq":               4, "runtime/rq": 4,
	"runtime/cq": 5,
	// The device API builds the writers and the poller over a backend's
	// queue memory.
	"runtime/device": 6,
	// The conformance suite every backend runs, and the hardware backend
	// over the cgo bindings (the only runtime package with cgo).
	"runtime/device/devicetest": 7,
	"runtime/device/verbs":      7, "generated/mlx5verbs": 1,
	// The simulated device's signature and crypto arithmetic imports no
	// runtime package; isaltest holds its cgo cross-check against ISA-L.
	"runtime/sim/sigblock": 0, "runtime/sim/sigblock/isaltest": 1,
	// The simulated mkeys: UMR decoding (generated segments) over sigblock.
	"runtime/sim/mkey": 1,
	// The simulated device: its protection table and CQE writer, then the
	// engine, which reads queue memory and uses both (never the writers
	// or the poller: it sees only memory, as a device does), and the mkeys.
	"runtime/sim/keys": 1, "runtime/sim/cqe": 2, "runtime/sim/engine": 3,
	// The simulated backend of the device API, over the engine.
	"runtime/sim": 7,
}

// runtimePackages lists every directory under runtime/ (but internal/
// trees) with a non-test Go file; directories that only group packages,
// like runtime/sim, need no rank.
func runtimePackages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(root, "runtime"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "internal" {
			return filepath.SkipDir
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				rel, _ := filepath.Rel(root, path)
				out = append(out, filepath.ToSlash(rel))
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRuntimeFlow(t *testing.T) {
	root := moduleRoot(t)
	for _, pkg := range runtimePackages(t, root) {
		if _, ok := runtimeFlow[pkg]; !ok {
			t.Errorf("%s has no rank in runtimeFlow", pkg)
		}
	}
	for pkg, rank := range runtimeFlow {
		for _, imp := range imports(t, filepath.Join(root, filepath.FromSlash(pkg))) {
			if r, ok := runtimeFlow[imp]; !ok || r >= rank {
				t.Errorf("%s (rank %d) imports %s (rank %d, ok %v): the runtime flows generated -> memory and barriers -> checker -> writers", pkg, rank, imp, r, ok)
			}
		}
	}
}

// imports lists the module packages the non-test files of dir import.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	if len(files) == 0 {
		t.Fatalf("%s: no Go files", dir)
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(p, "github.com/mlx5gen/mlx5gen/"); ok {
				out = append(out, rest)
			}
		}
	}
	return out
}

// TestPureCgoFree keeps the generated package and the runtime free of cgo
// (and so of rdma-core): only the bindings (generated/mlx5verbs) use it,
// and nothing below them imports the bindings.
func TestPureCgoFree(t *testing.T) {
	root := moduleRoot(t)
	for _, pkg := range []string{"generated/mlx5dv", "runtime/barrier", "runtime/mmio", "runtime/qmem", "runtime/dma", "runtime/internal/wrcheck", "runtime/internal/gate", "runtime/sq", "runtime/rq", "runtime/cq", "runtime/device", "runtime/device/devicetest"} {
		files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(pkg), "*.go"))
		if len(files) == 0 {
			t.Errorf("%s: no Go files", pkg)
		}
		for _, f := range files {
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if p == "C" || strings.HasSuffix(p, "/generated/mlx5verbs") {
					t.Errorf("%s imports %q: it must build with CGO_ENABLED=0 and without rdma-core", f, p)
				}
			}
		}
	}
}
