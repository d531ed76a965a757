package replay

import (
	"path/filepath"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/vectors"
)

// TestVectors replays every reference vector: each must pass, byte for
// byte, or behave exactly as its documented divergence says.
func TestVectors(t *testing.T) {
	files, err := filepath.Glob("../../testdata/vectors/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no vector files: %v", err)
	}
	n := 0
	for _, path := range files {
		f, err := vectors.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range File(f) {
			n++
			if o.Err != nil {
				t.Errorf("%s %s: %v", filepath.Base(path), o.ID, o.Err)
			}
		}
	}
	if n != 175 {
		t.Errorf("%d cases, want 175", n)
	}
}
