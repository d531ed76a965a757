package cheader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCacheCurrent: Current identifies a valid entry without a parse, and
// says "" with the reason when there is none, a header changed, the build
// is another or the entry is corrupt.
func TestCacheCurrent(t *testing.T) {
	root := cacheTree(t)
	c, lines := logCache(t)
	if id, why := c.Current(root, ""); id != "" || !strings.Contains(why, "no entry") {
		t.Fatalf("before any parse: %q, %q; want none, no entry", id, why)
	}
	loadLogged(t, c, lines, root)
	id, why := c.Current(root, "")
	if id == "" {
		t.Fatalf("after the parse: no id (%s)", why)
	}
	if again, _ := c.Current(root, DefaultHeader); again != id {
		t.Fatalf("two ids for one entry: %q, %q", id, again)
	}
	other := &Cache{Dir: c.Dir, build: "go:another-build"}
	if o, _ := other.Current(root, ""); o != "" {
		t.Fatalf("another build sees the entry: %q", o)
	}
	writeFile(t, filepath.Join(root, "infiniband", "mlx5dv.h"), "struct changed { int a; };\n")
	if got, why := c.Current(root, ""); got != "" || !strings.Contains(why, "mlx5dv.h changed") {
		t.Fatalf("changed header: %q, %q", got, why)
	}
	loadLogged(t, c, lines, root)
	id2, _ := c.Current(root, "")
	if id2 == "" || id2 == id {
		t.Fatalf("changed header, parsed again: id %q (was %q)", id2, id)
	}
	key, _ := c.key(mustAbs(t, root), DefaultHeader)
	b, err := os.ReadFile(c.path(key))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.path(key), b[:len(b)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if got, why := c.Current(root, ""); got != "" || !strings.Contains(why, "corrupt") {
		t.Fatalf("truncated entry: %q, %q", got, why)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
