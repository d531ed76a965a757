package sq_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestClose: after Close nothing is written to the ring, the doorbell
// record or the register, and Start says why.
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
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := q.Start(); !errors.Is(err, sq.ErrClosed) || !errors.Is(err, qmem.ErrClosed) {
		t.Errorf("Start after Close: %v, want sq.ErrClosed (qmem.ErrClosed)", err)
	}
	if err := q.RDMAWrite(1, 2); err == nil {
		t.Error("RDMAWrite after Close succeeded")
	}
	if err := q.SetSGE(1, 2, 3); err == nil {
		t.Error("SetSGE after Close succeeded")
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

// TestCloseWaitsForBatch: Close from another goroutine waits for the
// batch in progress to end. Close by the writer itself mid-batch fails
// after CloseWait; the batch completes, no later one starts, and Close
// succeeds once the batch has ended.
func TestCloseWaitsForBatch(t *testing.T) {
	mem, err := qmem.New(qmem.Options{WQEBBs: 8, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	q, err := sq.New(sq.Config{Mem: mem, QPN: 5, CloseWait: 20 * time.Millisecond,
		QP: sq.QP{Type: mlx.QPRC, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	if err := q.RDMAWriteSGE(1, 2, 3, 4, 5); err != nil {
		t.Fatal(err)
	}
	// The writer itself: the batch is open, so Close cannot finish.
	if err := q.Close(); err == nil || !strings.Contains(err.Error(), "stayed inside") {
		t.Fatalf("Close mid-batch by the writer: %v, want a time-out naming the open batch", err)
	}
	// The batch began before Close: it completes (the memory is still the
	// queue's until Close returns), and the next one is refused.
	if err := q.Complete(); err != nil {
		t.Fatalf("Complete of the batch begun before Close: %v", err)
	}
	if err := q.Start(); !errors.Is(err, sq.ErrClosed) {
		t.Fatalf("Start after Close began: %v, want ErrClosed", err)
	}
	if err := q.Close(); err != nil {
		t.Fatalf("Close after the batch ended: %v", err)
	}

	// Another goroutine: Close returns only after Abort.
	q2, err := sq.New(sq.Config{Mem: mem, QPN: 6, QP: sq.QP{Type: mlx.QPRC, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q2.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- q2.Close() }()
	select {
	case err := <-done:
		t.Fatalf("Close returned during a batch: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	q2.Abort()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
