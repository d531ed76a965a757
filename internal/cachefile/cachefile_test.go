package cachefile

import (
	"os"
	"path/filepath"
	"strings"
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
