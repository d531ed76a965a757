package engine_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sim/engine"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestDoorbellRequired: WQEs in the ring and the doorbell record are not
// executed until the doorbell register is written.
func TestDoorbellRequired(t *testing.T) {
	f, a, b := pair(t, defaults)
	a.post(1, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		q.RDMAWrite(b.key, b.addr(0))
		return q.SetSGE(a.key, a.addr(0), 8)
	})
	// Take the doorbell back: the register write never happened.
	off := a.q.Last.Offset
	saved := append([]byte(nil), a.mem.BF[off:off+8]...)
	clear(a.mem.BF[off : off+8])
	if f.Drain(10) != 0 || len(a.poll()) != 0 {
		t.Fatal("executed without a doorbell")
	}
	copy(a.mem.BF[off:off+8], saved)
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success {
		t.Fatalf("after the doorbell: %+v", wc)
	}
}

func TestSendRecv(t *testing.T) {
	f, a, b := pair(t, defaults)
	copy(a.data.Bytes, "0123456789abcdef")
	// No receive posted: the sender waits (rnr_retry 7), nothing completes.
	a.post(1, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		q.SendImm(0x11223344)
		return q.SetSGE(a.key, a.addr(0), 16)
	})
	f.Drain(10)
	if len(a.poll()) != 0 {
		t.Fatal("a send completed with no receive posted")
	}
	if err := b.r.Post(9, []rq.SGE{{Addr: b.addr(8), Length: 4, LKey: b.key}, {Addr: b.addr(100), Length: 100, LKey: b.key}}); err != nil {
		t.Fatal(err)
	}
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].WRID != 1 || wc[0].Opcode != mlx.IBV_WC_SEND || wc[0].Flags&mlx.IBV_WC_WITH_IMM == 0 {
		t.Fatalf("sender: %+v", wc)
	}
	wc := b.poll()
	if len(wc) != 1 || wc[0].WRID != 9 || wc[0].Status != cq.Success || wc[0].Opcode != mlx.IBV_WC_RECV ||
		wc[0].ByteLen != 16 || wc[0].Imm != wireImm(0x11223344) || wc[0].SrcQP != a.qp.QPN() || wc[0].SLID != a.d.LID() {
		t.Fatalf("receiver: %+v", wc)
	}
	if string(b.data.Bytes[8:12]) != "0123" || string(b.data.Bytes[100:112]) != "456789abcdef" {
		t.Fatalf("scattered %q %q", b.data.Bytes[8:12], b.data.Bytes[100:112])
	}
}

func TestRNRRetryExceeded(t *testing.T) {
	f, a, b := pairRNR(t, defaults, 2)
	a.post(1, 0, func(q *sq.SQ) error {
		q.Send()
		return q.SetSGE(a.key, a.addr(0), 16)
	})
	f.Drain(10)
	wc := a.poll()
	if len(wc) != 1 || wc[0].Status != cq.RNRRetryExcErr {
		t.Fatalf("%+v", wc)
	}
	if a.qp.State() != mlx.IBV_QPS_ERR || b.qp.State() != mlx.IBV_QPS_RTS {
		t.Fatalf("states %v %v", a.qp.State(), b.qp.State())
	}
}

func TestWriteImm(t *testing.T) {
	f, a, b := pair(t, defaults)
	b.r.Post(5, []rq.SGE{{Addr: b.addr(0), Length: 0, LKey: b.key}})
	copy(a.data.Bytes[64:], "payload!")
	a.post(2, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		q.RDMAWriteImm(b.key, b.addr(4096), 0xcafe)
		return q.SetSGE(a.key, a.addr(64), 8)
	})
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Opcode != mlx.IBV_WC_RDMA_WRITE || wc[0].Flags&mlx.IBV_WC_WITH_IMM == 0 {
		t.Fatalf("sender %+v", wc)
	}
	wc := b.poll()
	if len(wc) != 1 || wc[0].WRID != 5 || wc[0].Opcode != mlx.IBV_WC_RECV_RDMA_WITH_IMM || wc[0].Imm != wireImm(0xcafe) || wc[0].ByteLen != 8 {
		t.Fatalf("receiver %+v", wc)
	}
	if string(b.data.Bytes[4096:4104]) != "payload!" {
		t.Fatal("data not written")
	}
}

