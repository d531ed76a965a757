package emit_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/emit"
)

// A case with -bindings also generates the cgo bindings; their golden
// files are named bindings.<file>.golden.
const bindingsPrefix = "bindings."

// caseModule is the module path the bindings of a case import the case's
// package from.
const caseModule = "mlx5gencase"

// checkBindings compiles a case's bindings with cgo, against the case's
// own include tree, in a temporary module that holds the generated package
// too (go/types cannot check a cgo package): go vet without and with the
// test double's tag, then the double's generated tests.
func checkBindings(t *testing.T, c gen.Config, res *gen.Result) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("compiling the bindings needs the go command: %v", err)
	}
	dir := t.TempDir()
	write := func(sub string, files []emit.File) {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(d, f.Name), f.Content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(c.Package, res.Files)
	write(c.Bindings, res.BindingFiles)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+caseModule+"\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inc, err := filepath.Abs(c.IncludeRoot)
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS=-I"+inc, "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("vet", "./...")
	run("vet", "-tags", emit.DoubleTag, "./...")
	run("test", "-count=1", "-tags", emit.DoubleTag, "./"+c.Bindings)
}
