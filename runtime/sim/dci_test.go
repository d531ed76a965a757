package sim_test

import (
	"bytes"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// dcTarget is a DCT on its own simulated device, with an MR.
type dcTarget struct {
	lid uint16
	dct *device.QP
	mr  *device.MR
	buf []byte
}

func newTarget(t *testing.T, name string, key uint64) dcTarget {
	// The buffer first: cleanups run last-in first-out, so the context
	// (and its MR) closes before the buffer's region, which refuses to
	// close under a registered MR.
	buf := devicetest.Buffer(t, 4096)
	c := devicetest.Must[*device.Context](t, "Open")(device.Open(name))
	t.Cleanup(func() { c.Close() })
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	mr := devicetest.Must[*device.MR](t, "RegMR")(pd.RegMR(buf, device.DefaultAccess))
	q := devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	srq := devicetest.Must[*device.SRQ](t, "CreateSRQ")(pd.CreateSRQ(device.SRQConfig{MaxWR: 4, MaxSGE: 1}))
	dct := devicetest.Must[*device.QP](t, "CreateQP")(pd.CreateQP(device.QPConfig{Kind: device.DCT, SendCQ: q, DCAccessKey: key, SRQ: srq}))
	if err := dct.Activate(); err != nil {
		t.Fatal(err)
	}
	p, _ := c.Port()
	return dcTarget{lid: p.LID, dct: dct, mr: mr, buf: buf}
}

// TestDCIStreams is the DC flow of mlx5dv_create_qp(3) and
// mlx5dv_wr_post(3): one DCI with four streams sends to two DCTs on two
// other devices, each work request carrying its address vector, DCT
// number, DC key and stream. A wrong DC key fails (the target never
// answers) and puts the stream in error, whose later work requests flush
// while the other streams go on, until more streams are in error than the
// DCI allows (log_num_errored) and the DCI moves to error.
func TestDCIStreams(t *testing.T) {
	const key = 0xdc0ffee
	t1, t2 := newTarget(t, "sim:dct-one", key), newTarget(t, "sim:dct-two", key)
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:dci"))
	defer c.Close()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	buf := devicetest.Buffer(t, 4096)
	mr := devicetest.Must[*device.MR](t, "RegMR")(pd.RegMR(buf, device.DefaultAccess))
	q := devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	dci := devicetest.Must[*device.QP](t, "CreateQP")(pd.CreateQP(device.QPConfig{Kind: device.DCI, SendCQ: q,
		MaxSendWR: 16, MaxSendSGE: 1, LogNumConcurent: 2, LogNumErrored: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_READ}))
	if err := dci.Activate(); err != nil {
		t.Fatal(err)
	}
	copy(buf, "to the first DCT|to the second DCT")
	copy(t2.buf[100:], "read back")
	s := dci.SQ()
	lkey := mr.LKey
	post := func(id uint64, tg dcTarget, dcKey uint64, stream uint16, build func()) {
		var ah sq.AH
		ah.AV.SetRlid(tg.lid)
		s.Start()
		s.SetWRID(id)
		s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		build()
		if err := s.SetDCAddrStream(&ah, tg.dct.QPN(), dcKey, stream); err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(); err != nil {
			t.Fatal(err)
		}
	}
	post(1, t1, key, 0, func() { s.RDMAWrite(t1.mr.RKey, t1.mr.Addr); s.SetSGE(lkey, mr.Addr, 16) })
	post(2, t2, key, 1, func() { s.RDMAWrite(t2.mr.RKey, t2.mr.Addr); s.SetSGE(lkey, mr.Addr+17, 17) })
	post(3, t2, key, 2, func() { s.RDMARead(t2.mr.RKey, t2.mr.Addr+100); s.SetSGE(lkey, mr.Addr+200, 9) })
	for i := uint64(1); i <= 3; i++ {
		if wc := devicetest.PollOne(t, q); wc.WRID != i || wc.Status != cq.Success {
			t.Fatalf("completion %d: %+v", i, wc)
		}
	}
	if !bytes.Equal(t1.buf[:16], []byte("to the first DCT")) || !bytes.Equal(t2.buf[:17], []byte("to the second DCT")) ||
		!bytes.Equal(buf[200:209], []byte("read back")) {
		t.Fatalf("data: %q %q %q", t1.buf[:16], t2.buf[:17], buf[200:209])
	}
	// Stream errors: LogNumErrored 1 lets two streams be in error while
	// the others go on; a third error moves the DCI to error.
	write := func(id uint64, dcKey uint64, stream uint16, want cq.Status) {
		t.Helper()
		post(id, t1, dcKey, stream, func() { s.RDMAWrite(t1.mr.RKey, t1.mr.Addr); s.SetSGE(lkey, mr.Addr, 16) })
		if wc := devicetest.PollOne(t, q); wc.WRID != id || wc.Status != want {
			t.Fatalf("work request %d on stream %d: %+v, want %v", id, stream, wc, want)
		}
	}
	write(4, key+1, 3, cq.RetryExcErr) // a wrong DC key: the target never answers
	write(5, key, 0, cq.Success)       // the other streams go on
	write(6, key, 3, cq.WRFlushErr)    // stream 3 is in error
	write(7, key+1, 2, cq.RetryExcErr)
	write(8, key, 0, cq.Success)
	write(9, key+1, 1, cq.RetryExcErr) // a third stream in error: the DCI is
	write(10, key, 0, cq.WRFlushErr)
}
