package lint

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

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
	if _, ok := moduleDeps(t, "gen/resolve")["gen/cheader"]; !ok {
		t.Error("gen/resolve does not seem to import gen/cheader")
	}
	if chain := moduleDeps(t, "gen")["gen/spec"]; len(chain) == 0 || chain[0] != "gen" {
		t.Errorf("gen -> gen/spec: %v", chain)
	}
}

// moduleDeps returns the module's packages pkg imports, directly or not,
// each with the chain of imports that reaches it (test files left out).
func moduleDeps(t *testing.T, pkg string) map[string][]string {
	t.Helper()
	root := moduleRoot(t)
	deps := map[string][]string{}
	var visit func(p string, chain []string)
	visit = func(p string, chain []string) {
		chain = append(slices.Clip(chain), p)
		for _, dep := range imports(t, filepath.Join(root, filepath.FromSlash(p))) {
			if deps[dep] == nil {
				deps[dep] = append(slices.Clip(chain), dep)
				visit(dep, chain)
			}
		}
	}
	visit(pkg, nil)
	return deps
}
