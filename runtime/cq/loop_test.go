package cq_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// loop is the post-and-poll test's software side: the writers, the
// poller, and what it posted that has not completed yet, in order.
type loop struct {
	t     *testing.T
	rnd   *rand.Rand
	mem   *qmem.Memory
	q     *sq.SQ
	r     *rq.RQ
	c     *cq.CQ
	dev   *fakeDevice
	wc    []cq.WC
	sends []sendRec
	recvs []recvRec
	s     *rq.SRQ
	srqs  []recvRec // posted to the SRQ, in the order of its free list

	id, unsignaledRun                       uint64
	sendBBs, recvCount, cqes, full, retired int
	srqCount, srqFull                       int
	completions, errs, flushes, inlineOps   int
}

type sendRec struct {
	wrID     uint64
	start    uint32 // its first WQEBB (cur_post)
	bbs      uint32 // its WQEBBs
	signaled bool
}

type recvRec struct {
	wrID uint64
	ind  uint32 // its receive WQE counter
}

// TestPostPollLoop drives runtime/sq, runtime/rq and the poller against a
// fake device (device_test.go) through thousands of wraps of the send
// ring (16 WQEBBs), the receive ring (8 WQEs), a second QP's shared
// receive queue (8 WQEs) and the CQ (16 CQEs), with
// unsignaled batches, WQEs of one and two WQEBBs, errors with every
// syndrome and the flush errors after them. Every completion must be the
// one the device wrote, carry the wr_id posted for its WQE, and come once;
// unsignaled work requests must be retired without one (the writers'
// Outstanding follows the completions exactly); a full ring must get its
// room back; the CQ doorbell record must always hold the consumer index,
// or the device overwrites CQEs or stalls. Seeded, so deterministic.
func TestPostPollLoop(t *testing.T) {
	begin := time.Now()
	l := newLoop(t, 1)
	for step := 0; step < 40000; step++ {
		l.postSends(l.rnd.IntN(6))
		l.postRecvs()
		l.dev.execute(l.rnd.IntN(8), l.rnd.IntN(4))
		l.poll(1 + l.rnd.IntN(16))
	}
	// Drain: the device runs everything posted, the poller takes it all.
	for i := 0; len(l.sends)+len(l.recvs)+len(l.srqs) > 0; i++ {
		if i > 1000 {
			t.Fatalf("no progress: %d sends and %d receives outstanding, device at %d/%d", len(l.sends), len(l.recvs), l.dev.sqPI, l.dev.rqCI)
		}
		l.dev.execute(16, 16)
		l.poll(16)
	}
	if l.q.Outstanding() != 0 || l.r.Outstanding() != 0 {
		t.Fatalf("outstanding after the drain: %d sends, %d receives", l.q.Outstanding(), l.r.Outstanding())
	}
	wraps := func(n, size int) int { return n / size }
	t.Logf("%d SRQ ring passes, %d times full", wraps(l.srqCount, 8), l.srqFull)
	if wraps(l.srqCount, 8) < 2000 || l.srqFull < 1000 {
		t.Errorf("too few SRQ passes")
	}
	t.Logf("%d send ring wraps, %d receive ring wraps, %d CQ wraps; %d completions, %d errors, %d flushed, %d unsignaled retired, %d full rings, %d two-WQEBB WQEs; %v",
		wraps(l.sendBBs, 16), wraps(l.recvCount, 8), wraps(l.cqes, 16), l.completions, l.errs, l.flushes, l.retired, l.full, l.inlineOps, time.Since(begin))
	if wraps(l.sendBBs, 16) < 2000 || wraps(l.recvCount, 8) < 2000 || wraps(l.cqes, 16) < 2000 {
		t.Errorf("too few wraps")
	}
	if l.errs < 50 || l.flushes < 100 || l.retired < 1000 || l.full < 100 || l.inlineOps < 1000 {
		t.Errorf("the run did not exercise errors, flushes, unsignaled work requests, full rings or large WQEs enough")
	}
}

