package cq

import (
	"errors"
	"math/rand/v2"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestFastPathAgrees polls the same random CQ contents twice, with the
// fast path and with every CQE on the full path (parse), in random batch
// sizes, and wants the same completions, errors, consumer index,
// doorbell record and send queue tails: requester CQEs of every send
// opcode (those the fast path leaves to parse too), slots with wr_data,
// inline scatter flags, responder CQEs, QPs changing, an unknown QPN;
// cqe_version 0 and 1.
func TestFastPathAgrees(t *testing.T) {
	sops := []mlx.Opcode{mlx.MLX5_OPCODE_RDMA_WRITE, mlx.MLX5_OPCODE_RDMA_WRITE_IMM, mlx.MLX5_OPCODE_SEND,
		mlx.MLX5_OPCODE_SEND_IMM, mlx.MLX5_OPCODE_SEND_INVAL, mlx.MLX5_OPCODE_RDMA_READ, mlx.MLX5_OPCODE_ATOMIC_CS,
		mlx.MLX5_OPCODE_ATOMIC_FA, mlx.MLX5_OPCODE_UMR, mlx.MLX5_OPCODE_NOP, mlx.MLX5_OPCODE_TSO, 0x1f}
	for v := 0; v < 2; v++ {
		rnd := rand.New(rand.NewPCG(uint64(v), 11))
		var side [2]loopSide
		for s := range side {
			m := newMem(t, 8, 64)
			side[s].m, side[s].c = m, newCQ(t, m, v)
			side[s].c.noFast = s == 1
			side[s].rq = &fakeRQ{wrid: []uint64{1, 2, 3, 4}, wqes: make([]byte, 4*32)}
			for q := range side[s].sqs {
				fsq := newFakeSQ(8)
				fsq.data[3] = uint32(mlx.IBV_WC_LOCAL_INV) // a UMR's wr_data
				fsq.data[5] = uint32(mlx.IBV_WC_DRIVER2)   // a raw WQE
				side[s].sqs[q] = fsq
				qp := &QP{QPN: uint32(0x100 + q), UIdx: uint32(0x200 + q), RC: true, SQ: fsq}
				if q == 0 {
					// runtime/sq's writer behind the adapter (hotRun's
					// case), its slots as the fake's.
					qp.SQ = side[s].realSQ(t, m, fsq)
				}
				if q == 1 {
					qp.RQ = side[s].rq
				}
				if err := side[s].c.AddQP(qp); err != nil {
					t.Fatal(err)
				}
			}
		}
		ci := uint32(0)
		wcs := [2][]WC{make([]WC, 16), make([]WC, 16)}
		for round := 0; round < 3000; round++ {
			// The device writes a few CQEs (the same on both sides).
			for range min(rnd.IntN(12), 64-int(ci-side[0].c.ci)) {
				q := uint32(rnd.IntN(2))
				e := cqe{op: opReq, sop: uint8(sops[rnd.IntN(len(sops))]), qpn: 0x100 + q, srqnUidx: 0x200 + q,
					ctr: uint16(rnd.IntN(8)), byteCnt: uint32(rnd.IntN(100))}
				switch rnd.IntN(20) {
				case 0:
					e.qpn, e.srqnUidx = 0x300, 0x300 // unknown
				case 1:
					e.op = opRespSend
					e.qpn, e.srqnUidx = 0x101, 0x201
				case 2:
					e.scatter = uint8(mlx.MLX5_INLINE_SCATTER_32)
				}
				for s := range side {
					put(side[s].m, ci, e)
				}
				ci++
			}
			n := 1 + rnd.IntN(16)
			var got [2]int
			var errs [2]error
			for s := range side {
				got[s], errs[s] = side[s].c.Poll(wcs[s][:n])
			}
			var ue0, ue1 *UnknownError
			if got[0] != got[1] || errors.As(errs[0], &ue0) != errors.As(errs[1], &ue1) || (ue0 != nil && *ue0 != *ue1) {
				t.Fatalf("v%d round %d: fast %d %v, full %d %v", v, round, got[0], errs[0], got[1], errs[1])
			}
			for i := range got[0] {
				if wcs[0][i] != wcs[1][i] {
					t.Fatalf("v%d round %d completion %d: fast %+v, full %+v", v, round, i, wcs[0][i], wcs[1][i])
				}
			}
			a, b := side[0], side[1]
			if a.c.ci != b.c.ci || *a.c.ciRec != *b.c.ciRec || *a.c.armRec != *b.c.armRec || a.q.Outstanding() != b.q.Outstanding() ||
				a.sqs[1].tail != b.sqs[1].tail || a.rq.tail != b.rq.tail {
				t.Fatalf("v%d round %d: consumer index %d/%d, tails %d/%d %d/%d", v, round, a.c.ci, b.c.ci,
					a.sqs[0].tail, b.sqs[0].tail, a.sqs[1].tail, b.sqs[1].tail)
			}
		}
	}
}

type loopSide struct {
	m   *qmem.Memory
	c   *CQ
	sqs [2]*fakeSQ
	rq  *fakeRQ
	q   *sq.SQ
}

// realSQ makes a runtime/sq writer with 7 unsignaled writes outstanding,
// its slots set as f's.
func (l *loopSide) realSQ(t *testing.T, m *qmem.Memory, f *fakeSQ) SQ {
	q, err := sq.New(sq.Config{Mem: m, QPN: 0x100, QP: sq.QP{Type: mlx.QPRC, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	for range 7 {
		q.RDMAWrite(1, 2)
		q.SetSGE(3, 4, 5)
	}
	if err := q.Complete(); err != nil {
		t.Fatal(err)
	}
	for i := range q.Slots {
		q.Slots[i] = sq.Slot{WRID: f.wrid[i], WQEHead: f.head[i], WRData: uint16(f.data[i])}
	}
	l.q = q
	return SQ{Q: q, Mem: m}
}

// TestHotRunStopsAtRingEnd: a batch of fast-path completions that wraps
// the CQ ring continues at its start, never past its end. The 64 bytes
// after the ring hold a CQE the fast path would take (its QP, its
// opcode, another slot): a walk past the end would complete it.
func TestHotRunStopsAtRingEnd(t *testing.T) {
	m := newMem(t, 8, 8)
	backing := make([]byte, 9*64)
	m.CQ = backing[: 8*64 : 8*64]
	InitBuffer(m)
	var side loopSide
	side.m, side.c = m, newCQ(t, m, 0)
	f := newFakeSQ(8)
	if err := side.c.AddQP(&QP{QPN: 0x100, UIdx: 0x200, RC: true, SQ: side.realSQ(t, m, f)}); err != nil {
		t.Fatal(err)
	}
	hot := cqe{op: opReq, sop: uint8(mlx.MLX5_OPCODE_RDMA_WRITE), qpn: 0x100, srqnUidx: 0x200}
	phantom := hot
	phantom.ctr = 5
	put(&qmem.Memory{CQ: backing[8*64:], CQESize: 64}, 0, phantom)
	wc := make([]WC, 16)
	for round, ctrs := range [][]uint16{{0, 1, 2, 3, 4, 5}, {6, 7, 0, 1}, {2, 3, 4, 5, 6, 7, 0}} {
		ci := side.c.ci
		for i, ctr := range ctrs {
			e := hot
			e.ctr = ctr
			put(m, ci+uint32(i), e)
		}
		n, err := side.c.Poll(wc)
		if err != nil || n != len(ctrs) {
			t.Fatalf("round %d: polled %d, %v; want %d", round, n, err, len(ctrs))
		}
		for i, ctr := range ctrs {
			if want := f.wrid[ctr]; wc[i].WRID != want {
				t.Fatalf("round %d, completion %d (CQE %d): wr_id %d, want %d", round, i, ci+uint32(i), wc[i].WRID, want)
			}
		}
	}
}

// TestOwnedAcrossWrap: Poll's scan of the CQEs the software owns (owned)
// follows the owner bit of each pass through the ring, for 64- and
// 128-byte CQEs: batches that wrap the ring complete every CQE written,
// and stop at one not yet written (its owner bit of the pass before).
func TestOwnedAcrossWrap(t *testing.T) {
	for _, sz := range []int{64, 128} {
		m := newMem(t, 8, 8)
		m.CQ, m.CQESize = make([]byte, 4*sz), sz
		InitBuffer(m)
		c := newCQ(t, m, 0)
		f := newFakeSQ(8)
		if err := c.AddQP(&QP{QPN: 0x100, UIdx: 0x200, RC: true, SQ: f}); err != nil {
			t.Fatal(err)
		}
		wc := make([]WC, 16)
		ctr := uint16(0)
		for round := range 12 {
			written := 1 + round%3 // at most 3 of the 4: the next is never the software's
			for i := range written {
				put(m, c.ci+uint32(i), cqe{op: opReq, sop: uint8(mlx.MLX5_OPCODE_RDMA_WRITE), qpn: 0x100, srqnUidx: 0x200, ctr: (ctr + uint16(i)) & 7})
			}
			ci := c.ci
			n, err := c.Poll(wc)
			if err != nil || n != written {
				t.Fatalf("%d-byte CQEs, round %d (CQEs %d..): polled %d, %v; want %d", sz, round, ci, n, err, written)
			}
			for i := range n {
				if want := f.wrid[(ctr+uint16(i))&7]; wc[i].WRID != want {
					t.Fatalf("%d-byte CQEs, round %d, completion %d: wr_id %d, want %d", sz, round, i, wc[i].WRID, want)
				}
			}
			ctr += uint16(written)
		}
	}
}

// TestOwned: owned counts exactly the CQEs from ci on, up to max, that
// are the software's, for 64- and 128-byte CQEs, from every index of two
// passes through the ring, the first not the software's either invalid
// or left from the pass before.
func TestOwned(t *testing.T) {
	const ncqe = 8
	for _, sz := range []int{64, 128} {
		m := &qmem.Memory{CQ: make([]byte, ncqe*sz), CQESize: sz}
		for ci := uint32(0); ci < 2*ncqe; ci++ {
			for v := 0; v <= ncqe; v++ {
				InitBuffer(m)
				for i := range v {
					put(m, ci+uint32(i), cqe{op: opReq, qpn: 1})
				}
				if v < ncqe && v%2 == 1 {
					// The next CQE as the pass before left it: a valid
					// opcode, the other owner bit.
					put(m, ci+uint32(v)+ncqe, cqe{op: opReq, qpn: 1})
				}
				for _, max := range []int{1, 3, ncqe, 2 * ncqe} {
					got := owned(m.CQ, ci, ncqe-1, 3, uint32(6+sz/128), sz-64, max)
					if want := min(v, max); got != want {
						t.Fatalf("%d-byte CQEs from %d, %d owned, at most %d: owned %d, want %d", sz, ci, v, max, got, want)
					}
				}
			}
		}
	}
}
