package vectors

import (
	"path/filepath"
	"testing"
)

func TestLoadAll(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/vectors/*.json")
	n := 0
	for _, f := range files {
		v, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		n += len(v.Cases)
	}
	if n != 175 {
		t.Errorf("%d cases", n)
	}
}
