package main

import (
	"debug/elf"
	"fmt"
	"go/format"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// TestLayoutSource: placement j's file is gofmt'd Go with j pad functions,
// all of them held by the variable the init function reads.
func TestLayoutSource(t *testing.T) {
	for j := range 4 {
		src := layoutSource("benchlibmlx5", j)
		if f, err := format.Source(src); err != nil || string(f) != string(src) {
			t.Fatalf("placement %d: not gofmt'd Go (%v):\n%s", j, err, src)
		}
		s := string(src)
		if n := strings.Count(s, "\nfunc layoutPad"); n != j {
			t.Errorf("placement %d: %d pad functions", j, n)
		}
		_, held, _ := strings.Cut(s, "[]func() int{")
		held, _, _ = strings.Cut(held, "}")
		for i := range j {
			if !strings.Contains(", "+held+",", fmt.Sprintf(" layoutPad%d,", i)) {
				t.Errorf("placement %d: layoutPad%d not held by layoutPads", j, i)
			}
		}
		if !strings.Contains(s, "func init() {\n\tfor _, f := range layoutPads {") {
			t.Errorf("placement %d: no init reading layoutPads:\n%s", j, s)
		}
	}
}

// TestLayoutMoves builds the harness package (without libmlx5, whose Go
// loops are the same) in placements 0 and 3 of each padded package and
// checks that the code after the pads moved by three pad functions'
// slots: 96 bytes on amd64, and forward on every architecture. The
// harness's pads move its loops; runtime/sq's pads move runtime/sq.
func TestLayoutMoves(t *testing.T) {
	root, err := rdmacore.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pad padPkg
		sym string
	}{
		{harnessPad, "github.com/mlx5gen/mlx5gen/internal/benchlibmlx5.PostWrites"},
		{runtimePad, "github.com/mlx5gen/mlx5gen/runtime/sq.(*SQ).Start"},
	} {
		r := newRunner(root, t.TempDir(), nil)
		r.pad = c.pad
		var at [2]uint64
		for i, j := range []int{0, 3} {
			ov, err := r.layoutOverlay(j)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(r.tmp, fmt.Sprintf("harness%d", j))
			cmd := exec.Command("go", "test", "-c", "-o", out, "-overlay", ov, libPkg)
			cmd.Dir = root
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
			}
			at[i] = symbolAddr(t, out, c.sym)
		}
		d := int64(at[1] - at[0])
		if d <= 0 || runtime.GOARCH == "amd64" && d != 3*32 {
			t.Errorf("%s (pads in %s) at %#x in placement 0, %#x in placement 3: moved %d bytes", c.sym, c.pad.dir, at[0], at[1], d)
		}
	}
}

// symbolAddr is the address of symbol name in the ELF executable bin.
func symbolAddr(t *testing.T, bin, name string) uint64 {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol %s", bin, name)
	return 0
}
