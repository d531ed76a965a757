package gen_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/emit"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// TestGenerateCacheSameOutput: the whole output (every file, the rules,
// the tables and the bindings) is the same without the model cache, with
// it cold (a miss, then stored) and with it warm (a hit), for every
// release.
func TestGenerateCacheSameOutput(t *testing.T) {
	for _, v := range rdmacore.Versions {
		t.Run(v, func(t *testing.T) {
			root, err := rdmacore.IncludeRoot(".", v)
			if err != nil {
				t.Fatal(err)
			}
			var hits int
			c := &cheader.Cache{Dir: filepath.Join(t.TempDir(), "cache"), Log: func(format string, _ ...any) {
				if format == "model cache: hit %s" {
					hits++
				}
			}}
			run := func(cache *cheader.Cache) *gen.Result {
				res, err := gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS, Bindings: "mlx5verbs",
					Tables: "mlx5rules", Import: pureImport, ModelCache: cache})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			off, cold, warm := run(nil), run(c), run(c)
			if hits != 1 {
				t.Fatalf("%d cache hits, want 1 (the warm run)", hits)
			}
			for _, r := range []*gen.Result{cold, warm} {
				if !bytes.Equal(r.Rules, off.Rules) {
					t.Fatal("RULES.md differs with the cache")
				}
				sameFiles(t, "package", off.Files, r.Files)
				sameFiles(t, "tables", off.Tables, r.Tables)
				sameFiles(t, "bindings", off.BindingFiles, r.BindingFiles)
				if r.C.Version != off.C.Version || r.C.VersionSource != off.C.VersionSource {
					t.Fatalf("release %q (%s) with the cache, %q (%s) without", r.C.Version, r.C.VersionSource, off.C.Version, off.C.VersionSource)
				}
			}
		})
	}
}

func sameFiles(t *testing.T, what string, want, got []emit.File) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d files with the cache, %d without", what, len(got), len(want))
	}
	for i := range want {
		if want[i].Name != got[i].Name || !bytes.Equal(want[i].Content, got[i].Content) {
			t.Fatalf("%s: %s differs with the cache", what, want[i].Name)
		}
	}
}
