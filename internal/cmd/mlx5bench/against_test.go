package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// TestWorktree: a revision is checked out into a directory of its own,
// which the returned function removes; a name that is no commit is an
// error naming it.
func TestWorktree(t *testing.T) {
	root, err := rdmacore.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	dir, remove, err := worktree(root, "HEAD", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		remove()
		t.Fatalf("no go.mod in the worktree: %v", err)
	}
	remove()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the worktree %s stays after its removal: %v", dir, err)
	}
	if _, _, err := worktree(root, "no-such-revision-x", t.TempDir()); err == nil || !strings.Contains(err.Error(), "no-such-revision-x") {
		t.Errorf("a revision that is no commit: %v", err)
	}
}

// TestWriteAgainst: each side's median ratio, and the change as the median
// of the per-round quotients with their range.
func TestWriteAgainst(t *testing.T) {
	rs := []row{{Key: "onecall-libmlx5"}}
	var sides [2]*runner
	for i, vals := range [][]float64{{5, 6, 5.5}, {10, 10, 11}} {
		r := newRunner("", "", rs)
		r.placements = 4
		r.vals[rs[0].Key], r.refs[rs[0].Key] = vals, []float64{10, 10, 10}
		sides[i] = r
	}
	var b bytes.Buffer
	writeAgainst(&b, "mlx5bench -against main", "main", rs, sides)
	out := b.String()
	if !strings.Contains(out, "| `onecall-libmlx5` | 0.55× | 1.00× | 0.500 | 0.500–0.600 |") {
		t.Errorf("row:\n%s", out)
	}
	if !strings.Contains(out, "This tree against main, 3 rounds (each benchmark the least of 1 runs), runtime/sq in 4 placements") {
		t.Errorf("header:\n%s", out)
	}
}

// TestAgainstNeedsLibRows: without an rdma-core tree there is nothing to
// compare, and the run says so.
func TestAgainstNeedsLibRows(t *testing.T) {
	t.Setenv(srcEnv, "")
	var out, errb bytes.Buffer
	if st := run([]string{"-against", "HEAD", "-rows", "^percall-libmlx5$"}, &out, &errb); st != 1 ||
		!strings.Contains(errb.String(), "-against measures the libmlx5 rows") {
		t.Errorf("status %d: %s", st, errb.String())
	}
}
