package sq_test

import (
	"encoding/binary"
	"errors"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestReset: with work requests outstanding (never completed, as after a
// QP error) and a batch open, Reset starts the writer over: the open
// batch is dropped, the next WQE goes to slot 0 with WQE index 0, the
// whole ring is room again, and the send doorbell record counts from 0.
func TestReset(t *testing.T) {
	mem, err := qmem.New(qmem.Options{WQEBBs: 4, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	q, err := sq.New(sq.Config{Mem: mem, QPN: 5, QP: sq.QP{Type: mlx.QPRC, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	write := func(n int) error {
		if err := q.Start(); err != nil {
			return err
		}
		for range n {
			q.RDMAWrite(1, 0x1000)
			q.SetSGE(2, 0x2000, 8)
		}
		return q.Complete()
	}
	if err := write(3); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	q.RDMAWrite(1, 0x1000) // left open
	clear(mem.DBR[0:4])
	mem.DBR[0] = 0x77 // the receive counter is not the send queue's
	q.Reset()
	if q.CurPost() != 0 || q.Head() != 0 || q.Outstanding() != 0 {
		t.Fatalf("after Reset: cur_post %d, head %d, %d outstanding", q.CurPost(), q.Head(), q.Outstanding())
	}
	if binary.BigEndian.Uint32(mem.DBR[4:8]) != 0 || mem.DBR[0] != 0x77 {
		t.Fatalf("doorbell record %x after Reset, want the send counter 0 and the receive counter kept", mem.DBR[0:8])
	}
	clear(mem.SQ)
	if err := write(4); err != nil { // a full ring: no room held by the 3 before
		t.Fatalf("posting a ring's worth after Reset: %v", err)
	}
	ctrl := binary.BigEndian.Uint32(mem.SQ[0:4])
	if ctrl>>8 != 0 || uint8(ctrl) != uint8(mlx.MLX5_OPCODE_RDMA_WRITE) {
		t.Fatalf("slot 0 after Reset holds opmod_idx_opcode %#x, want WQE index 0 and RDMA_WRITE", ctrl)
	}
	if got := binary.BigEndian.Uint32(mem.DBR[4:8]); got != 4 {
		t.Fatalf("send doorbell record %d after 4 WQEs from a reset, want 4", got)
	}
	q.Close()
	q.Reset()
	if err := q.Start(); !errors.Is(err, sq.ErrClosed) {
		t.Fatalf("Start after Close and Reset: %v, want ErrClosed", err)
	}
}
