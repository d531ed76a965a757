package sq

import (
	"math/rand/v2"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// wantLimit is what SQ.limit must hold: the start of the oldest work
// request in flight (posted or in the batch, as the writer last read the
// tail) plus the ring's size; with none in flight, the producer index
// plus the ring's size, where the next one will start.
func wantLimit(q *SQ) uint32 {
	if q.head+q.nreq != q.tail {
		return q.start[q.tail&q.mask] + q.n
	}
	return q.curPost + q.n
}

// TestLimitExact: limit is exact after every call (the room checks of
// the general paths trust it, the fast paths' fastEnd is computed from
// it): random batches of every form that writes WQEs (fast and general
// paths, one and two WQEBBs, Post forms, bursts), failed and aborted
// batches, and completions retired a few at a time, on an 8-WQEBB ring
// whose room runs out often.
func TestLimitExact(t *testing.T) {
	mem, err := qmem.Plain(8, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	q, err := New(Config{Mem: mem, QPN: 0x1234, QP: QP{Type: mlx.QPRC, SendOps: 0x3ff, MaxInlineData: 128, MaxSendSGE: 2, MaxPost: 6}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 26))
	var reqs [3]RDMAWriteReq
	inline := make([]byte, 100) // a send with it takes two WQEBBs
	calls := []func() error{
		func() error { return q.RDMAWriteSGE(1, 0x1000, 2, 0x2000, 64) },
		func() error { return q.SendSGE(2, 0x2000, 0) }, // an empty SGE: the general path
		func() error {
			if err := q.RDMAWrite(1, 0x1000); err != nil {
				return err
			}
			return q.SetSGE(2, 0x2000, 64)
		},
		func() error {
			if err := q.Send(); err != nil {
				return err
			}
			return q.SetInlineData(inline)
		},
		func() error { return q.LocalInv(5) },
		func() error { return q.RDMAWriteBurst(reqs[:1+rng.IntN(len(reqs))]) },
	}
	check := func(step int, what string) {
		t.Helper()
		if got, want := q.limit, wantLimit(q); got != want {
			t.Fatalf("step %d, after %s: limit %d, want %d (curPost %d, head %d, nreq %d, tail %d)",
				step, what, got, want, q.curPost, q.head, q.nreq, q.tail)
		}
	}
	for step := range 3000 {
		switch r := rng.IntN(10); {
		case r == 0:
			if out := q.Outstanding(); out != 0 {
				q.Completed(1 + rng.Uint32N(out)) // the poller retires some
			}
			check(step, "Completed")
			continue
		case r == 1:
			_ = q.PostRDMAWriteSGE(1, 0x1000, 2, 0x2000, 64)
			check(step, "PostRDMAWriteSGE")
			continue
		}
		if err := q.Start(); err != nil {
			t.Fatal(err)
		}
		for range rng.IntN(4) {
			_ = calls[rng.IntN(len(calls))]() // a full ring fails the batch: rolled back below
			check(step, "a call")
		}
		if rng.IntN(5) == 0 {
			q.Abort()
			check(step, "Abort")
			continue
		}
		_ = q.Complete()
		check(step, "Complete")
	}
}
