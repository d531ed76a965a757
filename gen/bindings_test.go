//go:build mlx5gen_slow

package gen_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/emit"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// TestBindingsReleases compiles the cgo bindings of every supported release
// against that release's headers (the shims call each static inline
// function and macro of the header), and runs their test double's tests:
// the goldens of 56.1 and 65.0 are code that builds and holds its promises,
// not only text.
func TestBindingsReleases(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("compiling the bindings needs the go command: %v", err)
	}
	for _, v := range rdmacore.Versions {
		t.Run(v, func(t *testing.T) {
			root, err := rdmacore.IncludeRoot(".", v)
			if err != nil {
				t.Fatal(err)
			}
			const mod = "mlx5genrelease"
			res, err := gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS, Bindings: "mlx5verbs", Import: mod + "/mlx5dv"})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			for sub, files := range map[string][]emit.File{"mlx5dv": res.Files, "mlx5verbs": res.BindingFiles} {
				if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
					t.Fatal(err)
				}
				for _, f := range files {
					if err := os.WriteFile(filepath.Join(dir, sub, f.Name), f.Content, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+mod+"\n\ngo 1.24\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			inc, err := filepath.Abs(root)
			if err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"vet", "./mlx5verbs"},
				{"test", "-count=1", "-tags", emit.DoubleTag, "./mlx5verbs"},
			} {
				cmd := exec.Command(goTool, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS=-I"+inc, "GOFLAGS=-mod=mod", "GOWORK=off")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("rdma-core %s: go %s: %v\n%s", v, strings.Join(args, " "), err, out)
				}
			}
		})
	}
}
