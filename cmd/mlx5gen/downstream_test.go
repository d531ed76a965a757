package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDownstream uses mlx5gen from another module, as the README says to:
// testdata/downstream has a go:generate line running cmd/mlx5gen and code
// and a test using the generated package. Copied out of the checkout with
// its replace directive pointed back at it, it must generate, build, vet
// and pass its test.
func TestDownstream(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/usr/include/infiniband/mlx5dv.h"); err != nil {
		t.Fatalf("the downstream module generates from the installed header: %v (scripts/setup.sh installs libibverbs-dev)", err)
	}
	dir := t.TempDir()
	src := filepath.Join(root, "testdata", "downstream")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "go.mod" {
			b = []byte(strings.Replace(string(b), "=> ../..", "=> "+root, 1))
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("generate", "./...")
	if _, err := os.Stat(filepath.Join(dir, "mlx5dv", "segments.go")); err != nil {
		t.Fatalf("go generate wrote no package: %v", err)
	}
	goCmd("build", "./...")
	goCmd("vet", "./...")
	if out := goCmd("test", "-count=1", "./..."); !strings.Contains(out, "ok  \texample.com/downstream") {
		t.Fatalf("go test:\n%s", out)
	}
}
