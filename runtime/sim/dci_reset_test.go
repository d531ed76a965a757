package sim_test

import (
	"errors"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestDCIStreamReset is mlx5dv_dci_stream_id_reset(3): a stream an error
// put in error flushes its work requests while the DCI stays in RTS;
// once reset it carries work again, and it no longer counts against the
// streams the DCI lets be in error (log_num_errored). A DCI the errors
// moved to error cannot reset a stream; nor can an RC QP, nor a stream
// past the DCI's.
func TestDCIStreamReset(t *testing.T) {
	const key = 0xdc0ffee
	tg := newTarget(t, "sim:reset-dct", key)
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:reset-dci"))
	defer c.Close()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	mr := devicetest.Must[*device.MR](t, "RegMR")(pd.RegMR(devicetest.Buffer(t, 4096), device.DefaultAccess))
	q := devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 32}))
	dci := devicetest.Must[*device.QP](t, "CreateQP")(pd.CreateQP(device.QPConfig{Kind: device.DCI, SendCQ: q,
		MaxSendWR: 16, MaxSendSGE: 1, LogNumConcurent: 2, LogNumErrored: 0, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}))
	if err := dci.Activate(); err != nil {
		t.Fatal(err)
	}
	s := dci.SQ()
	write := func(id, dcKey uint64, stream uint16, want cq.Status) {
		t.Helper()
		var ah sq.AH
		ah.AV.SetRlid(tg.lid)
		s.Start()
		s.SetWRID(id)
		s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		s.RDMAWrite(tg.mr.RKey, tg.mr.Addr)
		s.SetSGE(mr.LKey, mr.Addr, 16)
		if err := s.SetDCAddrStream(&ah, tg.dct.QPN(), dcKey, stream); err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(); err != nil {
			t.Fatal(err)
		}
		if wc := devicetest.PollOne(t, q); wc.WRID != id || wc.Status != want {
			t.Fatalf("work request %d on stream %d: %+v, want %v", id, stream, wc, want)
		}
	}
	reset := func(id uint16) {
		t.Helper()
		if err := dci.ResetStream(id); err != nil {
			t.Fatalf("ResetStream(%d): %v", id, err)
		}
	}
	// LogNumErrored 0: one stream may be in error, a second moves the DCI.
	write(1, key+1, 3, cq.RetryExcErr)
	write(2, key, 3, cq.WRFlushErr) // stream 3 is in error
	if st := dci.State(); st != mlx.IBV_QPS_RTS {
		t.Fatalf("the DCI with one stream in error: %v, want RTS", st)
	}
	reset(3)
	reset(3) // a stream not in error: nothing to do
	write(3, key, 3, cq.Success)
	write(4, key+1, 1, cq.RetryExcErr) // the one stream allowed in error, since 3 was reset
	reset(1)
	write(5, key+1, 2, cq.RetryExcErr)
	write(6, key, 0, cq.Success)
	if err := dci.ResetStream(4); !errors.Is(err, syscall.EINVAL) || !isField(err, "stream_id") {
		t.Fatalf("ResetStream(4) of a DCI with 4 streams: %v, want EINVAL naming stream_id", err)
	}
	write(7, key+1, 0, cq.RetryExcErr) // a second stream in error: the DCI is
	if st := dci.State(); st != mlx.IBV_QPS_ERR {
		t.Fatalf("the DCI with two streams in error: %v, want IBV_QPS_ERR", st)
	}
	if err := dci.ResetStream(0); err == nil {
		t.Fatal("ResetStream of a DCI in error succeeded")
	}
	rc := devicetest.Must[*device.QP](t, "CreateQP RC")(pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: q,
		MaxSendWR: 1, MaxSendSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}))
	if err := rc.ResetStream(0); !errors.Is(err, syscall.EINVAL) || !isField(err, "qp") {
		t.Fatalf("ResetStream of an RC QP: %v, want EINVAL naming the QP", err)
	}
}
