//go:build cgo

package verbs

import (
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// region returns n bytes of mapped memory standing in for what libmlx5
// allocates.
func region(t *testing.T, n int) unsafe.Pointer {
	r, err := dma.Map(dma.Options{Size: n, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	b, err := r.Alloc(n, 4096)
	if err != nil {
		t.Fatal(err)
	}
	return unsafe.Pointer(&b.Bytes[0])
}

// TestQPMemory: the queues mlx5dv_init_obj reports become memory the
// send and receive writers accept, with the doorbell record shared (the
// receive counter first) and both BlueFlame halves.
func TestQPMemory(t *testing.T) {
	base := region(t, 1<<16)
	out := mlx.QP{SQBuf: base, SQWQECnt: 64, SQStride: 64, RQBuf: unsafe.Add(base, 8192), RQWQECnt: 16, RQStride: 32,
		Dbrec: unsafe.Add(base, 16384), BFReg: unsafe.Add(base, 20480), BFSize: 256}
	cfg := device.QPConfig{Kind: device.RC, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MaxSendWR: 64}
	m := qpMemory(&out, 0x123, qpCaps{sendSGE: 2, inline: 60}, cfg, device.Caps{})
	if len(m.SQ.SQ) != 4096 || len(m.SQ.BF) != 512 || m.SQ.BFSize != 256 || !m.SQ.Device || m.BF.UUARN == 0 {
		t.Fatalf("send memory: ring %d, register %d, half %d, device %v, uuarn %d", len(m.SQ.SQ), len(m.SQ.BF), m.SQ.BFSize, m.SQ.Device, m.BF.UUARN)
	}
	if &m.RQ.DBR[0] != &m.SQ.DBR[0] || len(m.RQ.Ring) != 512 || m.RQStride != 32 || m.RQMaxPost != 16 {
		t.Fatalf("receive memory: ring %d, stride %d, max %d", len(m.RQ.Ring), m.RQStride, m.RQMaxPost)
	}
	if m.QP.MaxSendSGE != 2 || m.QP.MaxInlineData != 60 || m.QP.MaxPost != 64 || m.QP.Type != mlx.QPRC {
		t.Fatalf("sq.QP %+v", m.QP)
	}
	if _, err := sq.New(sq.Config{Mem: m.SQ, QPN: m.QPN, QP: m.QP, BF: m.BF}); err != nil {
		t.Errorf("sq.New: %v", err)
	}
	if _, err := rq.New(rq.Config{Mem: m.RQ, Stride: m.RQStride, MaxPost: m.RQMaxPost, QPN: m.QPN}); err != nil {
		t.Errorf("rq.New: %v", err)
	}
	// A DCI without BlueFlame: an 8-byte register, no receive queue.
	out.BFSize, out.RQWQECnt = 0, 0
	m = qpMemory(&out, 0x124, qpCaps{sendSGE: 1}, device.QPConfig{Kind: device.DCI, LogNumConcurent: 2}, device.Caps{})
	if len(m.SQ.BF) != 8 || m.BF.UUARN != 0 || m.RQ.Ring != nil || m.QP.Type != mlx.QPDCI || !m.QP.Streams {
		t.Fatalf("DCI memory: register %d, uuarn %d, rq %d, %+v", len(m.SQ.BF), m.BF.UUARN, len(m.RQ.Ring), m.QP)
	}
}

// TestCQMemory: the CQ mlx5dv_init_obj reports becomes memory the poller
// accepts, with the arm doorbell in its UAR.
func TestCQMemory(t *testing.T) {
	base := region(t, 1<<16)
	out := mlx.CQ{Buf: base, CQECnt: 256, CQESize: 64, Dbrec: unsafe.Add(base, 16384), CQUAR: unsafe.Add(base, 20480), CQN: 9}
	m := cqMemory(&out)
	if len(m.Mem.CQ) != 16384 || len(m.Mem.CQDBR) != 8 || len(m.UAR) != mlx.MLX5_CQ_DOORBELL+8 || !m.Device || m.CQN != 9 {
		t.Fatalf("CQ memory: %d, %d, %d, %v", len(m.Mem.CQ), len(m.Mem.CQDBR), len(m.UAR), m.Device)
	}
	cq.InitBuffer(m.Mem)
	c, err := cq.New(cq.Config{Mem: m.Mem, CQN: m.CQN, UAR: m.UAR})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Arm(false); err != nil {
		t.Fatal(err)
	}
	if db := unsafe.Slice((*byte)(unsafe.Add(base, 20480+mlx.MLX5_CQ_DOORBELL)), 8); db[7] != 9 {
		t.Errorf("the arm doorbell % x does not carry CQN 9", db)
	}
}
