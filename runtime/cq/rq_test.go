package cq

import (
	"encoding/binary"
	"errors"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// newRQ makes a receive queue of n WQEs with two SGEs each (with wq_sig:
// one, after the signature segment) on the QP doorbell record of m.
func newRQ(t *testing.T, n int, sig bool) (*rq.RQ, []byte) {
	t.Helper()
	ring, dbr := make([]byte, n*32), new([4]byte)
	q, err := rq.New(rq.Config{Mem: rq.Memory{Ring: ring, DBR: dbr}, Stride: 32, WQSig: sig, QPN: 9})
	if err != nil {
		t.Fatal(err)
	}
	return q, ring
}

// TestRQResponderOpcodes: SEND, SEND with immediate, SEND with invalidate
// and RDMA WRITE with immediate on a real rq.RQ find their wr_id at the
// CQE's WQE counter and retire one work request each; ring room comes
// back, many times over; a CQE with nothing outstanding is unknown.
func TestRQResponderOpcodes(t *testing.T) {
	m := newMem(t, 8, 4)
	q, _ := newRQ(t, 4, false)
	c := newCQ(t, m, 0)
	if err := c.AddQP(&QP{QPN: 0x77, RQ: RQ{Q: q}}); err != nil {
		t.Fatal(err)
	}
	ops := []struct {
		op    uint8
		wc    mlx.IBVWCOpcode
		flags mlx.WCFlags
	}{
		{opRespSend, mlx.IBV_WC_RECV, 0},
		{opRespSImm, mlx.IBV_WC_RECV, mlx.IBV_WC_WITH_IMM},
		{opRespSInv, mlx.IBV_WC_RECV, mlx.IBV_WC_WITH_INV},
		{opRespImm, mlx.IBV_WC_RECV_RDMA_WITH_IMM, mlx.IBV_WC_WITH_IMM},
	}
	wc := make([]WC, 4)
	id, ci := uint64(100), uint32(0)
	for round := 0; round < 300; round++ {
		for q.Outstanding() < q.MaxPost() {
			if err := q.Post(id, []rq.SGE{{Addr: 0x1000, Length: 64, LKey: 5}}); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			id++
		}
		if err := q.Post(id, nil); err == nil {
			t.Fatalf("round %d: a full receive queue accepted a work request", round)
		}
		o := ops[round%len(ops)]
		put(m, ci, cqe{op: o.op, qpn: 0x77, ctr: uint16(q.Tail()), byteCnt: 64, imm: 0xabcd0000 + uint32(round)})
		want := q.WRID(q.TailIndex())
		ci++
		n, err := c.Poll(wc)
		if n != 1 || err != nil {
			t.Fatalf("round %d: %d %v", round, n, err)
		}
		w := wc[0]
		if w.WRID != want || w.Opcode != o.wc || w.Flags != o.flags || w.ByteLen != 64 || w.QPNum != 0x77 {
			t.Fatalf("round %d: %+v, want wr_id %d %v %v", round, w, want, o.wc, o.flags)
		}
		if o.flags != 0 && w.Imm != 0xabcd0000+uint32(round) {
			t.Fatalf("round %d: imm %#x", round, w.Imm)
		}
	}
	for q.Outstanding() > 0 {
		put(m, ci, cqe{op: opRespSend, qpn: 0x77, ctr: uint16(q.Tail())})
		ci++
		if n, err := c.Poll(wc); n != 1 || err != nil {
			t.Fatalf("drain: %d %v", n, err)
		}
	}
	put(m, ci, cqe{op: opRespSend, qpn: 0x77})
	var ue *UnknownError
	if n, err := c.Poll(wc); n != 0 || !errors.As(err, &ue) || ue.What != "outstanding receive WQE" {
		t.Fatalf("a receive CQE with nothing outstanding: %d %v", n, err)
	}
	if q.Tail() != q.Head() {
		t.Fatalf("tail %d head %d", q.Tail(), q.Head())
	}
}

// TestRQInlineScatter: data scattered to a CQE lands in the SGE buffers
// of the receive WQE at the CQE's counter, with and without wq_sig.
func TestRQInlineScatter(t *testing.T) {
	for _, sig := range []bool{false, true} {
		m := newMem(t, 8, 4)
		mem := &testMem{base: 0x40000, b: make([]byte, 64)}
		c, err := New(Config{Mem: m, Scatter: mem})
		if err != nil {
			t.Fatal(err)
		}
		q, _ := newRQ(t, 4, sig)
		if err := c.AddQP(&QP{QPN: 5, RQ: RQ{Q: q}}); err != nil {
			t.Fatal(err)
		}
		sges := []rq.SGE{{Addr: 0x40000, Length: 3, LKey: 1}, {Addr: 0x40010, Length: 16, LKey: 1}}
		if sig {
			sges = []rq.SGE{{Addr: 0x40000, Length: 3, LKey: 1}} // one SGE fits
		}
		if err := q.Post(1, sges); err != nil {
			t.Fatal(err)
		}
		n := uint32(7)
		if sig {
			n = 3
		}
		put(m, 0, cqe{op: opRespSend, qpn: 5, ctr: 0, byteCnt: n, scatter: uint8(mlx.MLX5_INLINE_SCATTER_32)})
		copy(m.CQ[0:], []byte("abcdefg"))
		wc := make([]WC, 1)
		if got, err := c.Poll(wc); got != 1 || err != nil || wc[0].Status != Success || wc[0].WRID != 1 {
			t.Fatalf("sig %v: %d %v %+v", sig, got, err, wc[0])
		}
		if string(mem.b[0:3]) != "abc" || (!sig && string(mem.b[16:20]) != "defg") {
			t.Fatalf("sig %v: % x", sig, mem.b[:24])
		}
	}
}

// newSRQ makes a new SRQ of n WQEs of one SGE.
func newSRQ(t *testing.T, n int, waitq bool) (*rq.SRQ, *[4]byte) {
	t.Helper()
	dbr := new([4]byte)
	tail := uint16(n - 1)
	if waitq {
		tail = uint16(n/2 - 1)
	}
	s, err := rq.NewSRQ(rq.SRQConfig{Mem: rq.Memory{Ring: make([]byte, n*32), DBR: dbr}, Stride: 32,
		Tail: tail, Init: true, WaitQueue: waitq})
	if err != nil {
		t.Fatal(err)
	}
	return s, dbr
}

// TestSRQResponder: completions of a real rq.SRQ, in any order, find the
// wr_id of the WQE their counter names and free it back to the free list
// (posting goes on forever); inline scatter writes into the WQE's SGE; a
// CQE naming a WQE that is not posted is unknown.
func TestSRQResponder(t *testing.T) {
	m := newMem(t, 8, 8)
	mem := &testMem{base: 0x50000, b: make([]byte, 32)}
	c, err := New(Config{Mem: m, Scatter: mem})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newSRQ(t, 8, false)
	if err := c.AddSRQ(0x31, SRQ{Q: s}); err != nil {
		t.Fatal(err)
	}
	posted := map[uint16]uint64{} // WQE -> wr_id
	id, ci := uint64(1), uint32(0)
	wc := make([]WC, 8)
	for round := 0; round < 500; round++ {
		for {
			h := s.Head()
			if err := s.Post(id, []rq.SGE{{Addr: 0x50000, Length: 32, LKey: 2}}); err != nil {
				break
			}
			posted[h] = id
			id++
		}
		if len(posted) != 7 {
			t.Fatalf("round %d: %d posted", round, len(posted))
		}
		// Complete two of them, chosen by the round; the first scatters.
		var done []uint16
		for ind := range posted {
			done = append(done, ind)
		}
		a, b := done[round%len(done)], done[(round+3)%len(done)]
		put(m, ci, cqe{op: opRespSImm, qpn: 0x9, srqnUidx: 0x31, ctr: a, byteCnt: 4, scatter: uint8(mlx.MLX5_INLINE_SCATTER_32)})
		off := int(ci&7) * 64
		copy(m.CQ[off:], []byte{byte(round), 2, 3, 4})
		put(m, ci+1, cqe{op: opRespImm, qpn: 0x9, srqnUidx: 0x31, ctr: b, byteCnt: 100})
		ci += 2
		n, err := c.Poll(wc)
		if n != 2 || err != nil {
			t.Fatalf("round %d: %d %v", round, n, err)
		}
		if wc[0].WRID != posted[a] || wc[0].Status != Success || wc[0].Opcode != mlx.IBV_WC_RECV || mem.b[0] != byte(round) {
			t.Fatalf("round %d: %+v want %d, scattered % x", round, wc[0], posted[a], mem.b[:4])
		}
		if wc[1].WRID != posted[b] || wc[1].Opcode != mlx.IBV_WC_RECV_RDMA_WITH_IMM {
			t.Fatalf("round %d: %+v want %d", round, wc[1], posted[b])
		}
		if s.Tail() != b {
			t.Fatalf("round %d: free list tail %d, want the last freed %d", round, s.Tail(), b)
		}
		delete(posted, a)
		delete(posted, b)
	}
	put(m, ci, cqe{op: opRespSend, qpn: 0x9, srqnUidx: 0x31, ctr: s.Head()})
	var ue *UnknownError
	if n, err := c.Poll(wc); n != 0 || !errors.As(err, &ue) || ue.What != "posted SRQ WQE" {
		t.Fatalf("a CQE naming a free WQE: %d %v", n, err)
	}
}

// TestRemoveSRQ: after RemoveSRQ a CQE of the SRQ finds no SRQ (the
// looked-up one is not kept), and the number can be registered again.
func TestRemoveSRQ(t *testing.T) {
	m := newMem(t, 8, 8)
	c := newCQ(t, m, 0)
	s, _ := newSRQ(t, 8, false)
	if err := c.AddSRQ(5, SRQ{Q: s}); err != nil {
		t.Fatal(err)
	}
	if err := s.Post(7, []rq.SGE{{Addr: 0x1000, Length: 8, LKey: 3}}); err != nil {
		t.Fatal(err)
	}
	put(m, 0, cqe{op: opRespSend, qpn: 1, srqnUidx: 5, ctr: 0, byteCnt: 8})
	wc := make([]WC, 2)
	if n, err := c.Poll(wc); n != 1 || err != nil || wc[0].WRID != 7 {
		t.Fatalf("before RemoveSRQ: %d %v %+v", n, err, wc[0])
	}
	if ok1, _ := c.RemoveSRQ(5); !ok1 {
		t.Fatal("RemoveSRQ did not remove")
	}
	if ok2, _ := c.RemoveSRQ(5); ok2 {
		t.Fatal("RemoveSRQ: want true once, then false")
	}
	if err := s.Post(8, []rq.SGE{{Addr: 0x1000, Length: 8, LKey: 3}}); err != nil {
		t.Fatal(err)
	}
	put(m, 1, cqe{op: opRespSend, qpn: 1, srqnUidx: 5, ctr: 1, byteCnt: 8})
	var ue *UnknownError
	if n, err := c.Poll(wc); n != 0 || !errors.As(err, &ue) || ue.What != "SRQ" {
		t.Fatalf("after RemoveSRQ: %d %v", n, err)
	}
	if err := c.AddSRQ(5, SRQ{Q: s}); err != nil {
		t.Fatalf("AddSRQ again: %v", err)
	}
}

// TestSRQRepostODP: an ODP page fault on an SRQ WQE is handled inside the
// poll (no completion): the work request is posted again in the free
// list's head WQE, the faulted WQE is freed (with a wait queue, it cools
// down there), and the doorbell record counts the repost. The reposted
// work request then completes with its wr_id.
func TestSRQRepostODP(t *testing.T) {
	for _, waitq := range []bool{false, true} {
		m := newMem(t, 8, 8)
		c := newCQ(t, m, 0)
		s, dbr := newSRQ(t, 8, waitq)
		if err := c.AddSRQ(2, SRQ{Q: s}); err != nil {
			t.Fatal(err)
		}
		for i := uint64(0); i < 3; i++ {
			if err := s.Post(10+i, []rq.SGE{{Addr: 0x1000 * (i + 1), Length: 8, LKey: 3}}); err != nil {
				t.Fatal(err)
			}
		}
		head := s.Head()
		put(m, 0, cqe{op: opRespErr, qpn: 1, srqnUidx: 2, ctr: 1,
			synd: uint8(mlx.MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR), vendor: uint8(mlx.MLX5_CQE_VENDOR_SYNDROME_ODP_PFAULT)})
		wc := make([]WC, 2)
		if n, err := c.Poll(wc); n != 0 || err != nil {
			t.Fatalf("waitq %v: %d %v", waitq, n, err)
		}
		if binary.BigEndian.Uint32(dbr[:]) != 4 || s.Counter() != 4 {
			t.Fatalf("waitq %v: doorbell record % x", waitq, dbr[:])
		}
		if s.WRID(head) != 11 || binary.BigEndian.Uint64(s.WQE(head)[24:32]) != 0x2000 {
			t.Fatalf("waitq %v: WQE %d: wr_id %d % x", waitq, head, s.WRID(head), s.WQE(head))
		}
		put(m, 1, cqe{op: opRespSend, qpn: 1, srqnUidx: 2, ctr: head})
		put(m, 2, cqe{op: opRespSend, qpn: 1, srqnUidx: 2, ctr: 1}) // the faulted WQE is not posted
		n, err := c.Poll(wc)
		var ue *UnknownError
		if n != 1 || wc[0].WRID != 11 || !errors.As(err, &ue) {
			t.Fatalf("waitq %v: %d %v %+v", waitq, n, err, wc[0])
		}
	}
}
