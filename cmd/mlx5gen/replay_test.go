package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReplayFind: the program next to mlx5gen wins (an installed release
// runs its own), then the checkout around the current directory, then
// PATH; with none, the error says how to get the program.
func TestReplayFind(t *testing.T) {
	dir := t.TempDir()
	write := func(path, content string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	installed := filepath.Join(dir, "bin", "mlx5gen")
	write(installed, "", 0o755)
	write(filepath.Join(dir, "bin", replayProgram), "", 0o755)
	bare := filepath.Join(dir, "bare", "mlx5gen")
	write(bare, "", 0o755)
	write(filepath.Join(dir, "bare", replayProgram), "not executable", 0o644)
	checkout := filepath.Join(dir, "checkout")
	write(filepath.Join(checkout, "go.mod"), "module github.com/mlx5gen/mlx5gen\n\ngo 1.26.0\n", 0o644)
	write(filepath.Join(checkout, replayDir, "main.go"), "package main\n", 0o644)
	inCheckout := filepath.Join(checkout, "testdata")
	outside := filepath.Join(dir, "elsewhere")
	onPath := filepath.Join(dir, "path", replayProgram)

	env := func(exe, wd string, path bool) replayEnv {
		return replayEnv{
			executable: func() (string, error) { return exe, nil },
			getwd:      func() (string, error) { return wd, nil },
			lookPath: func(string) (string, error) {
				if path {
					return onPath, nil
				}
				return "", errors.New("not found")
			},
		}
	}
	for _, c := range []struct {
		name string
		env  replayEnv
		want replayHow
	}{
		{"installed next to mlx5gen", env(installed, inCheckout, true), replayHow{program: filepath.Join(dir, "bin", replayProgram)}},
		{"in a checkout", env(bare, inCheckout, true), replayHow{root: checkout}},
		{"on PATH", env(bare, outside, true), replayHow{program: onPath}},
	} {
		got, err := c.env.find()
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	_, err := env(bare, outside, false).find()
	if err == nil || !strings.Contains(err.Error(), "go install "+replayPkg+"@latest") {
		t.Errorf("with no program anywhere: %v; want how to install it", err)
	}
}

// TestReplayBuildsFromCheckout runs mlx5gen replay as from a checkout with
// no mlx5gen-replay installed: it builds the program into the user's cache
// and passes its verdicts, output and exit status through.
func TestReplayBuildsFromCheckout(t *testing.T) {
	// A fresh user cache, but the go command keeps its build cache.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	var stdout, stderr bytes.Buffer
	if st := run([]string{"replay", "../../testdata/vectors/rdma.json"}, nil, &stdout, &stderr); st != 0 {
		t.Fatalf("status %d\n%s%s", st, stdout.String(), stderr.String())
	}
	if !regexp.MustCompile(`(?m)^[1-9][0-9]* passed, 0 failed$`).Match(stdout.Bytes()) {
		t.Errorf("no verdict:\n%s", stdout.String())
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "mlx5gen", "*", replayProgram)); len(m) != 1 {
		t.Errorf("%s built under %s: %q; want one", replayProgram, cache, m)
	}
	stdout.Reset()
	stderr.Reset()
	if st := run([]string{"replay"}, nil, &stdout, &stderr); st != 2 || !strings.Contains(stderr.String(), "usage: mlx5gen replay") {
		t.Errorf("replay with no file: status %d, stderr %q; want 2 and the usage", st, stderr.String())
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := badVector("../../testdata/vectors/rdma.json", bad); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if st := run([]string{"replay", bad}, nil, &stdout, &stderr); st != 1 || !regexp.MustCompile(`(?m)^FAIL rc_`).Match(stdout.Bytes()) {
		t.Errorf("a changed byte: status %d, stdout %q; want 1 and a FAIL line", st, stdout.String())
	}
}
