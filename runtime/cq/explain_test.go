package cq

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestWCSize: Syndrome and PostedOpcode live in what was WC's padding;
// WC is written for every completion on the hot path.
func TestWCSize(t *testing.T) {
	if n := unsafe.Sizeof(WC{}); n != 48 {
		t.Errorf("WC is %d bytes, want 48", n)
	}
}

// TestEverySyndromeHasMeaning: every MLX5_CQE_SYNDROME_* value the header
// declares (String names it) has a meaning from the spec, and the values
// it does not declare have none.
func TestEverySyndromeHasMeaning(t *testing.T) {
	named := 0
	for v := range 256 {
		s := mlx.CQESyndrome(v)
		declared := strings.HasPrefix(s.String(), "MLX5_CQE_SYNDROME_")
		if declared {
			named++
		}
		if m := s.Meaning(); declared != (m != "") || strings.ContainsAny(m, "\n") {
			t.Errorf("%v (%#x): meaning %q", s, v, m)
		}
	}
	if named < 13 {
		t.Errorf("only %d syndromes named", named)
	}
}

// explainSQ is a send queue of runtime/sq with two RDMA writes posted,
// wr_id 0x77 and 0x78, on QPN 0x55 of a new CQ.
func explainSQ(t *testing.T) (*CQ, *qmem.Memory) {
	m := newMem(t, 8, 8)
	q, err := sq.New(sq.Config{Mem: m, QPN: 0x55, QP: sq.QP{Type: mlx.QPRC, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_SEND, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	c := newCQ(t, m, 0)
	if err := c.AddQP(&QP{QPN: 0x55, RC: true, SQ: SQ{Q: q, Mem: m}}); err != nil {
		t.Fatal(err)
	}
	for id := uint64(0x77); id <= 0x78; id++ {
		q.SetWRID(id)
		q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		if err := q.Start(); err != nil {
			t.Fatal(err)
		}
		if id == 0x77 {
			q.RDMAWrite(1, 0x1000)
		} else {
			q.Send()
		}
		q.SetSGE(2, 0x2000, 8)
		if err := q.Complete(); err != nil {
			t.Fatal(err)
		}
	}
	return c, m
}

func TestErrorCompletionExplains(t *testing.T) {
	c, m := explainSQ(t)
	put(m, 0, cqe{op: opReqErr, qpn: 0x55, synd: uint8(mlx.MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR), vendor: 0x88, ctr: 0})
	wc := make([]WC, 1)
	if n, err := c.Poll(wc); n != 1 || err != nil {
		t.Fatalf("%d %v", n, err)
	}
	w := wc[0]
	if w.Opcode != mlx.IBV_WC_SEND || mlx.Opcode(w.PostedOpcode) != mlx.MLX5_OPCODE_RDMA_WRITE ||
		mlx.CQESyndrome(w.Syndrome) != mlx.MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR {
		t.Errorf("%+v", w)
	}
	err := w.Err()
	want := "work completion IBV_WC_REM_ACCESS_ERR: wr_id 0x77 on QPN 0x55, posted as MLX5_OPCODE_RDMA_WRITE: " +
		"syndrome MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR (" + mlx.MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR.Meaning() + "), vendor error 0x88"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	var se *StatusError
	if !errors.Is(err, syscall.EACCES) || !errors.As(err, &se) || se.WRID != 0x77 || se.QPNum != 0x55 {
		t.Errorf("%#v", err)
	}
	// The lazy session reads the same for the second work request.
	put(m, 1, cqe{op: opReqErr, qpn: 0x55, synd: uint8(mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR), ctr: 1})
	if err := c.StartPoll(); err != nil {
		t.Fatal(err)
	}
	if c.WRID() != 0x78 || c.ReadSyndrome() != mlx.MLX5_CQE_SYNDROME_WR_FLUSH_ERR ||
		c.ReadPostedOpcode() != mlx.MLX5_OPCODE_SEND || c.ReadOpcode() != mlx.IBV_WC_SEND {
		t.Errorf("lazy: wr_id %#x, syndrome %v, posted %v", c.WRID(), c.ReadSyndrome(), c.ReadPostedOpcode())
	}
	c.EndPoll()
	if s := (&WC{}).Err(); s != nil {
		t.Errorf("success: %v", s)
	}
	// Status.Err knows the status only and says so as before.
	if s := RemAccessErr.Err().Error(); s != "work completion IBV_WC_REM_ACCESS_ERR (vendor error 0x0)" {
		t.Error(s)
	}
}

// TestErrorWithoutPostedOpcode: a receive error, and a send queue that
// does not keep opcodes, leave PostedOpcode 0 and out of the message.
func TestErrorWithoutPostedOpcode(t *testing.T) {
	m := newMem(t, 8, 8)
	c := newCQ(t, m, 0)
	rq := &fakeRQ{wrid: []uint64{1, 2, 3, 4}, wqes: make([]byte, 4*32)}
	if err := c.AddQP(&QP{QPN: 5, RQ: rq, SQ: newFakeSQ(8)}); err != nil {
		t.Fatal(err)
	}
	put(m, 0, cqe{op: opReqErr, qpn: 5, synd: uint8(mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR), ctr: 3})
	put(m, 1, cqe{op: opRespErr, qpn: 5, synd: uint8(mlx.MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR), ctr: 0})
	wc := make([]WC, 2)
	if n, err := c.Poll(wc); n != 2 || err != nil {
		t.Fatalf("%d %v", n, err)
	}
	for i, w := range wc {
		msg := w.Err().Error()
		if w.PostedOpcode != 0 || strings.Contains(msg, "posted") || !strings.Contains(msg, mlx.CQESyndrome(w.Syndrome).Meaning()) || w.Syndrome == 0 {
			t.Errorf("%d: %+v: %s", i, w, msg)
		}
	}
}
