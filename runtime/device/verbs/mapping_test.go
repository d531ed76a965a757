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

// TestSRQMemory: the SRQ mlx5dv_init_obj reports becomes a ring the SRQ
// writer lays out as libmlx5 did: tail + 1 WQEs, twice as many with the
// wait queue libmlx5 keeps when 2 * max_wr + 1 fits the device's limit.
func TestSRQMemory(t *testing.T) {
	base := region(t, 1<<16)
	out := mlx.SRQ{Buf: base, Dbrec: unsafe.Add(base, 32768), Stride: 64, Tail: 7, SRQN: 0x55,
		CompMask: uint64(mlx.MLX5DV_SRQ_MASK_SRQN)}
	for _, tc := range []struct {
		devMax, wqes int
		waitq        bool
	}{{devMax: 16, wqes: 16, waitq: true}, {devMax: 14, wqes: 8}} {
		m, err := srqMemory(&out, 7, tc.devMax)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Mem.Ring) != tc.wqes*64 || m.Stride != 64 || m.SRQN != 0x55 || m.Tail != 7 || &m.Mem.DBR[0] != (*byte)(out.Dbrec) {
			t.Fatalf("device limit %d: ring %d bytes, %+v", tc.devMax, len(m.Mem.Ring), m)
		}
		s, err := rq.NewSRQ(rq.SRQConfig{Mem: m.Mem, Stride: m.Stride, Head: m.Head, Tail: m.Tail, Init: true, WaitQueue: tc.waitq})
		if err != nil || s.WQEs() != uint32(tc.wqes) || s.MaxGS() != 3 {
			t.Fatalf("device limit %d: rq.NewSRQ: %v", tc.devMax, err)
		}
	}
	out.CompMask = 0
	if _, err := srqMemory(&out, 7, 16); err == nil {
		t.Error("an SRQ without its number was accepted")
	}
	out.CompMask, out.Tail = uint64(mlx.MLX5DV_SRQ_MASK_SRQN), 5
	if _, err := srqMemory(&out, 5, 8); err == nil {
		t.Error("a ring of 6 WQEs was accepted")
	}
}

// TestDCTAttr: a DCT is created as a DC target with its access key.
func TestDCTAttr(t *testing.T) {
	dv := dvAttr(device.QPConfig{Kind: device.DCT, DCAccessKey: 0xabc})
	if dv.CompMask&uint64(mlx.MLX5DV_QP_INIT_ATTR_MASK_DC) == 0 || dv.DCInitAttr.DCType != mlx.MLX5DV_DCTYPE_DCT ||
		dv.DCInitAttr.DCTAccessKey() != 0xabc {
		t.Fatalf("DCT attributes %+v", dv)
	}
	if err := dv.Validate(); err != nil {
		t.Fatal(err)
	}
}
