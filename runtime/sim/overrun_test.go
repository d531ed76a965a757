package sim_test

import (
	"context"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// TestCQOverrunEvent: completions past a full CQ are an overrun, which
// the program learns as libibverbs reports it: IBV_EVENT_CQ_ERR on the
// context's asynchronous events, naming the CQ.
func TestCQOverrunEvent(t *testing.T) {
	c, q, a, mr := overrunPair(t, "sim:overrun", 2)
	defer c.Close()
	s := a.SQ()
	s.Start()
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	for i := range q.CQEs() + 1 {
		s.SetWRID(uint64(i))
		s.RDMAWrite(mr.RKey, mr.Addr+2048)
		s.SetSGE(mr.LKey, mr.Addr, 8)
	}
	if err := s.Complete(); err != nil {
		t.Fatal(err)
	}
	q.Progress()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := c.AsyncEvent(ctx)
	if err != nil || ev.Type != mlx.IBV_EVENT_CQ_ERR || ev.CQN != q.CQN() {
		t.Fatalf("event %+v, %v", ev, err)
	}
	wc := make([]cq.WC, 8)
	if n, err := q.Poll(wc); n != q.CQEs() || err != nil {
		t.Fatalf("%d completions (%v) from a full CQ of %d", n, err, q.CQEs())
	}
}

// overrunPair opens the simulated device name with a CQ of cqes entries
// and an RC pair completing to it, connected, and an MR both may use.
func overrunPair(t *testing.T, name string, cqes int) (*device.Context, *device.CQ, *device.QP, *device.MR) {
	t.Helper()
	c := devicetest.Must[*device.Context](t, "Open")(device.Open(name))
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	buf := devicetest.Buffer(t, 4096)
	mr := devicetest.Must[*device.MR](t, "RegMR")(pd.RegMR(buf, device.DefaultAccess))
	q := devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: cqes}))
	cfg := device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 8, MaxSendSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}
	a := devicetest.Must[*device.QP](t, "CreateQP")(pd.CreateQP(cfg))
	b := devicetest.Must[*device.QP](t, "CreateQP")(pd.CreateQP(cfg))
	devicetest.ConnectPair(t, a, b)
	return c, q, a, mr
}
