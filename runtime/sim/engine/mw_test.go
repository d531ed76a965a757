package engine_test

import (
	"encoding/binary"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestMemoryWindow: b binds a window over part of its MR and a writes
// through it; outside the window, with the stale rkey, and after a local
// invalidate the writes fail.
func TestMemoryWindow(t *testing.T) {
	f, a, b := pair(t, defaults)
	mwKey, err := b.d.AllocMW(b.pd)
	if err != nil {
		t.Fatal(err)
	}
	newKey := mwKey&^0xff | (mwKey+1)&0xff
	b.post(1, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		return q.BindMW(&sq.MW{RKey: mwKey}, newKey, &sq.MWBindInfo{LKey: b.key, Addr: b.addr(1024), Length: 256,
			AccessFlags: mlx.IBV_ACCESS_REMOTE_WRITE | mlx.IBV_ACCESS_LOCAL_WRITE})
	})
	f.Drain(10)
	if wc := b.poll(); len(wc) != 1 || wc[0].Status != cq.Success || wc[0].Opcode != mlx.IBV_WC_BIND_MW {
		t.Fatalf("bind: %+v", wc)
	}
	write := func(rkey uint32, off int) cq.WC {
		a.post(2, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
			q.RDMAWrite(rkey, b.addr(off))
			return q.SetSGE(a.key, a.addr(0), 16)
		})
		f.Drain(10)
		wc := a.poll()
		if len(wc) != 1 {
			t.Fatalf("%d completions", len(wc))
		}
		return wc[0]
	}
	copy(a.data.Bytes, "through a window")
	if wc := write(newKey, 1024+16); wc.Status != cq.Success || string(b.data.Bytes[1040:1056]) != "through a window" {
		t.Fatalf("through the window: %+v", wc)
	}
	if wc := write(newKey, 1024+250); wc.Status != cq.RemAccessErr {
		t.Fatalf("past the window: %+v", wc)
	}
	f, a, b = pair(t, defaults) // a fresh pair: the last error broke the connection
	mwKey, _ = b.d.AllocMW(b.pd)
	newKey = mwKey&^0xff | (mwKey+1)&0xff
	b.post(1, 0, func(q *sq.SQ) error {
		return q.BindMW(&sq.MW{RKey: mwKey}, newKey, &sq.MWBindInfo{LKey: b.key, Addr: b.addr(0), Length: 64, AccessFlags: mlx.IBV_ACCESS_REMOTE_WRITE | mlx.IBV_ACCESS_LOCAL_WRITE})
	})
	b.post(2, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { return q.LocalInv(newKey) })
	f.Drain(10)
	if wc := b.poll(); len(wc) != 1 || wc[0].Status != cq.Success || wc[0].Opcode != mlx.IBV_WC_LOCAL_INV {
		t.Fatalf("local invalidate: %+v", wc)
	}
	if wc := write(newKey, 0); wc.Status != cq.RemAccessErr {
		t.Fatalf("after the invalidate: %+v", wc)
	}
	// Binding to an MR of another PD fails with a bind error.
	pd2, _ := b.d.AllocPD()
	other, _ := b.d.RegMR(pd2, b.data.Bytes[:4096], b.data.Addr, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_MW_BIND)
	mw2, _ := b.d.AllocMW(b.pd)
	b.post(3, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		return q.BindMW(&sq.MW{RKey: mw2}, mw2+1, &sq.MWBindInfo{LKey: other, Addr: b.addr(0), Length: 64, AccessFlags: mlx.IBV_ACCESS_REMOTE_READ})
	})
	f.Drain(10)
	if wc := b.poll(); len(wc) != 1 || wc[0].Status != cq.MWBindErr {
		t.Fatalf("bind to another PD's MR: %+v", wc)
	}
}

func TestMemcpy(t *testing.T) {
	f, a, _ := pair(t, defaults)
	copy(a.data.Bytes[0:], "copy me, device")
	a.post(1, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		return q.Memcpy(a.key, a.addr(8192), a.key, a.addr(0), 15)
	})
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success || wc[0].Opcode != mlx.IBV_WC_DRIVER3 {
		t.Fatalf("%+v", wc)
	}
	if string(a.data.Bytes[8192:8207]) != "copy me, device" {
		t.Fatal("not copied")
	}
	// Past the device's limit (1 MiB here): a local length error.
	a.post(2, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		return q.Memcpy(a.key, a.addr(0), a.key, a.addr(0), 2<<20)
	})
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.LocLenErr {
		t.Fatalf("%+v", wc)
	}
}

// TestRawWQE: a raw WQE that decodes runs; one with an unknown opcode is
// an error completion.
func TestRawWQE(t *testing.T) {
	f, a, b := pair(t, defaults)
	wqe := make([]byte, 48)
	ctrl := (*mlx.WQECtrlSeg)(wqe[:16])
	ctrl.SetOpcode(mlx.MLX5_OPCODE_RDMA_WRITE)
	ctrl.SetQPN(a.qp.QPN())
	ctrl.SetDS(3)
	ctrl.SetFmCeSe(mlx.MLX5_WQE_CTRL_CQ_UPDATE)
	ra := (*mlx.WQERaddrSeg)(wqe[16:32])
	ra.SetRaddr(b.addr(0))
	ra.SetRKey(b.key)
	ds := (*mlx.WQEDataSeg)(wqe[32:48])
	ds.SetByteCount(4)
	ds.SetLKey(a.key)
	ds.SetAddr(a.addr(0))
	copy(a.data.Bytes, "raw!")
	a.post(1, 0, func(q *sq.SQ) error { return q.RawWQE(wqe) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success || wc[0].Opcode != mlx.IBV_WC_DRIVER2 || string(b.data.Bytes[:4]) != "raw!" {
		t.Fatalf("%+v %q", wc, b.data.Bytes[:4])
	}
	binary.BigEndian.PutUint32(wqe[0:4], 0x1f) // no such opcode
	a.post(2, 0, func(q *sq.SQ) error { return q.RawWQE(wqe) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.LocQPOpErr {
		t.Fatalf("%+v", wc)
	}
}