func newLoop(t *testing.T, seed uint64) *loop {
	const qpn = 0x4d2
	mem, err := qmem.Plain(16, 16, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	cq.InitBuffer(mem)
	region, err := dma.Map(dma.Options{Size: 4096}) // the receive ring
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { region.Close() })
	ring, err := region.Alloc(8*32, 0)
	if err != nil {
		t.Fatal(err)
	}
	srqRing, err1 := region.Alloc(8*32, 0)
	srqDBR, err2 := region.Alloc(64, 0)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	s, err := rq.NewSRQ(rq.SRQConfig{Mem: rq.Memory{Ring: srqRing.Bytes, DBR: (*[4]byte)(srqDBR.Bytes[0:4])}, Stride: 32, Tail: 7, Init: true})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sq.New(sq.Config{Mem: mem, QPN: qpn, QP: sq.QP{Type: mlx.QPRC,
		SendOps:    mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_SEND | mlx.IBV_QP_EX_WITH_SEND_WITH_IMM,
		MaxSendSGE: 2, MaxInlineData: 64}})
	if err != nil {
		t.Fatal(err)
	}
	rqDBR := (*[4]byte)(mem.DBR[0:4])
	r, err := rq.New(rq.Config{Mem: rq.Memory{Ring: ring.Bytes, DBR: rqDBR}, Stride: 32})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cq.New(cq.Config{Mem: mem, CQN: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddQP(&cq.QP{QPN: qpn, RC: true, SQ: cq.SQ{Q: q, Mem: mem}, RQ: cq.RQ{Q: r}}); err != nil {
		t.Fatal(err)
	}
	if err := c.AddSRQ(0x77, cq.SRQ{Q: s}); err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(seed, 0x6d6c7835))
	return &loop{t: t, rnd: rnd, mem: mem, q: q, r: r, s: s, c: c, wc: make([]cq.WC, 16),
		dev: &fakeDevice{mem: mem, rqDBR: rqDBR, qpn: qpn, rnd: rnd, errRate: 300,
			srqRing: srqRing.Bytes, srqDBR: (*[4]byte)(srqDBR.Bytes[0:4]), srqn: 0x77, qpn2: qpn + 1}}
}

// postSends posts n work requests as one batch: RDMA writes and sends of
// one WQEBB, sends with immediate and inline data of two; a third are
// signaled, and never more than four in a row unsignaled. A full ring is
// the only refusal, and only when the ring is full; it drops the batch
// (ibv_wr_complete fails and rolls the batch back, as libmlx5's does).
func (l *loop) postSends(n int) {
	if n == 0 {
		return
	}
	l.q.Start()
	batch := l.sends
	run, id := l.unsignaledRun, l.id
	for range n {
		signaled := l.rnd.IntN(3) == 0 || run >= 4
		start := l.q.CurPost()
		l.q.SetWRID(id)
		f := mlx.SendFlags(0)
		if signaled {
			f = mlx.IBV_SEND_SIGNALED
		}
		l.q.SetWRFlags(f)
		if err := l.buildSend(); err != nil {
			var re *mlx.RuleError
			if !errors.As(err, &re) {
				l.t.Fatalf("post: %v", err)
			}
			if len(batch) == 0 || l.q.CurPost()-batch[0].start+2 <= 16 {
				l.t.Fatalf("refused with room in the ring: %v", err)
			}
			if err := l.q.Complete(); err == nil {
				l.t.Fatal("a batch with a refused work request completed")
			}
			l.full++
			return
		}
		batch = append(batch, sendRec{wrID: id, start: start, bbs: l.q.CurPost() - start, signaled: signaled})
		id++
		if run++; signaled {
			run = 0
		}
	}
	if err := l.q.Complete(); err != nil {
		l.t.Fatalf("complete: %v", err)
	}
	for _, r := range batch[len(l.sends):] {
		if r.bbs == 2 {
			l.inlineOps++
		}
	}
	l.sendBBs += int(l.q.CurPost() - batch[len(l.sends)].start)
	l.sends, l.unsignaledRun, l.id = batch, run, id
}

func (l *loop) buildSend() error {
	switch l.rnd.IntN(3) {
	case 0:
		if err := l.q.RDMAWrite(0x10, 0x1000); err != nil {
			return err
		}
		return l.q.SetSGE(0x20, 0x2000, 64)
	case 1:
		if err := l.q.Send(); err != nil {
			return err
		}
		return l.q.SetSGEList([]mlx.SGE{{Addr: 0x3000, Length: 8, LKey: 0x20}, {Addr: 0x4000, Length: 8, LKey: 0x20}})
	}
	if err := l.q.SendImm(0x01020304); err != nil {
		return err
	}
	return l.q.SetInlineData(make([]byte, 60)) // 16 + 64 bytes: two WQEBBs
}

// postRecvs fills the receive queue.
func (l *loop) postRecvs() {
	for l.r.Outstanding() < l.r.MaxPost() {
		ind := l.r.Head()
		if err := l.r.Post(l.id, []rq.SGE{{Addr: 0x9000, Length: 4096, LKey: 0x30}}); err != nil {
			l.t.Fatalf("post receive: %v", err)
		}
		l.recvs = append(l.recvs, recvRec{wrID: l.id, ind: ind})
		l.id++
		l.recvCount++
	}
	if err := l.r.Post(l.id, nil); err == nil {
		l.t.Fatal("a full receive queue accepted a work request")
	}
	for {
		ind := l.s.Head()
		if err := l.s.Post(l.id, []rq.SGE{{Addr: 0xa000, Length: 512, LKey: 0x31}}); err != nil {
			if len(l.srqs) < 7 { // all but the one free WQE libmlx5 keeps
				l.t.Fatalf("SRQ refused with %d posted: %v", len(l.srqs), err)
			}
			l.srqFull++
			return
		}
		l.srqs = append(l.srqs, recvRec{wrID: l.id, ind: uint32(ind)})
		l.id++
		l.srqCount++
	}
}

// poll polls up to n completions and checks each against the CQE the
// device wrote, then the writers' bookkeeping and the doorbell record.
func (l *loop) poll(n int) {
	got, err := l.c.Poll(l.wc[:n])
	if err != nil {
		l.t.Fatalf("poll: %v", err)
	}
	if got > len(l.dev.want) {
		l.t.Fatalf("%d completions, the device wrote %d CQEs", got, len(l.dev.want))
	}
	for i := range got {
		w, want := &l.wc[i], l.dev.want[i]
		if want.srq {
			l.checkSRQ(w, want)
		} else if want.recv {
			l.checkRecv(w, want)
		} else {
			l.checkSend(w, want)
		}
		l.completions++
		l.cqes++
	}
	l.dev.want = l.dev.want[got:]
	if ci := be.Uint32(l.mem.CQDBR[0:4]); ci != l.c.ConsIndex()&0xffffff || uint32(l.cqes) != l.c.ConsIndex() {
		l.t.Fatalf("CQ doorbell record %d, consumer index %d, %d CQEs consumed", ci, l.c.ConsIndex(), l.cqes)
	}
	if l.q.Outstanding() != uint32(len(l.sends)) || l.r.Outstanding() != uint32(len(l.recvs)) {
		l.t.Fatalf("outstanding: send queue %d, want %d; receive queue %d, want %d",
			l.q.Outstanding(), len(l.sends), l.r.Outstanding(), len(l.recvs))
	}
}

// checkSend matches a send completion with the oldest outstanding work
// requests: those before the CQE's WQE are retired without a completion
// (and must be unsignaled), the one at it completes with its wr_id.
func (l *loop) checkSend(w *cq.WC, want devCQE) {
	for len(l.sends) > 0 && uint16(l.sends[0].start) != want.ctr {
		if l.sends[0].signaled {
			l.t.Fatalf("signaled wr_id %d retired without a completion (CQE for WQE %d)", l.sends[0].wrID, want.ctr)
		}
		l.sends = l.sends[1:]
		l.retired++
	}
	if len(l.sends) == 0 {
		l.t.Fatalf("a completion for WQE %d, which is not outstanding", want.ctr)
	}
	rec := l.sends[0]
	l.sends = l.sends[1:]
	if w.WRID != rec.wrID || w.Status != want.status || w.QPNum != l.dev.qpn {
		l.t.Fatalf("send completion %+v, want wr_id %d status %v", *w, rec.wrID, want.status)
	}
	switch {
	case want.status == cq.Success:
		if !rec.signaled || w.Opcode != want.opcode || w.Flags != want.flags {
			l.t.Fatalf("send completion %+v (signaled %v), want %v %v", *w, rec.signaled, want.opcode, want.flags)
		}
	case want.status == cq.WRFlushErr:
		l.flushes++
	default:
		l.errs++
		if w.VendorErr != uint32(want.vendor) {
			l.t.Fatalf("vendor error %#x, want %#x", w.VendorErr, want.vendor)
		}
	}
}

// checkRecv matches a receive completion with the oldest posted receive.
func (l *loop) checkRecv(w *cq.WC, want devCQE) {
	if len(l.recvs) == 0 || uint16(l.recvs[0].ind) != want.ctr {
		l.t.Fatalf("a receive completion for WQE %d, not the oldest posted", want.ctr)
	}
	rec := l.recvs[0]
	l.recvs = l.recvs[1:]
	if w.WRID != rec.wrID || w.Status != want.status {
		l.t.Fatalf("receive completion %+v, want wr_id %d status %v", *w, rec.wrID, want.status)
	}
	if want.status != cq.Success {
		l.flushes++
		return
	}
	if w.Opcode != want.opcode || w.Flags != want.flags || w.ByteLen != want.length || (want.flags != 0 && w.Imm != want.imm) {
		l.t.Fatalf("receive completion %+v, want %+v", *w, want)
	}
}

// checkSRQ matches an SRQ completion with the oldest WQE posted to it
// (the device takes them in the order of the free list).
func (l *loop) checkSRQ(w *cq.WC, want devCQE) {
	if len(l.srqs) == 0 || uint16(l.srqs[0].ind) != want.ctr {
		l.t.Fatalf("an SRQ completion for WQE %d, not the oldest posted", want.ctr)
	}
	rec := l.srqs[0]
	l.srqs = l.srqs[1:]
	if w.WRID != rec.wrID || w.Status != cq.Success || w.Opcode != want.opcode || w.Flags != want.flags ||
		w.QPNum != l.dev.qpn2 || w.ByteLen != want.length {
		l.t.Fatalf("SRQ completion %+v, want wr_id %d %+v", *w, rec.wrID, want)
	}
}
