package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

func TestMain(m *testing.M) {
	// Hermetic: the tests never read or write the user's model cache.
	// Those of the cache set it themselves (and the scripts' runs of
	// mlx5gen, which come back here, keep theirs).
	if os.Getenv(cheader.CacheEnv) == "" {
		os.Setenv(cheader.CacheEnv, "off")
	}
	testscript.Main(m, map[string]func(){
		"mlx5gen": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar: every command, its usage
// errors and its failures, as a user runs them. Scripts see $MODROOT, the
// include roots $H44, $H56 and $H65 of the header cache, $VECTORS, a copy
// of the spec in $WORK/spec, and $WORK/bad.json, a vector file with one
// WQE byte changed. PATH holds mlx5gen-replay and mlx5gen-devices, built
// from this checkout, which mlx5gen replay and devices run (the scripts
// work outside the checkout). The condition [rdma] holds when
// /sys/class/infiniband lists a device.
func TestScripts(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "./"+replayDir, "./"+devicesDelegate.dir)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s %s: %v\n%s", replayDir, devicesDelegate.dir, err, out)
	}
	roots := map[string]string{}
	for _, v := range rdmacore.Versions {
		r, err := rdmacore.IncludeRoot(root, v)
		if err != nil {
			t.Fatal(err)
		}
		roots[v] = r
	}
	vectors := filepath.Join(root, "testdata", "vectors")
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds:                treeCmds,
		Condition: func(cond string) (bool, error) {
			if cond != "rdma" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			es, _ := os.ReadDir("/sys/class/infiniband")
			return len(es) > 0, nil
		},
		Setup: func(e *testscript.Env) error {
			e.Setenv("MODROOT", root)
			e.Setenv(cheader.CacheEnv, filepath.Join(e.WorkDir, "mlx5gen-cache"))
			e.Setenv("PATH", bin+string(filepath.ListSeparator)+e.Getenv("PATH"))
			e.Setenv("H44", roots["44.0"])
			e.Setenv("H56", roots["56.1"])
			e.Setenv("H65", roots["65.0"])
			e.Setenv("VECTORS", vectors)
			e.Setenv("CQEVECTORS", filepath.Join(root, "testdata", "cqe-vectors"))
			if err := hostileInputs(e.WorkDir); err != nil {
				return err
			}
			if err := copySpec(filepath.Join(root, "spec"), filepath.Join(e.WorkDir, "spec")); err != nil {
				return err
			}
			if err := badCQEVector(filepath.Join(root, "testdata", "cqe-vectors", "req_success.json"), filepath.Join(e.WorkDir, "badcqe.json")); err != nil {
				return err
			}
			return badVector(filepath.Join(vectors, "rdma.json"), filepath.Join(e.WorkDir, "bad.json"))
		},
	})
}

// copySpec copies the spec's descriptor directories.
func copySpec(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if filepath.Ext(path) != ".yaml" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// badVector writes a copy of a vector file whose first WQE has its rkey
// changed (raddr segment, bytes 24..27 of the WQE).
// badCQEVector writes a CQE vector file whose first case expects another
// qp_num in its first work completion.
func badCQEVector(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	// The first qp_num of the file is the first case's wc[0].
	b = bytes.Replace(b, []byte(`"qp_num": 291,`), []byte(`"qp_num": 292,`), 1)
	return os.WriteFile(to, b, 0o644)
}

func badVector(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	// The first case writes rkey 0x11223344.
	b = bytes.Replace(b, []byte("010203040506070811223344"), []byte("010203040506070811223345"), 1)
	return os.WriteFile(to, b, 0o644)
}
