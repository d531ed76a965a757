package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceBlock(t *testing.T) {
	doc := "intro\n" + beginMarker + "old table\n" + endMarker + "after\n"
	got, err := replaceBlock("README.md", []byte(doc), []byte("new table\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "intro\n" + beginMarker + "\nnew table\n\n" + endMarker + "after\n"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []string{
		"no markers\n",
		beginMarker + "x\n",
		beginMarker + beginMarker + endMarker,
		endMarker + "x\n" + beginMarker,
	} {
		if _, err := replaceBlock("doc.md", []byte(bad), []byte("t\n")); err == nil || !strings.Contains(err.Error(), "doc.md") {
			t.Errorf("%q: err %v, want one naming doc.md", bad, err)
		}
	}
}

// TestUpdateFilesAllOrNothing: a file without markers stops the update
// before any file is written.
func TestUpdateFilesAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.md")
	bad := filepath.Join(dir, "bad.md")
	orig := "a\n" + beginMarker + "old\n" + endMarker
	os.WriteFile(good, []byte(orig), 0o644)
	os.WriteFile(bad, []byte("nothing\n"), 0o644)
	if err := updateFiles([]string{good, bad}, []byte("new\n")); err == nil {
		t.Fatal("no error for a file without markers")
	}
	if b, _ := os.ReadFile(good); string(b) != orig {
		t.Errorf("good.md written although the update failed: %q", b)
	}
	if err := updateFiles([]string{good}, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(good); !strings.Contains(string(b), "\nnew\n") {
		t.Errorf("good.md not updated: %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".mlx5bench-*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// TestUpdateCheckedFirst: a bad -update file is a usage error before any
// benchmark is built or run.
func TestUpdateCheckedFirst(t *testing.T) {
	var out, errb strings.Builder
	missing := filepath.Join(t.TempDir(), "missing.md")
	if st := run([]string{"-update", missing}, &out, &errb); st != 2 || !strings.Contains(errb.String(), "missing.md") {
		t.Errorf("status %d, stderr %q: want 2 naming missing.md", st, errb.String())
	}
	if strings.Contains(errb.String(), "building") {
		t.Errorf("measured before checking -update: %q", errb.String())
	}
}
