package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/mlx5gen/mlx5gen"

// Packages the generator must not depend on: its own output, the runtime
// that runs on it, and the conformance tooling that runs the runtime.
var notBelowGenerator = []string{"generated", "runtime", "internal/replay", "internal/vectors", "internal/cmd"}

func belowGenerator(importPath string) bool {
	for _, p := range notBelowGenerator {
		if importPath == modulePath+"/"+p || strings.HasPrefix(importPath, modulePath+"/"+p+"/") {
			return false
		}
	}
	return true
}

// TestGeneratorDeps: go list -deps of the command, with its tests, holds
// neither the generated package nor the runtime.
func TestGeneratorDeps(t *testing.T) {
	for _, args := range [][]string{{"list", "-deps", "."}, {"list", "-deps", "-test", "."}} {
		out, err := exec.Command("go", args...).Output()
		if err != nil {
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		deps := strings.Fields(string(out))
		if !strings.Contains(string(out), modulePath+"/gen/model") {
			t.Fatalf("go %s lists no gen/model; the check proves nothing:\n%s", strings.Join(args, " "), out)
		}
		for _, d := range deps {
			if !belowGenerator(d) {
				t.Errorf("go %s: cmd/mlx5gen depends on %s", strings.Join(args, " "), d)
			}
		}
	}
}

// copyModule copies the checkout (without .git and the header cache) to a
// new directory, leaving out the directories and files skip names.
func copyModule(t *testing.T, skip func(rel string, d fs.DirEntry) bool) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			if rel == ".git" || rel == ".cache" || skip(filepath.ToSlash(rel), d) {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() || skip(filepath.ToSlash(rel), d) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// goIn runs the go command in dir, with the checkout's header cache.
func goIn(t *testing.T, dir string, args ...string) ([]byte, error) {
	t.Helper()
	cache, err := filepath.Abs("../../.cache")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly", "MLX5GEN_CACHE="+cache)
	return cmd.CombinedOutput()
}

// importsAbove reports whether a Go file imports a package the generator
// must not depend on.
func importsAbove(t *testing.T, path string) bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); strings.HasPrefix(p, modulePath+"/") && !belowGenerator(p) {
			return true
		}
	}
	return false
}

// TestBuildsWithoutGenerated copies the module without the generated
// package, the runtime and the conformance tooling, and without the tests
// that import them (a package that imports one does not build there), and
// builds and vets the generator there; the generator it builds then writes
// the package back, which vets.
func TestBuildsWithoutGenerated(t *testing.T) {
	root, _ := filepath.Abs("../..")
	var dropped []string
	dir := copyModule(t, func(rel string, d fs.DirEntry) bool {
		if d.IsDir() {
			return !belowGenerator(modulePath + "/" + rel)
		}
		if strings.HasSuffix(rel, "_test.go") && !strings.Contains("/"+rel, "/testdata/") && importsAbove(t, filepath.Join(root, rel)) {
			dropped = append(dropped, rel)
			return true
		}
		return false
	})
	if !slices.Contains(dropped, "gen/wqedecode/wqedecode_test.go") {
		t.Fatalf("the copy kept gen/wqedecode/wqedecode_test.go, which imports the generated package; dropped: %v", dropped)
	}
	if _, err := os.Stat(filepath.Join(dir, "generated")); !os.IsNotExist(err) {
		t.Fatalf("the copy holds generated/: %v", err)
	}
	if out, err := goIn(t, dir, "build", "-o", "mlx5gen.bin", "./cmd/mlx5gen"); err != nil {
		t.Fatalf("go build ./cmd/mlx5gen without generated/: %v\n%s", err, out)
	}
	if out, err := goIn(t, dir, "vet", "./cmd/mlx5gen"); err != nil {
		t.Fatalf("go vet ./cmd/mlx5gen without generated/: %v\n%s", err, out)
	}
	gen := exec.Command(filepath.Join(dir, "mlx5gen.bin"), "generate", "-rdma-core", "44.0", "-out", "generated/mlx5dv")
	gen.Dir = dir
	gen.Env = append(os.Environ(), "MLX5GEN_CACHE="+filepath.Join(root, ".cache"))
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("mlx5gen generate into the copy: %v\n%s", err, out)
	}
	if out, err := goIn(t, dir, "vet", "./generated/mlx5dv"); err != nil {
		t.Fatalf("go vet of the package the generator wrote: %v\n%s", err, out)
	}
}

// TestGenerateRepairsBrokenPackage breaks the generated package of a copy
// of the module (a type error, then a syntax error) and runs go generate
// ./generated/ there: it must write the committed package back.
func TestGenerateRepairsBrokenPackage(t *testing.T) {
	root, _ := filepath.Abs("../..")
	dir := copyModule(t, func(string, fs.DirEntry) bool { return false })
	rules := filepath.Join("generated", "mlx5dv", "rules.go")
	want, err := os.ReadFile(filepath.Join(root, rules))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, text string }{
		{"type error", "\nvar _ int = \"not an int\"\n"},
		{"syntax error", "\nfunc {\n"},
	} {
		if err := os.WriteFile(filepath.Join(dir, rules), append(bytes.Clone(want), c.text...), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := goIn(t, dir, "build", "./generated/mlx5dv"); err == nil {
			t.Fatalf("%s: the broken package builds; the test proves nothing:\n%s", c.name, out)
		}
		if out, err := goIn(t, dir, "generate", "./generated/"); err != nil {
			t.Fatalf("%s: go generate ./generated/ with a broken package: %v\n%s", c.name, err, out)
		}
		got, err := os.ReadFile(filepath.Join(dir, rules))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: go generate did not write rules.go back as committed", c.name)
		}
		if out, err := goIn(t, dir, "vet", "./generated/..."); err != nil {
			t.Fatalf("%s: go vet ./generated/... after go generate: %v\n%s", c.name, err, out)
		}
	}
}
