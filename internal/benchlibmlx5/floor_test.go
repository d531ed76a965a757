package benchlibmlx5

import (
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestFloorBytes holds the floor to what runtime/sq writes for the same
// work requests a doorbell each, over more than one turn of the ring: a
// floor that wrote less would measure less than the row's work.
func TestFloorBytes(t *testing.T) {
	for _, n := range []int{1, 2, WQEBBs + 3} {
		mem, err := NewMem()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mem.Close() })
		f := NewFloor(mem)
		if err := PostFloor(f, n, 1); err != nil {
			t.Fatal(err)
		}
		want := goSide(t, func(q *sq.SQ) error { return PostWrites(q, n, 1) })
		if err := Same("floor", want, f.Side()); err != nil {
			t.Errorf("%d writes: %v", n, err)
		}
	}
}
