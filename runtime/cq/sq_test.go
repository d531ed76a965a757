package cq

import (
	"errors"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestPostResumesAfterPoll fills runtime/sq's ring, sees the next post
// refused, plays the device (one CQE for the last, signaled, work request
// of the batch: the others are unsignaled) and checks that polling gives
// the ring back, many times over.
func TestPostResumesAfterPoll(t *testing.T) {
	m := newMem(t, 8, 4)
	q, err := sq.New(sq.Config{Mem: m, QPN: 0x55, QP: sq.QP{Type: mlx.QPRC, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	c := newCQ(t, m, 0)
	if err := c.AddQP(&QP{QPN: 0x55, RC: true, SQ: SQ{Q: q, Mem: m}}); err != nil {
		t.Fatal(err)
	}
	post := func(id uint64, signaled bool) error {
		q.SetWRID(id)
		f := mlx.SendFlags(0)
		if signaled {
			f = mlx.IBV_SEND_SIGNALED
		}
		q.SetWRFlags(f)
		if err := q.Start(); err != nil {
			return err
		}
		if err := q.RDMAWrite(1, 0x1000); err != nil {
			q.Abort()
			return err
		}
		q.SetSGE(2, 0x2000, 8)
		return q.Complete()
	}
	wc := make([]WC, 4)
	id, ci := uint64(0), uint32(0)
	for round := 0; round < 2000; round++ { // 2000 passes of the ring, 500 of the CQ
		for i := 0; i < 8; i++ {
			if err := post(id, i == 7); err != nil {
				t.Fatalf("round %d post %d: %v", round, i, err)
			}
			id++
		}
		var re *mlx.RuleError
		if err := post(id, true); !errors.As(err, &re) {
			t.Fatalf("round %d: a full ring accepted a work request (%v)", round, err)
		}
		// The device completes the signaled one: its WQE counter.
		put(m, ci, cqe{op: opReq, sop: uint8(mlx.MLX5_OPCODE_RDMA_WRITE), qpn: 0x55, ctr: uint16(q.CurPost() - 1)})
		ci++
		n, err := c.Poll(wc)
		if n != 1 || err != nil || wc[0].WRID != id-1 || wc[0].Opcode != mlx.IBV_WC_RDMA_WRITE {
			t.Fatalf("round %d: %d %v %+v", round, n, err, wc[0])
		}
		if q.Outstanding() != 0 {
			t.Fatalf("round %d: %d outstanding after the signaled completion", round, q.Outstanding())
		}
	}
}

// TestDriverOpcodes: a raw WQE posted through runtime/sq completes as
// MLX5DV_WC_RAW_WQE (IBV_WC_DRIVER2) whatever send opcode its CQE names,
// and an unsignaled write before it is retired with it.
func TestDriverOpcodes(t *testing.T) {
	m := newMem(t, 8, 4)
	q, err := sq.New(sq.Config{Mem: m, QPN: 0x56, QP: sq.QP{Type: mlx.QPRC,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MlxSendOps: mlx.MLX5DV_QP_EX_WITH_RAW_WQE, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	c := newCQ(t, m, 0)
	if err := c.AddQP(&QP{QPN: 0x56, RC: true, SQ: SQ{Q: q, Mem: m}}); err != nil {
		t.Fatal(err)
	}
	q.SetWRID(1)
	q.Start()
	q.RDMAWrite(1, 0x1000)
	q.SetSGE(2, 0x2000, 8)
	q.SetWRID(2)
	raw := make([]byte, 64)
	raw[3] = uint8(mlx.MLX5_OPCODE_SEND)
	raw[7] = 1  // ds
	raw[11] = 8 // CQ update
	if err := q.RawWQE(raw); err != nil {
		t.Fatal(err)
	}
	if err := q.Complete(); err != nil {
		t.Fatal(err)
	}
	put(m, 0, cqe{op: opReq, sop: uint8(mlx.MLX5_OPCODE_SEND), qpn: 0x56, ctr: 1})
	wc := make([]WC, 2)
	if n, err := c.Poll(wc); n != 1 || err != nil || wc[0].WRID != 2 || wc[0].Opcode != mlx.IBVWCOpcode(mlx.MLX5DV_WC_RAW_WQE) {
		t.Fatalf("%d %v %+v", n, err, wc[0])
	}
	if q.Outstanding() != 0 {
		t.Fatalf("%d outstanding", q.Outstanding())
	}
}
