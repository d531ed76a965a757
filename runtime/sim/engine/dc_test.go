package engine_test

import (
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sim/engine"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestDCTSendSRQ: a DCI's SEND reaches a DCT that receives through a
// shared receive queue; the DCT's completion names the SRQ and the
// sender, and a DCT whose SRQ is empty makes the DCI wait (RNR).
func TestDCTSendSRQ(t *testing.T) {
	f := engine.NewFabric()
	a, b := newSide(t, f, "dci", defaults), newSide(t, f, "dct", defaults)
	region, err := dma.Map(dma.Options{Size: 4096, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	ring, _ := region.Alloc(8*32, 0)
	dbr, _ := region.Alloc(64, 0)
	srq, err := rq.NewSRQ(rq.SRQConfig{Mem: rq.Memory{Ring: ring.Bytes, DBR: (*[4]byte)(dbr.Bytes[0:4])}, Stride: 32, Tail: 7, Init: true})
	if err != nil {
		t.Fatal(err)
	}
	esrq, _ := b.d.CreateSRQ(ring.Bytes, 32, dbr.Bytes, 0)
	const dcKey = 0x1234
	dct, err := b.d.CreateQP(engine.QPConfig{Type: engine.DCT, PD: b.pd, RecvCQ: b.cq, SRQ: esrq, DCKey: dcKey})
	if err != nil {
		t.Fatal(err)
	}
	b.c.AddSRQ(esrq.SRQN(), cq.SRQ{Q: srq})
	dciMem, _ := qmem.New(qmem.Options{WQEBBs: 16, BFSize: 256, Lock: dma.LockBestEffort})
	defer dciMem.Close()
	dci, err := a.d.CreateQP(engine.QPConfig{Type: engine.DCI, PD: a.pd, SendCQ: a.cq, Mem: dciMem})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []mlx.QPState{mlx.IBV_QPS_INIT, mlx.IBV_QPS_RTR, mlx.IBV_QPS_RTS} {
		if err := dci.Modify(st, nil); err != nil {
			t.Fatal(err)
		}
		if st != mlx.IBV_QPS_RTS {
			if err := dct.Modify(st, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	w, err := sq.New(sq.Config{Mem: dciMem, QPN: dci.QPN(), BF: sq.BlueFlame{UUARN: 1, Size: 256},
		QP: sq.QP{Type: mlx.QPDCI, SendOps: mlx.IBV_QP_EX_WITH_SEND, MaxSendSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.c.AddQP(&cq.QP{QPN: dci.QPN(), SQ: cq.SQ{Q: w, Mem: dciMem}}); err != nil {
		t.Fatal(err)
	}
	var ah sq.AH
	ah.AV.SetRlid(b.d.LID())
	send := func(id uint64) {
		w.Start()
		w.SetWRID(id)
		w.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		w.Send()
		w.SetSGE(a.key, a.addr(0), 6)
		w.SetDCAddr(&ah, dct.QPN(), dcKey)
		if err := w.Complete(); err != nil {
			t.Fatal(err)
		}
	}
	copy(a.data.Bytes, "hello!")
	send(1)
	f.Drain(10)
	if wc := a.poll(); len(wc) != 0 {
		t.Fatalf("completed with the SRQ empty: %+v", wc)
	}
	srq.Post(77, []rq.SGE{{Addr: b.addr(300), Length: 64, LKey: b.key}})
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].WRID != 1 || wc[0].Status != cq.Success {
		t.Fatalf("DCI: %+v", wc)
	}
	wc := b.poll()
	if len(wc) != 1 || wc[0].WRID != 77 || wc[0].ByteLen != 6 || wc[0].SrcQP != dci.QPN() || string(b.data.Bytes[300:306]) != "hello!" {
		t.Fatalf("DCT: %+v", wc)
	}
}