// TestReadFence: a READ's data lands a step after it is sent; a WRITE
// after it reads the old local bytes unless it is fenced.
func TestReadFence(t *testing.T) {
	for _, fenced := range []bool{false, true} {
		f, a, b := pair(t, defaults)
		copy(b.data.Bytes[0:], "remote!!")
		copy(a.data.Bytes[0:], "local...")
		a.q.Start()
		a.q.SetWRID(1)
		a.q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		a.q.RDMARead(b.key, b.addr(0))
		a.q.SetSGE(a.key, a.addr(0), 8)
		a.q.SetWRID(2)
		fl := mlx.IBV_SEND_SIGNALED
		if fenced {
			fl |= mlx.IBV_SEND_FENCE
		}
		a.q.SetWRFlags(fl)
		a.q.RDMAWrite(b.key, b.addr(512))
		a.q.SetSGE(a.key, a.addr(0), 8)
		if err := a.q.Complete(); err != nil {
			t.Fatal(err)
		}
		f.Drain(10)
		wc := a.poll()
		if len(wc) != 2 || wc[0].WRID != 1 || wc[0].Opcode != mlx.IBV_WC_RDMA_READ || wc[0].ByteLen != 8 || wc[1].WRID != 2 {
			t.Fatalf("completions %+v", wc)
		}
		want := "local..."
		if fenced {
			want = "remote!!"
		}
		if got := string(b.data.Bytes[512:520]); got != want {
			t.Errorf("fenced %v: the write carried %q, want %q", fenced, got, want)
		}
		if string(a.data.Bytes[0:8]) != "remote!!" {
			t.Error("the read did not land")
		}
	}
}

func TestAtomics(t *testing.T) {
	f, a, b := pair(t, defaults)
	ne := binary.NativeEndian
	ne.PutUint64(b.data.Bytes[64:], 100)
	a.post(1, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		q.AtomicFetchAdd(b.key, b.addr(64), 5)
		return q.SetSGE(a.key, a.addr(0), 8)
	})
	a.post(2, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		q.AtomicCmpSwp(b.key, b.addr(64), 105, 7)
		return q.SetSGE(a.key, a.addr(8), 8)
	})
	a.post(3, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		q.AtomicCmpSwp(b.key, b.addr(64), 105, 9) // fails the compare
		return q.SetSGE(a.key, a.addr(16), 8)
	})
	f.Drain(10)
	wc := a.poll()
	if len(wc) != 3 || wc[0].Opcode != mlx.IBV_WC_FETCH_ADD || wc[1].Opcode != mlx.IBV_WC_COMP_SWAP || wc[2].Status != cq.Success {
		t.Fatalf("%+v", wc)
	}
	if ne.Uint64(b.data.Bytes[64:]) != 7 || ne.Uint64(a.data.Bytes[0:]) != 100 || ne.Uint64(a.data.Bytes[8:]) != 105 || ne.Uint64(a.data.Bytes[16:]) != 7 {
		t.Fatalf("values: remote %d, results %d %d %d", ne.Uint64(b.data.Bytes[64:]), ne.Uint64(a.data.Bytes[0:]), ne.Uint64(a.data.Bytes[8:]), ne.Uint64(a.data.Bytes[16:]))
	}
	a.post(4, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		q.AtomicFetchAdd(b.key, b.addr(65), 1)
		return q.SetSGE(a.key, a.addr(0), 8)
	})
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.RemInvReqErr {
		t.Fatalf("misaligned: %+v", wc)
	}
}

func TestInlineAndSGEList(t *testing.T) {
	f, a, b := pair(t, defaults)
	copy(a.data.Bytes[0:], "AAAA")
	copy(a.data.Bytes[200:], "BBBB")
	a.post(1, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		q.RDMAWrite(b.key, b.addr(0))
		return q.SetSGEList([]mlx.SGE{{Addr: a.addr(0), Length: 4, LKey: a.key}, {Addr: a.addr(200), Length: 4, LKey: a.key}})
	})
	a.post(2, mlx.IBV_SEND_SIGNALED|mlx.IBV_SEND_INLINE, func(q *sq.SQ) error {
		q.RDMAWrite(b.key, b.addr(8))
		return q.SetInlineDataList([][]byte{[]byte("inline "), bytes.Repeat([]byte("x"), 90)})
	})
	f.Drain(10)
	if wc := a.poll(); len(wc) != 2 || wc[0].Status != cq.Success || wc[1].Status != cq.Success {
		t.Fatalf("%+v", wc)
	}
	if string(b.data.Bytes[0:8]) != "AAAABBBB" || string(b.data.Bytes[8:15]) != "inline " || b.data.Bytes[104] != 'x' || b.data.Bytes[105] != 0 {
		t.Fatalf("remote %q", b.data.Bytes[0:106])
	}
}

