package cachefile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func dir(t *testing.T) Dir {
	return Dir{Path: filepath.Join(t.TempDir(), "c"), Magic: "test cache 1\n", Suffix: ".e", Max: 4096, Age: time.Hour}
}

// TestRoundTrip: what Write stores, Read returns with its checksum.
func TestRoundTrip(t *testing.T) {
	d := dir(t)
	if _, _, why := d.Read("k"); why != "no entry" {
		t.Fatalf("empty cache: %q", why)
	}
	if err := d.Write("k", []byte("body")); err != nil {
		t.Fatal(err)
	}
	body, sum, why := d.Read("k")
	if why != "" || string(body) != "body" || len(sum) != 32 {
		t.Fatalf("got %q %x %q", body, sum, why)
	}
	if err := d.Write("k", make([]byte, d.Max)); err == nil {
		t.Error("an entry over Max was written")
	}
}

// TestCorrupt: every damaged entry is a miss naming why, never a body.
func TestCorrupt(t *testing.T) {
	d := dir(t)
	if err := d.Write("k", []byte("body")); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(d.File("k"))
	flip := append([]byte(nil), good...)
	flip[len(flip)-1] ^= 1
	for name, c := range map[string]struct {
		b   []byte
		why string
	}{
		"truncated": {good[:len(good)-1], "header says"},
		"longer":    {append(append([]byte(nil), good...), 0), "header says"},
		"flipped":   {flip, "checksum"},
		"magic":     {append([]byte("X"), good[1:]...), "bad header"},
		"empty":     {nil, "bad header"},
		"huge":      {make([]byte, d.Max+1), "too large"},
	} {
		os.WriteFile(d.File("k"), c.b, 0o644)
		if body, _, why := d.Read("k"); body != nil || !strings.HasPrefix(why, "corrupt entry (") || !strings.Contains(why, c.why) {
			t.Errorf("%s: %q, %q; want a corrupt entry naming %q", name, body, why, c.why)
		}
	}
}

// TestTrim: entries and temporary files unused for longer than Age go,
// fresh ones and other files stay.
func TestTrim(t *testing.T) {
	d := dir(t)
	d.Write("old", []byte("x"))
	d.Write("new", []byte("x"))
	other := filepath.Join(d.Path, "other.txt")
	tmp := filepath.Join(d.Path, "tmp-123")
	os.WriteFile(other, nil, 0o644)
	os.WriteFile(tmp, nil, 0o644)
	past := time.Now().Add(-2 * d.Age)
	for _, n := range []string{d.File("old"), other, tmp} {
		os.Chtimes(n, past, past)
	}
	d.Trim()
	for n, want := range map[string]bool{d.File("old"): false, tmp: false, d.File("new"): true, other: true} {
		if _, err := os.Stat(n); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(n), err == nil, want)
		}
	}
}

// TestWriteAtomicKeepsMode: a replaced file keeps its permissions, and
// a failed write leaves no temporary file behind.
func TestWriteAtomicKeepsMode(t *testing.T) {
	dirPath := t.TempDir()
	name := filepath.Join(dirPath, "f")
	os.WriteFile(name, []byte("old"), 0o640)
	if err := WriteAtomic(dirPath, name, []byte("new"), ".t-*"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	if err := WriteAtomic(dirPath, filepath.Join(dirPath, "no", "such"), []byte("x"), ".t-*"); err == nil {
		t.Error("a rename into a missing directory succeeded")
	}
	if m, _ := filepath.Glob(filepath.Join(dirPath, ".t-*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// within runs f, failing the test if it takes longer than 5 s (a read
// that blocks, on a named pipe say, would hang the run).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still reading after 5 s", what)
	}
}

// TestSwappedKeys: an entry copied to the file of every other key is a
// miss naming the other key, and the copy is removed; its own key still
// hits.
func TestSwappedKeys(t *testing.T) {
	d := dir(t)
	keys := []string{"k44", "k56", "k65"}
	entries := map[string][]byte{}
	for _, k := range keys {
		if err := d.Write(k, []byte("body of "+k)); err != nil {
			t.Fatal(err)
		}
		entries[k], _ = os.ReadFile(d.File(k))
	}
	for _, from := range keys {
		for _, to := range keys {
			if err := os.WriteFile(d.File(to), entries[from], 0o644); err != nil {
				t.Fatal(err)
			}
			body, _, why := d.Read(to)
			if from == to {
				if string(body) != "body of "+to {
					t.Errorf("%s in place: %q, %q", to, body, why)
				}
				continue
			}
			if body != nil || !strings.HasPrefix(why, "entry of another key ("+from) {
				t.Errorf("%s's entry under %s: %q, %q; want a miss naming the other key", from, to, body, why)
			}
			if _, err := os.Lstat(d.File(to)); !os.IsNotExist(err) {
				t.Errorf("%s's entry under %s was not removed", from, to)
			}
		}
	}
}

// TestNotRegular: a named pipe, a symbolic link (to a good entry, to a
// pipe, to /dev/null), a device and a directory at an entry's path are
// misses naming what they are, without hanging; Write replaces them.
func TestNotRegular(t *testing.T) {
	d := dir(t)
	if err := d.Write("good", []byte("body")); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		make func(path string) error
		why  string
	}{
		"fifo":         {func(p string) error { return syscall.Mkfifo(p, 0o644) }, "named pipe"},
		"link":         {func(p string) error { return os.Symlink(d.File("good"), p) }, "symbolic link"},
		"link to fifo": {func(p string) error { return os.Symlink(filepath.Join(d.Path, "fifo.e"), p) }, "symbolic link"},
		"/dev/null":    {func(p string) error { return os.Symlink("/dev/null", p) }, "symbolic link"},
		"directory":    {func(p string) error { return os.Mkdir(p, 0o755) }, "directory"},
	}
	if os.Geteuid() == 0 {
		cases["device"] = struct {
			make func(path string) error
			why  string
		}{func(p string) error { return syscall.Mknod(p, syscall.S_IFCHR|0o644, 1<<8|3) }, "device"} // 1,3: /dev/null
	} else {
		t.Log("not root: no device node (the /dev/null link stands for it)")
	}
	for name, c := range cases {
		key := strings.ReplaceAll(strings.ReplaceAll(name, "/", ""), " ", "-")
		if err := c.make(d.File(key)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		within(t, name, func() {
			body, _, why := d.Read(key)
			if body != nil || !strings.HasPrefix(why, "not a regular file (") || !strings.Contains(why, c.why) {
				t.Errorf("%s: %q, %q; want a miss naming %q", name, body, why, c.why)
			}
		})
		if name == "directory" {
			continue
		}
		if err := d.Write(key, []byte("new")); err != nil {
			t.Errorf("%s: not replaced: %v", name, err)
		} else if body, _, why := d.Read(key); string(body) != "new" {
			t.Errorf("%s: replaced entry reads %q, %q", name, body, why)
		}
		// The entry's own mode, not that of what was there or of what
		// a link pointed at (/dev/null's 0666 made it world-writable).
		if fi, err := os.Lstat(d.File(key)); err != nil || fi.Mode() != 0o600 {
			t.Errorf("%s: the replaced entry's mode is %v (%v), want -rw-------", name, fi.Mode(), err)
		}
	}
	if b, _, why := d.Read("good"); string(b) != "body" {
		t.Errorf("the linked entry changed: %q, %q", b, why)
	}
}
