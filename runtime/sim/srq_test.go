package sim_test

import (
	"bytes"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestDCTSendSRQ: through the device API, a DCI's SENDs to a DCT land in
// the buffers posted to the DCT's SRQ, with a responder completion on the
// DCT's CQ carrying each work request's wr_id and length.
func TestDCTSendSRQ(t *testing.T) {
	const key = 0x5eed
	tc := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:srq-dct"))
	defer tc.Close()
	tpd := devicetest.Must[*device.PD](t, "AllocPD")(tc.AllocPD())
	dst := devicetest.Must[*device.MR](t, "RegMR")(tpd.RegMR(devicetest.Buffer(t, 4096), device.DefaultAccess))
	tq := devicetest.Must[*device.CQ](t, "CreateCQ")(tc.CreateCQ(device.CQConfig{CQEs: 16}))
	srq := devicetest.Must[*device.SRQ](t, "CreateSRQ")(tpd.CreateSRQ(device.SRQConfig{MaxWR: 4, MaxSGE: 1}))
	dct := devicetest.Must[*device.QP](t, "CreateQP DCT")(tpd.CreateQP(device.QPConfig{Kind: device.DCT, SendCQ: tq, DCAccessKey: key, SRQ: srq}))
	if err := dct.Activate(); err != nil {
		t.Fatal(err)
	}
	port, _ := tc.Port()

	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:srq-dci"))
	defer c.Close()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	src := devicetest.Must[*device.MR](t, "RegMR")(pd.RegMR(devicetest.Buffer(t, 4096), device.DefaultAccess))
	copy(src.Bytes(), "first message|second, longer message")
	q := devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	dci := devicetest.Must[*device.QP](t, "CreateQP DCI")(pd.CreateQP(device.QPConfig{Kind: device.DCI, SendCQ: q,
		MaxSendWR: 8, MaxSendSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_SEND}))
	if err := dci.Activate(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		sge := []rq.SGE{{Addr: dst.Addr + uint64(512*i), Length: 512, LKey: dst.LKey}}
		if err := srq.RQ().Post(uint64(50+i), sge); err != nil {
			t.Fatal(err)
		}
	}
	s := dci.SQ()
	for i, m := range []struct{ off, n uint32 }{{0, 13}, {14, 23}} {
		var ah sq.AH
		ah.AV.SetRlid(port.LID)
		s.Start()
		s.SetWRID(uint64(i + 1))
		s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		s.Send()
		s.SetSGE(src.LKey, src.Addr+uint64(m.off), m.n)
		if err := s.SetDCAddr(&ah, dct.QPN(), key); err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(); err != nil {
			t.Fatal(err)
		}
		if wc := devicetest.PollOne(t, q); wc.WRID != uint64(i+1) || wc.Status != cq.Success {
			t.Fatalf("send %d: %+v", i, wc)
		}
		wc := devicetest.PollOne(t, tq)
		if wc.WRID != uint64(50+i) || wc.Status != cq.Success || wc.Opcode != mlx.IBV_WC_RECV || wc.ByteLen != m.n {
			t.Fatalf("receive %d: %+v, want wr_id %d, %d bytes", i, wc, 50+i, m.n)
		}
		if got := dst.Bytes()[512*i:][:m.n]; !bytes.Equal(got, src.Bytes()[m.off:m.off+m.n]) {
			t.Fatalf("receive %d: %q", i, got)
		}
	}
}
