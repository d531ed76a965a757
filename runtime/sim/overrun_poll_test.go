package sim_test

import (
	"errors"
	"strings"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// TestCQOverrunPoll: on the simulator the overrun error comes without the
// program reading the IBV_EVENT_CQ_ERR event: Poll returns the CQEs the
// CQ holds, then fails with ErrCQOverrun naming the CQ, every time after,
// and the QP whose CQE found no room is in error: what it is given later
// is flushed, and the flushes, with no room either, are lost.
func TestCQOverrunPoll(t *testing.T) {
	c, q, a, mr := overrunPair(t, "sim:overrunpoll", 4)
	defer c.Close()
	wc := make([]cq.WC, 8)
	if n, err := q.Poll(wc); n != 0 || err != nil {
		t.Fatalf("Poll of a healthy empty CQ: %d, %v", n, err)
	}
	s := a.SQ()
	s.Start()
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	for i := range q.CQEs() + 1 {
		s.SetWRID(uint64(i))
		s.RDMAWrite(mr.RKey, mr.Addr+2048)
		s.SetSGE(mr.LKey, mr.Addr, 8)
	}
	if err := s.Complete(); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Poll(wc); n != q.CQEs() || err != nil {
		t.Fatalf("first Poll of an overrun CQ: %d, %v, want its %d CQEs and no error yet", n, err, q.CQEs())
	}
	if st := a.State(); st != mlx.IBV_QPS_ERR {
		t.Fatalf("the QP after the overrun: %v, want IBV_QPS_ERR", st)
	}
	for i := range 2 {
		n, err := q.Poll(wc)
		if n != 0 || !errors.Is(err, device.ErrCQOverrun) || !strings.Contains(err.Error(), "CQ 0x") {
			t.Fatalf("Poll after the CQ's CQEs: %d, %v, want ErrCQOverrun naming the CQ", n, err)
		}
		s.Start() // more work on the QP in error: flushed, with nowhere to go
		s.SetWRID(uint64(100 + i))
		s.RDMAWrite(mr.RKey, mr.Addr+2048)
		s.SetSGE(mr.LKey, mr.Addr, 8)
		if err := s.Complete(); err != nil {
			t.Fatal(err)
		}
	}
}
