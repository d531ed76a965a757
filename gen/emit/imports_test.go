package emit_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/mlx5gen/mlx5gen/"

// TestEmitImports: the emitters print the Go model and nothing else, so
// neither gen/emit nor anything it imports (gen/model) may import the
// header's C model or the spec: what go list -deps ./gen/emit shows,
// computed from the import lists of the module's packages.
func TestEmitImports(t *testing.T) {
	for _, pkg := range []string{"gen/emit", "gen/model"} {
		deps := moduleDeps(t, pkg)
		for _, banned := range []string{"gen/cheader", "gen/spec", "gen/resolve"} {
			if chain, ok := deps[banned]; ok {
				t.Errorf("%s imports %s: %s", pkg, banned, strings.Join(chain, " -> "))
			}
		}
	}
	// The walk sees through packages: the resolver does reach both.
	deps := moduleDeps(t, "gen/resolve")
	if _, ok := deps["gen/cheader"]; !ok {
		t.Errorf("gen/resolve does not seem to import gen/cheader: %v", deps)
	}
	if chain := moduleDeps(t, "gen")["gen/spec"]; !slices.Equal(chain[:1], []string{"gen"}) {
		t.Errorf("gen -> gen/spec: %v", chain)
	}
}

// moduleDeps returns the module's packages pkg imports, directly or not,
// each with the chain of imports that reaches it (test files left out).
func moduleDeps(t *testing.T, pkg string) map[string][]string {
	t.Helper()
	root := filepath.Join("..", "..")
	deps := map[string][]string{}
	var visit func(p string, chain []string)
	visit = func(p string, chain []string) {
		chain = append(slices.Clip(chain), p)
		files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(p), "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("package %s: no Go files (%v)", p, err)
		}
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
				path, _ := strconv.Unquote(imp.Path.Value)
				dep, ok := strings.CutPrefix(path, module)
				if !ok || deps[dep] != nil {
					continue
				}
				deps[dep] = append(slices.Clip(chain), dep)
				visit(dep, chain)
			}
		}
	}
	visit(pkg, nil)
	return deps
}
