package cheader

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Headers beyond maxSourceBytes in all are refused, naming the file that
// crossed it.
func TestSourceLimit(t *testing.T) {
	saved := maxSourceBytes
	maxSourceBytes = 4000
	defer func() { maxSourceBytes = saved }()
	root := t.TempDir()
	dir := filepath.Join(root, "infiniband")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	big := "struct a { int x; };\n" + strings.Repeat("/* padding */\n", 300)
	files := map[string]string{"mlx5dv.h": "#include \"big.h\"\nstruct b { int y; };\n", "big.h": big}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Load(Config{IncludeRoot: root})
	t.Log(err)
	var ie *IncludeError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "infiniband/big.h: the headers exceed") {
		t.Fatalf("want an IncludeError naming infiniband/big.h, got %v", err)
	}
}

// Both translations of a header are served from one reading of each file:
// the second neither reads nor marks a file again.
func TestSourceReadOnce(t *testing.T) {
	_, p, err := load(Config{IncludeRoot: "testdata/corner", Header: "infiniband/corner.h"})
	if err != nil {
		t.Fatal(err)
	}
	if p.fs.reads == 0 || p.fs.hits < p.fs.reads {
		t.Fatalf("%d files read from disk, %d served again: want each read once and served to both translations", p.fs.reads, p.fs.hits)
	}
	if len(p.fs.served) != 0 {
		t.Fatalf("%d files still held after the last translation", len(p.fs.served))
	}
}
