package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// The go:generate line of testdata/downstream, as a user writes it.
const downstreamGenerate = "//go:generate go tool mlx5gen generate -alias github.com/mlx5gen/mlx5gen/generated/mlx5dv -out mlx5dv"

// downstreamRuntime is the go get line docs/downstream.md gives for a
// module whose code uses the runtime, the device API and the simulator.
var downstreamRuntime = []string{"go", "get",
	"github.com/mlx5gen/mlx5gen/runtime/sq",
	"github.com/mlx5gen/mlx5gen/runtime/device",
	"github.com/mlx5gen/mlx5gen/runtime/sim"}

// TestDownstream uses mlx5gen from another module with the steps the
// README gives for a module that is not published: go mod init, require
// mlx5gen with a replace pointing at the checkout, go get -tool, then go
// generate, build, vet and test. The module's test posts an RDMA write
// through runtime/sq with the generated package's constants and checks the
// WQE's bytes; with a header newer than the committed package's, a constant
// only that header has must be of the committed package's type.
func TestDownstream(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"44.0", "65.0"} {
		t.Run(v, func(t *testing.T) { downstream(t, root, v) })
	}
}

func downstream(t *testing.T, root, version string) {
	inc, err := rdmacore.IncludeRoot(root, version)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyDownstream(t, filepath.Join(root, "testdata", "downstream"), dir, inc)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("go", "mod", "init", "example.com/downstream")
	// Everything comes from the module cache, which building this test
	// filled, vouched for by the checkout's go.sum: no network, no checksum
	// database (GOPROXY=off also keeps go get from asking the proxy whether
	// .../cmd/mlx5gen is a module of its own; one answering 403 rather than
	// 404 fails it). The go commands run as a user types them.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	run("go", "mod", "edit", "-require=github.com/mlx5gen/mlx5gen@v0.0.0-00010101000000-000000000000",
		"-replace=github.com/mlx5gen/mlx5gen="+root)
	run("go", "get", "-tool", "github.com/mlx5gen/mlx5gen/cmd/mlx5gen")
	// The tool needs neither the runtime nor the generated package; the
	// module's code does, so it asks for every runtime package it imports,
	// before go generate: their requirements (golang.org/x/crypto for the
	// simulator's AES-XTS, ...) must be in go.mod before any go command
	// loads the module's code, and go mod tidy cannot add them while the
	// package to be generated does not exist yet.
	run(downstreamRuntime...)
	out := run("go", "generate", "./...")
	if !strings.Contains(out, "(rdma-core "+version) || !strings.Contains(out, "types are aliases of github.com/mlx5gen/mlx5gen/generated/mlx5dv") {
		t.Fatalf("go generate did not alias the committed package:\n%s", out)
	}
	run("go", "build", "./...")
	run("go", "vet", "./...")
	want := []string{"--- PASS: TestWriteSignaled", "--- PASS: TestRuleError", "--- PASS: TestWriteOnSimulator"}
	tags := "-tags="
	if version != "44.0" {
		tags = "-tags=newer"
		want = append(want, "--- PASS: TestNewerConstants")
	}
	out = run("go", "test", "-count=1", "-v", tags, "./...")
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("go test: no %q in\n%s", w, out)
		}
	}
}

// copyDownstream copies the module's Go files into dir and points its
// go:generate line at include root inc, so that the test does not depend
// on the machine's installed header.
func copyDownstream(t *testing.T, src, dir, inc string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); strings.Contains(s, downstreamGenerate) {
			found = true
			b = []byte(strings.Replace(s, " generate -alias", " generate -I "+inc+" -alias", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !found {
		t.Fatalf("no file of %s has the line %q", src, downstreamGenerate)
	}
}

// TestDownstreamDoc: the commands docs/downstream.md tells a user to run
// are the ones TestDownstream runs (with GOPROXY=off, as it does).
func TestDownstreamDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "downstream.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{
		"go mod edit -require=github.com/mlx5gen/mlx5gen@v0.0.0-00010101000000-000000000000",
		"GOPROXY=off go get -tool github.com/mlx5gen/mlx5gen/cmd/mlx5gen",
		"GOPROXY=off " + strings.Join(downstreamRuntime, " "),
		strings.TrimPrefix(downstreamGenerate, "//go:generate "),
		"go generate ./...",
	} {
		if !strings.Contains(string(doc), step) {
			t.Errorf("docs/downstream.md does not give the step %q that TestDownstream runs", step)
		}
	}
}
