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
