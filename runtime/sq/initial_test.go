package sq_test

import (
	"syscall"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// newAt makes an RC writer whose queue starts with outstanding work
// requests: head, tail and cur_post as given.
func newAt(t *testing.T, n, maxPost int, curPost, head, tail uint32, starts []uint32) (*sq.SQ, *qmem.Memory, error) {
	t.Helper()
	return newSQConf(t, n, func(c *sq.Config) {
		c.QP.SendOps, c.QP.MlxSendOps, c.QP.MaxPost, c.QP.MkeyTagSupported = 0x3ff, 0x1f, maxPost, false
		c.CurPost, c.Head, c.Tail, c.Starts = curPost, head, tail, starts
	})
}

// TestInitialFull: a queue that starts with max_post work requests
// outstanding (libmlx5's mlx5_wq_overflow: head - tail + nreq must stay
// below max_post) rejects the next builder with sq_room, writes nothing,
// and takes work again once completions free room.
func TestInitialFull(t *testing.T) {
	q, mem, err := newAt(t, 64, 12, 1000, 512, 500, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.Outstanding() != 12 {
		t.Fatalf("outstanding %d, want 12", q.Outstanding())
	}
	q.Start()
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, q.Send)
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, q.Complete)
	if q.CurPost() != 1000 || q.Last.Rung {
		t.Fatal("a send on a full queue wrote or posted")
	}
	if err := q.Completed(1); err != nil {
		t.Fatal(err)
	}
	q.Start()
	q.Send()
	q.SetSGE(1, 2, 3)
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, q.Send) // one free, not two
	q.Abort()
	q.Start()
	q.Send()
	q.SetSGE(1, 2, 3)
	if err := q.Complete(); err != nil {
		t.Fatal(err)
	}
	// The new WQE is the 13th work request since tail 500.
	if q.CurPost() != 1001 || q.Slots[1000%64].WQEHead != 512 || q.Head() != 513 {
		t.Fatalf("producer index %d, wqe_head %d, head %d", q.CurPost(), q.Slots[1000%64].WQEHead, q.Head())
	}
}

// TestInitialRoom: outstanding work requests hold their WQEBBs. Two
// outstanding WQEs of 3 WQEBBs each (2..4 and 5..7 of an 8-WQEBB ring)
// leave 2 WQEBBs: room for one local invalidate (2 WQEBBs); completing
// the first frees 3 more: two local invalidates and a send.
func TestInitialRoom(t *testing.T) {
	q, mem, err := newAt(t, 8, 0, 8, 2, 0, []uint32{2, 5})
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	if err := q.LocalInv(1); err != nil {
		t.Fatal(err)
	}
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, func() error { return q.LocalInv(2) })
	q.Abort()
	if err := q.Completed(1); err != nil {
		t.Fatal(err)
	}
	q.Start()
	if err := q.LocalInv(1); err != nil {
		t.Fatalf("after a completion: %v", err)
	}
	if err := q.LocalInv(2); err != nil {
		t.Fatalf("after a completion: %v", err)
	}
	if err := q.Send(); err != nil { // the last WQEBB
		t.Fatal(err)
	}
	q.SetSGE(1, 2, 3)
	rejects(t, mem, "ibv_wr.sq_room", syscall.ENOMEM, q.Send)
	q.Abort()
}

// TestInitialBad: an impossible initial state is refused.
func TestInitialBad(t *testing.T) {
	for _, c := range []struct {
		name                string
		n, maxPost          int
		curPost, head, tail uint32
		starts              []uint32
	}{
		{"more than max_post", 64, 12, 100, 13, 0, nil},
		{"more than the ring", 8, 0, 100, 9, 0, nil},
		{"tail after head", 64, 12, 100, 0, 1, nil},
		{"starts count", 64, 12, 100, 2, 0, []uint32{99}},
		{"start at cur_post", 64, 12, 100, 1, 0, []uint32{100}},
		{"starts out of order", 64, 12, 100, 2, 0, []uint32{98, 97}},
		{"start a ring back", 8, 0, 100, 1, 0, []uint32{91}},
	} {
		if _, _, err := newAt(t, c.n, c.maxPost, c.curPost, c.head, c.tail, c.starts); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}
