package sq_test

import (
	"bytes"
	"errors"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestClose: after Close (mid-batch, too) nothing is written to the ring,
// the doorbell record or the register, and Start says why.
func TestClose(t *testing.T) {
	mem, err := qmem.New(qmem.Options{WQEBBs: 8, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	q, err := sq.New(sq.Config{Mem: mem, QPN: 5, QP: sq.QP{Type: mlx.QPRC, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	snap := func() []byte { return bytes.Join([][]byte{mem.SQ, mem.DBR, mem.BF}, nil) }
	before := snap()
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	q.Close()
	q.Close()
	_ = q.RDMAWrite(1, 2)
	_ = q.SetSGE(1, 2, 3)
	if err := q.Complete(); err == nil {
		t.Error("Complete of the batch Close aborted succeeded")
	}
	if err := q.Start(); !errors.Is(err, sq.ErrClosed) || !errors.Is(err, qmem.ErrClosed) {
		t.Errorf("Start after Close: %v, want sq.ErrClosed (qmem.ErrClosed)", err)
	}
	if err := q.RDMAWriteBurst([]sq.RDMAWriteReq{{WRID: 1, Length: 8}}); err == nil {
		t.Error("RDMAWriteBurst after Close succeeded")
	}
	if err := q.Complete(); err == nil {
		t.Error("Complete after Close succeeded")
	}
	if !bytes.Equal(snap(), before) {
		t.Error("the queue memory changed after Close")
	}
	if q.Head() != 0 {
		t.Errorf("%d work requests posted after Close", q.Head())
	}
}
