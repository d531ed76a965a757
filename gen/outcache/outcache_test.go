package outcache

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/mlx5gen/mlx5gen/gen/emit"
)

func specFS() fstest.MapFS {
	return fstest.MapFS{
		"api/a.yaml":   {Data: []byte("name: a\n")},
		"hw/seg.yaml":  {Data: []byte("segment: b\n")},
		"README.md":    {Data: []byte("not read by spec.Load\n")},
		"api/b.yaml~x": {Data: []byte("neither\n")},
	}
}

func logged(t *testing.T) (*Cache, *[]string) {
	var lines []string
	c := &Cache{Dir: filepath.Join(t.TempDir(), "cache")}
	c.Log = func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	return c, &lines
}

func sample() *Entry {
	return &Entry{
		Files:    []emit.File{{Name: "consts.go", Content: []byte("package x\n")}, {Name: "empty.go", Content: []byte{}}},
		Tables:   []emit.File{{Name: "tables.go", Content: []byte("package t\n")}},
		Rules:    []byte("# rules\n"),
		Stdout:   []byte("read ...\n"),
		Stderr:   []byte("mlx5gen: warning: w\n"),
		Bindings: nil,
	}
}

func mustKey(t *testing.T, model string, fs fstest.MapFS, opts ...string) string {
	t.Helper()
	k, err := Key(model, fs, ".", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKeyInputs: the key changes with the model, every spec file's name
// and bytes and every option, and with nothing else the spec holds.
func TestKeyInputs(t *testing.T) {
	base := mustKey(t, "model1", specFS(), "pkg=mlx5dv", "alias=")
	if k := mustKey(t, "model1", specFS(), "pkg=mlx5dv", "alias="); k != base {
		t.Fatal("the same inputs give two keys")
	}
	other := map[string]string{
		"model": mustKey(t, "model2", specFS(), "pkg=mlx5dv", "alias="),
		"pkg":   mustKey(t, "model1", specFS(), "pkg=other", "alias="),
		"alias": mustKey(t, "model1", specFS(), "pkg=mlx5dv", "alias=x"),
		// Options are length-prefixed: moving a byte between two differs.
		"split": mustKey(t, "model1", specFS(), "pkg=mlx5dv", "", "alias="),
	}
	changed := specFS()
	changed["api/a.yaml"] = &fstest.MapFile{Data: []byte("name: b\n")}
	other["spec bytes"] = mustKey(t, "model1", changed, "pkg=mlx5dv", "alias=")
	renamed := specFS()
	renamed["api/c.yaml"] = renamed["api/a.yaml"]
	delete(renamed, "api/a.yaml")
	other["spec name"] = mustKey(t, "model1", renamed, "pkg=mlx5dv", "alias=")
	added := specFS()
	added["api/new.yaml"] = &fstest.MapFile{Data: []byte{}}
	other["spec added"] = mustKey(t, "model1", added, "pkg=mlx5dv", "alias=")
	for what, k := range other {
		if k == base {
			t.Errorf("a changed %s keeps the key", what)
		}
	}
	notSpec := specFS()
	notSpec["README.md"] = &fstest.MapFile{Data: []byte("changed\n")}
	if mustKey(t, "model1", notSpec, "pkg=mlx5dv", "alias=") != base {
		t.Error("a file spec.Load does not read changes the key")
	}
	if _, err := Key("m", specFS(), "nodir"); err == nil {
		t.Error("a missing spec directory gives a key")
	}
}

// TestRoundTrip: what is stored is what a lookup returns.
func TestRoundTrip(t *testing.T) {
	c, lines := logged(t)
	if e, why := c.Lookup("k"); e != nil || why != "no entry" {
		t.Fatalf("empty cache: %v, %q", e, why)
	}
	c.Store("k", sample())
	if !strings.Contains(strings.Join(*lines, "\n"), "output cache: stored") {
		t.Fatalf("log: %q", *lines)
	}
	e, why := c.Lookup("k")
	if e == nil {
		t.Fatalf("miss after store: %s", why)
	}
	want := sample()
	if !reflect.DeepEqual(e.Files, want.Files) || !reflect.DeepEqual(e.Tables, want.Tables) || len(e.Bindings) != 0 ||
		string(e.Rules) != string(want.Rules) || string(e.Stdout) != string(want.Stdout) || string(e.Stderr) != string(want.Stderr) {
		t.Fatalf("got %+v, want %+v", e, want)
	}
}

// TestCorruptEntries: every damaged entry is a miss, and a store replaces it.
func TestCorruptEntries(t *testing.T) {
	c, _ := logged(t)
	c.Store("k", sample())
	good, err := os.ReadFile(c.Path("k"))
	if err != nil {
		t.Fatal(err)
	}
	flip := append([]byte(nil), good...)
	flip[len(flip)-3] ^= 1
	badMagic := append([]byte("X"), good[1:]...)
	cases := map[string][]byte{
		"truncated":  good[:len(good)-1],
		"header cut": good[:10],
		"empty":      {},
		"longer":     append(append([]byte(nil), good...), 0),
		"flipped":    flip,
		"magic":      badMagic,
	}
	for name, b := range cases {
		if err := os.WriteFile(c.Path("k"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if e, why := c.Lookup("k"); e != nil || !strings.HasPrefix(why, "corrupt entry") {
			t.Errorf("%s: %v, %q; want a corrupt-entry miss", name, e, why)
		}
		c.Store("k", sample())
		if e, why := c.Lookup("k"); e == nil {
			t.Errorf("%s: not replaced: %s", name, why)
		}
	}
	// A body whose checksum is right but whose layout is not.
	body := encode(sample())
	for _, cut := range []int{1, len(body) / 2, len(body) - 1} {
		if err := c.write("k", body[:cut]); err != nil {
			t.Fatal(err)
		}
		if e, why := c.Lookup("k"); e != nil || !strings.HasPrefix(why, "corrupt entry (") {
			t.Errorf("body cut at %d: %v, %q", cut, e, why)
		}
	}
}

// TestUnwritable: a cache that cannot be written is only logged.
func TestUnwritable(t *testing.T) {
	c, lines := logged(t)
	if err := os.WriteFile(c.Dir, nil, 0o644); err != nil { // a file where the directory goes
		t.Fatal(err)
	}
	c.Store("k", sample())
	if !strings.Contains(strings.Join(*lines, "\n"), "not stored") {
		t.Fatalf("log: %q", *lines)
	}
	if e, _ := c.Lookup("k"); e != nil {
		t.Fatal("a hit from an unwritable cache")
	}
}

// TestSwappedEntries: every entry copied over every other key's file is a
// miss saying so (never the other key's output), and a store after the
// miss puts the right entry back; a named pipe, a symbolic link and a
// device link at an entry's path are misses too, without hanging.
func TestSwappedEntries(t *testing.T) {
	c, _ := logged(t)
	keys := []string{"k44", "k56", "k65"}
	raw := map[string][]byte{}
	for _, k := range keys {
		e := sample()
		e.Stdout = []byte("rdma-core " + k + "\n")
		c.Store(k, e)
		raw[k], _ = os.ReadFile(c.Path(k))
	}
	for _, from := range keys {
		for _, to := range keys {
			if from == to {
				continue
			}
			if err := os.WriteFile(c.Path(to), raw[from], 0o644); err != nil {
				t.Fatal(err)
			}
			if e, why := c.Lookup(to); e != nil || !strings.Contains(why, "entry of another key") {
				t.Errorf("%s's entry under %s: %v, %q; want a miss", from, to, e, why)
			}
			e := sample()
			e.Stdout = []byte("rdma-core " + to + "\n")
			c.Store(to, e)
			if e, why := c.Lookup(to); e == nil || string(e.Stdout) != "rdma-core "+to+"\n" {
				t.Errorf("%s after the miss: %v, %q", to, e, why)
			}
		}
	}
	for name, mk := range map[string]func(string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"link":      func(p string) error { return os.Symlink(c.Path("k44"), p) },
		"/dev/null": func(p string) error { return os.Symlink("/dev/null", p) },
	} {
		os.Remove(c.Path("x"))
		if err := mk(c.Path("x")); err != nil {
			t.Fatal(err)
		}
		done := make(chan string, 1)
		go func() { e, why := c.Lookup("x"); done <- fmt.Sprint(e, " ", why) }()
		select {
		case got := <-done:
			if !strings.Contains(got, "<nil> not a regular file") {
				t.Errorf("%s: %s; want a not-a-regular-file miss", name, got)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: lookup still running after 5 s", name)
		}
	}
}
