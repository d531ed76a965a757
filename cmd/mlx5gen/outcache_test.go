package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// tree reads every file under dir, by relative name.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// generateIn runs generate with args in a fresh dir (the same path every
// time, so that the summary names the same files) and returns the tree,
// stdout and stderr.
func generateIn(t *testing.T, dir string, args ...string) (map[string]string, string, string) {
	t.Helper()
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	full := append([]string{"generate", "-v", "-out", filepath.Join(dir, "out"), "-rules", filepath.Join(dir, "RULES.md")}, args...)
	if st := run(full, nil, &stdout, &stderr); st != 0 {
		t.Fatalf("generate %q: status %d\n%s", args, st, stderr.String())
	}
	return tree(t, dir), stdout.String(), stderr.String()
}

// TestOutputCacheSameAsOff: for every release, with and without -alias,
// -tables, -bindings and -prm, a run from the output cache writes the same
// files and prints the same summary as a run with the caches off, and
// the cold run stores what the warm run finds.
func TestOutputCacheSameAsOff(t *testing.T) {
	variants := map[string][]string{
		"plain": nil,
		"alias": {"-alias", "github.com/mlx5gen/mlx5gen/generated/mlx5dv", "-pkg", "mine", "-import", "example.com/m/mine"},
	}
	for _, v := range rdmacore.Versions {
		root, err := rdmacore.IncludeRoot("../..", v)
		if err != nil {
			t.Fatal(err)
		}
		for name, extra := range variants {
			t.Run(v+"/"+name, func(t *testing.T) {
				work := t.TempDir()
				dir := filepath.Join(work, "run")
				args := append([]string{"-I", root}, extra...)
				if name == "alias" {
					args = append(args, "-tables", filepath.Join(dir, "mlx5rules"), "-bindings", filepath.Join(dir, "mlx5verbs"), "-prm", filepath.Join(dir, "mlx5prm"))
				}
				t.Setenv(cheader.CacheEnv, "off")
				offTree, offOut, offErr := generateIn(t, dir, args...)
				t.Setenv(cheader.CacheEnv, filepath.Join(work, "cache"))
				coldTree, coldOut, coldErr := generateIn(t, dir, args...)
				warmTree, warmOut, warmErr := generateIn(t, dir, args...)
				if !strings.Contains(coldErr, "output cache: stored") || !strings.Contains(warmErr, "output cache: hit") {
					t.Fatalf("cold run:\n%s\nwarm run:\n%s", coldErr, warmErr)
				}
				if !hasPrefix(offTree, "out/") || !hasPrefix(offTree, "RULES.md") ||
					name == "alias" && (!hasPrefix(offTree, "mlx5verbs/") || !hasPrefix(offTree, "mlx5rules/") || !hasPrefix(offTree, "mlx5prm/")) {
					t.Fatalf("the cache-off run wrote only %d files", len(offTree))
				}
				for what, got := range map[string]map[string]string{"cold": coldTree, "warm": warmTree} {
					if !sameTree(t, offTree, got) {
						t.Errorf("%s tree differs from the cache-off tree", what)
					}
				}
				if coldOut != offOut || warmOut != offOut {
					t.Errorf("summaries differ:\noff:\n%s\nwarm:\n%s", offOut, warmOut)
				}
				if noCacheLines(warmErr) != noCacheLines(offErr) {
					t.Errorf("warnings differ:\noff:\n%s\nwarm:\n%s", offErr, warmErr)
				}
			})
		}
	}
}

func sameTree(t *testing.T, want, got map[string]string) bool {
	t.Helper()
	same := len(want) == len(got)
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s differs", n)
			same = false
		}
	}
	return same
}

func hasPrefix(files map[string]string, prefix string) bool {
	for n := range files {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

// noCacheLines drops the caches' -v reports from stderr.
func noCacheLines(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, " cache: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestOutputCacheHeaderChanged: a changed header misses the output cache
// and gives the output of a cache-off run; so does a changed option.
func TestOutputCacheHeaderChanged(t *testing.T) {
	work := t.TempDir()
	root, err := rdmacore.IncludeRoot("../..", "44.0")
	if err != nil {
		t.Fatal(err)
	}
	inc := filepath.Join(work, "include")
	if err := os.CopyFS(inc, os.DirFS(root)); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(work, "cache")
	t.Setenv(cheader.CacheEnv, cache)
	dir := filepath.Join(work, "run")
	generateIn(t, dir, "-I", inc)
	if _, _, log := generateIn(t, dir, "-I", inc); !strings.Contains(log, "output cache: hit") {
		t.Fatalf("unchanged: %s", log)
	}
	h := filepath.Join(inc, "infiniband", "mlx5dv.h")
	b, err := os.ReadFile(h)
	if err != nil {
		t.Fatal(err)
	}
	// A described enum gets another value: the output changes.
	b = bytes.Replace(b, []byte("MLX5DV_QP_CREATE_TUNNEL_OFFLOADS = 1 << 0,"), []byte("MLX5DV_QP_CREATE_TUNNEL_OFFLOADS = 1 << 0, MLX5DV_QP_CREATE_CACHE_PROBE = 1 << 29,"), 1)
	writeTestFile(t, h, string(b))
	changed, out, log := generateIn(t, dir, "-I", inc)
	if !strings.Contains(log, "output cache: miss (model "+h+" changed)") {
		t.Fatalf("changed header: %s", log)
	}
	t.Setenv(cheader.CacheEnv, "off")
	off, offOut, _ := generateIn(t, dir, "-I", inc)
	if !sameTree(t, off, changed) || out != offOut {
		t.Fatal("the changed header's output differs from a cache-off run")
	}
	t.Setenv(cheader.CacheEnv, cache)
	if _, _, log := generateIn(t, dir, "-I", inc); !strings.Contains(log, "output cache: hit") {
		t.Fatalf("changed header, second run: %s", log)
	}
	if _, _, log := generateIn(t, dir, "-I", inc, "-pkg", "other"); !strings.Contains(log, "output cache: miss (no entry)") || !strings.Contains(log, "model cache: hit") {
		t.Fatalf("changed -pkg: %s", log)
	}
}

func writeTestFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
