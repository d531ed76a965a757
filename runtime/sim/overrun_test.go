package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// TestCQOverrunEvent: completions past a full CQ are an overrun, which
// the program learns as libibverbs reports it: IBV_EVENT_CQ_ERR naming the
// CQ, then IBV_EVENT_QP_FATAL naming the QP whose CQE found no room, which
// is in error from then on. The CQ keeps the CQEs written before.
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
	nextEvent(t, c, device.AsyncEvent{Type: mlx.IBV_EVENT_CQ_ERR, CQN: q.CQN()})
	nextEvent(t, c, device.AsyncEvent{Type: mlx.IBV_EVENT_QP_FATAL, QPN: a.QPN()})
	if st := a.State(); st != mlx.IBV_QPS_ERR {
		t.Fatalf("the QP whose CQE found the CQ full is in %v, want IBV_QPS_ERR", st)
	}
	wc := make([]cq.WC, 8)
	if n, err := q.Poll(wc); n != q.CQEs() || err != nil {
		t.Fatalf("%d completions (%v) from a full CQ of %d", n, err, q.CQEs())
	}
	for i, w := range wc[:q.CQEs()] {
		if w.WRID != uint64(i) || w.Status != cq.Success {
			t.Fatalf("completion %d: %+v, want the write's success", i, w)
		}
	}
}

// TestCQOverrunRecvSide: a receive CQ that overruns moves its QP to error
// while the QP's send CQ is healthy. The sender's messages whose receive
// CQEs were written or lost completed; its next one finds the receiver in
// error and fails (a transport retry error). The receiver's flushes go
// where they can: its send queue's into its send CQ, its posted receives'
// nowhere (the receive CQ takes none), so that CQ gives what it held and
// then ErrCQOverrun.
func TestCQOverrunRecvSide(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:overrun-recv"))
	defer c.Close()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	mr := devicetest.Must[*device.MR](t, "RegMR")(pd.RegMR(devicetest.Buffer(t, 4096), device.DefaultAccess))
	newCQ := func(n int) *device.CQ {
		return devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: n}))
	}
	qa, qb, rb := newCQ(16), newCQ(16), newCQ(2)
	cfg := device.QPConfig{Kind: device.RC, SendCQ: qa, MaxSendWR: 8, MaxSendSGE: 1, MaxRecvWR: 8, MaxRecvSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_SEND | mlx.IBV_QP_EX_WITH_RDMA_WRITE}
	a := devicetest.Must[*device.QP](t, "CreateQP A")(pd.CreateQP(cfg))
	cfg.SendCQ, cfg.RecvCQ = qb, rb
	b := devicetest.Must[*device.QP](t, "CreateQP B")(pd.CreateQP(cfg))
	devicetest.ConnectPair(t, a, b)
	for i := range 4 {
		if err := b.RQ().Post(uint64(50+i), []rq.SGE{{Addr: mr.Addr + 1024, Length: 64, LKey: mr.LKey}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 { // the third receive CQE finds rb full
		devicetest.Send(t, a, uint64(i), mr, 8)
		if wc := devicetest.PollOne(t, qa); wc.WRID != uint64(i) || wc.Status != cq.Success {
			t.Fatalf("send %d: %+v, want success", i, wc)
		}
	}
	nextEvent(t, c, device.AsyncEvent{Type: mlx.IBV_EVENT_CQ_ERR, CQN: rb.CQN()})
	nextEvent(t, c, device.AsyncEvent{Type: mlx.IBV_EVENT_QP_FATAL, QPN: b.QPN()})
	if sa, sb := a.State(), b.State(); sa != mlx.IBV_QPS_RTS || sb != mlx.IBV_QPS_ERR {
		t.Fatalf("states %v and %v, want the sender in RTS and the receiver in error", sa, sb)
	}
	devicetest.Send(t, a, 3, mr, 8)
	if wc := devicetest.PollOne(t, qa); wc.WRID != 3 || wc.Status != cq.RetryExcErr {
		t.Fatalf("a send to the QP in error: %+v, want IBV_WC_RETRY_EXC_ERR", wc)
	}
	devicetest.Send(t, b, 9, mr, 8)
	if wc := devicetest.PollOne(t, qb); wc.WRID != 9 || wc.Status != cq.WRFlushErr {
		t.Fatalf("the receiver's send: %+v, want a flush on its healthy send CQ", wc)
	}
	wc := make([]cq.WC, 8)
	if n, err := rb.Poll(wc); n != 2 || err != nil || wc[0].WRID != 50 || wc[1].WRID != 51 {
		t.Fatalf("the overrun receive CQ: %d completions (%v), want the two receives written before", n, err)
	}
	if n, err := rb.Poll(wc); n != 0 || !errors.Is(err, device.ErrCQOverrun) {
		t.Fatalf("the overrun receive CQ after its CQEs: %d, %v; want ErrCQOverrun (the receive flushes are lost)", n, err)
	}
	if n, err := qb.Poll(wc); n != 0 || err != nil {
		t.Fatalf("the receiver's send CQ after its flush: %d, %v; want nothing more", n, err)
	}
}

// nextEvent reads the device's next asynchronous event, checks it is
// want (type and object) and returns it.
func nextEvent(t *testing.T, c *device.Context, want device.AsyncEvent) device.AsyncEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := c.AsyncEvent(ctx)
	if err != nil || ev.Type != want.Type || ev.QPN != want.QPN || ev.CQN != want.CQN || ev.SRQN != want.SRQN {
		t.Fatalf("event %v (%v), want %v (QP %#x, CQ %#x, SRQ %#x)", ev, err, want.Type, want.QPN, want.CQN, want.SRQN)
	}
	return ev
}

// noEvent checks that the device has no asynchronous event to read.
func noEvent(t *testing.T, c *device.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if ev, err := c.AsyncEvent(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("event %v (%v), want none", ev, err)
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