// TestUnsignaled: unsignaled work requests get no CQE; the next signaled
// one retires them all.
func TestUnsignaled(t *testing.T) {
	f, a, b := pair(t, defaults)
	for i := range 5 {
		fl := mlx.SendFlags(0)
		if i == 4 {
			fl = mlx.IBV_SEND_SIGNALED
		}
		a.post(uint64(i), fl, func(q *sq.SQ) error {
			q.RDMAWrite(b.key, b.addr(i*8))
			return q.SetSGE(a.key, a.addr(0), 8)
		})
	}
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].WRID != 4 || a.q.Outstanding() != 0 {
		t.Fatalf("%+v, outstanding %d", wc, a.q.Outstanding())
	}
}

// TestSRQ: a QP receiving through a shared receive queue takes its WQEs
// in the order of the free list runtime/rq keeps; the poller frees them.
func TestSRQ(t *testing.T) {
	f := engine.NewFabric()
	a := newSide(t, f, "a", defaults)
	b := newSide(t, f, "b", defaults)
	region, err := dma.Map(dma.Options{Size: 4096, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	ring, _ := region.Alloc(8*32, 0)
	dbr, _ := region.Alloc(64, 0)
	s, err := rq.NewSRQ(rq.SRQConfig{Mem: rq.Memory{Ring: ring.Bytes, DBR: (*[4]byte)(dbr.Bytes[0:4])}, Stride: 32, Tail: 7, Init: true})
	if err != nil {
		t.Fatal(err)
	}
	es, err := b.d.CreateSRQ(ring.Bytes, 32, dbr.Bytes, 0)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := b.d.CreateQP(engine.QPConfig{Type: engine.RC, PD: b.pd, SendCQ: b.cq, RecvCQ: b.cq, Mem: b.mem, SRQ: es})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.c.AddSRQ(es.SRQN(), cq.SRQ{Q: s}); err != nil {
		t.Fatal(err)
	}
	b.qp = qp
	connect(t, a, b, 7)
	for i := range 3 {
		if err := s.Post(uint64(100+i), []rq.SGE{{Addr: b.addr(i * 64), Length: 64, LKey: b.key}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		copy(a.data.Bytes[i*8:], fmt.Sprintf("msg %d", i))
		a.post(uint64(i), 0, func(q *sq.SQ) error { q.Send(); return q.SetSGE(a.key, a.addr(i*8), 5) })
	}
	f.Drain(10)
	wc := b.poll()
	if len(wc) != 3 {
		t.Fatalf("%+v", wc)
	}
	for i, w := range wc {
		if w.WRID != uint64(100+i) || w.Status != cq.Success || w.ByteLen != 5 || string(b.data.Bytes[i*64:i*64+5]) != fmt.Sprintf("msg %d", i) {
			t.Errorf("receive %d: %+v %q", i, w, b.data.Bytes[i*64:i*64+5])
		}
	}
}

// TestSendInvalidate: a SEND with invalidate invalidates the receiver's
// memory window and reports its rkey.
func TestSendInvalidate(t *testing.T) {
	f, a, b := pair(t, defaults)
	mw, _ := b.d.AllocMW(b.pd)
	rkey := mw&^0xff | (mw+7)&0xff
	b.post(1, 0, func(q *sq.SQ) error {
		return q.BindMW(&sq.MW{RKey: mw}, rkey, &sq.MWBindInfo{LKey: b.key, Addr: b.addr(0), Length: 64, AccessFlags: mlx.IBV_ACCESS_REMOTE_WRITE | mlx.IBV_ACCESS_LOCAL_WRITE})
	})
	f.Drain(10) // the bind first
	b.r.Post(9, []rq.SGE{{Addr: b.addr(512), Length: 64, LKey: b.key}})
	a.post(2, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.SendInv(rkey); return q.SetSGE(a.key, a.addr(0), 8) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success {
		t.Fatalf("sender %+v", wc)
	}
	if wc := b.poll(); len(wc) != 1 || wc[0].Flags&mlx.IBV_WC_WITH_INV == 0 || wc[0].Imm != rkey {
		t.Fatalf("receiver %+v (rkey %#x)", wc, rkey)
	}
	a.post(3, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMAWrite(rkey, b.addr(0)); return q.SetSGE(a.key, a.addr(0), 8) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.RemAccessErr {
		t.Fatalf("write through the invalidated window: %+v", wc)
	}
}

// TestGIDRouting: QPs connected by GID (RoCE: a GRH on every message)
// reach each other, and the receiver's completion says a GRH came.
func TestGIDRouting(t *testing.T) {
	f := engine.NewFabric()
	a, b := newSide(t, f, "a", defaults), newSide(t, f, "b", defaults)
	for _, p := range [][2]*side{{a, b}, {b, a}} {
		x, y := p[0], p[1]
		for _, st := range []mlx.QPState{mlx.IBV_QPS_INIT, mlx.IBV_QPS_RTR, mlx.IBV_QPS_RTS} {
			if err := x.qp.Modify(st, &engine.Remote{GID: y.d.GID(), GRH: true, QPN: y.qp.QPN(), RNRRetry: 7}); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.r.Post(1, []rq.SGE{{Addr: b.addr(0), Length: 64, LKey: b.key}})
	a.post(2, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.Send(); return q.SetSGE(a.key, a.addr(0), 8) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success {
		t.Fatalf("sender %+v", wc)
	}
	if wc := b.poll(); len(wc) != 1 || wc[0].Flags&mlx.IBV_WC_GRH == 0 {
		t.Fatalf("receiver %+v", wc)
	}
	if a.d.GID() == b.d.GID() || a.d.LID() == b.d.LID() {
		t.Fatal("two devices share an address")
	}
}

// TestRecvWQSig: a receive queue created with wq_sig (each WQE starts
// with a signature segment, runtime/rq writes it) receives into the data
// segments after it.
func TestRecvWQSig(t *testing.T) {
	f := engine.NewFabric()
	a, b := newSide(t, f, "a", defaults), newSide(t, f, "b", defaults)
	region, err := dma.Map(dma.Options{Size: 4096, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	ring, _ := region.Alloc(8*64, 0)
	qp, err := b.d.CreateQP(engine.QPConfig{Type: engine.RC, PD: b.pd, SendCQ: b.cq, RecvCQ: b.cq, Mem: b.mem,
		RQ: ring.Bytes, RQStride: 64, WQSig: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rq.New(rq.Config{Mem: rq.Memory{Ring: ring.Bytes, DBR: (*[4]byte)(b.mem.DBR[0:4])}, Stride: 64, WQSig: true, QPN: qp.QPN()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cq.New(cq.Config{Mem: b.mem, CQN: b.cq.CQN()})
	if err != nil {
		t.Fatal(err)
	}
	c.AddQP(&cq.QP{QPN: qp.QPN(), RC: true, RQ: cq.RQ{Q: r}})
	b.qp, b.c = qp, c
	connect(t, a, b, 7)
	if err := r.Post(5, []rq.SGE{{Addr: b.addr(64), Length: 4, LKey: b.key}, {Addr: b.addr(128), Length: 8, LKey: b.key}}); err != nil {
		t.Fatal(err)
	}
	copy(a.data.Bytes, "wq_sig data!")
	a.post(1, 0, func(q *sq.SQ) error { q.Send(); return q.SetSGE(a.key, a.addr(0), 12) })
	f.Drain(10)
	wc := b.poll()
	if len(wc) != 1 || wc[0].WRID != 5 || wc[0].Status != cq.Success || string(b.data.Bytes[64:68]) != "wq_s" || string(b.data.Bytes[128:136]) != "ig data!" {
		t.Fatalf("%+v %q %q", wc, b.data.Bytes[64:68], b.data.Bytes[128:136])
	}
}
