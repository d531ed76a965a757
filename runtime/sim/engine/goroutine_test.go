package engine_test

import (
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestEngineGoroutine: with the engine on its own goroutine (Start), the
// program posts and polls without ever stepping it; every work request
// completes, in order, through many wraps of the rings.
func TestEngineGoroutine(t *testing.T) {
	o := defaults
	o.wqebbs, o.cqes = 16, 16
	f, a, b := pair(t, o)
	f.Start()
	defer f.Stop()
	const total = 5000
	next, want := uint64(0), uint64(0)
	deadline := time.Now().Add(20 * time.Second)
	for want < total {
		if time.Now().After(deadline) {
			t.Fatalf("stuck: %d posted, %d completed", next, want)
		}
		for n := 0; n < 4 && next < total && a.q.Outstanding() < 8; n++ {
			a.post(next, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
				q.RDMAWrite(b.key, b.addr(int(next%64)*8))
				return q.SetSGE(a.key, a.addr(0), 8)
			})
			next++
		}
		for _, w := range a.poll() {
			if w.WRID != want || w.Status != cq.Success {
				t.Fatalf("completion %+v, want wr_id %d", w, want)
			}
			want++
		}
	}
}
