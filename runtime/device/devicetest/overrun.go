package devicetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// testCQOverrun: more signaled completions than a CQ holds, unpolled, are
// an overrun. Poll gives what the CQ held, then fails with an error
// matching ErrCQOverrun that names the CQ and its size, every time after.
// The CQ error is IBV_EVENT_CQ_ERR; the QP whose CQE found no room moves
// to error with IBV_EVENT_QP_FATAL, and so does every other QP completing
// to the CQ when it next has a CQE for it, while it stays in RTS until
// then (IBA 11.6.3: a CQ error, then a local work queue catastrophic error
// for each queue that tries to use the CQ). On hardware the overrun is
// known once its event was read, so the test reads asynchronous events
// while Poll finds nothing.
func testCQOverrun(t *testing.T, c *device.Context) {
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	q := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 2}))
	n := q.CQEs()
	if maxWR := c.Caps().MaxQPWR; n+1 > maxWR {
		t.Fatalf("a CQ of %d CQEs: a QP cannot post %d (Caps.MaxQPWR %d)", n, n+1, maxWR)
	}
	cfg := device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: n + 1, MaxSendSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}
	a := Must[*device.QP](t, "CreateQP A")(pd.CreateQP(cfg))
	b := Must[*device.QP](t, "CreateQP B")(pd.CreateQP(cfg))
	ConnectPair(t, a, b)
	src, dst := MRPair(t, pd, 64)
	s := a.SQ()
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range n + 1 {
		s.SetWRID(uint64(i))
		s.RDMAWrite(dst.RKey, dst.Addr)
		s.SetSGE(src.LKey, src.Addr, 8)
	}
	if err := s.Complete(); err != nil {
		t.Fatalf("posting %d writes: %v", n+1, err)
	}
	ev := &events{t: t, c: c, q: q}
	err := ev.pollToOverrun(n)
	if !errors.Is(err, device.ErrCQOverrun) {
		t.Fatalf("Poll of an overrun CQ: %v, want an error matching ErrCQOverrun", err)
	}
	for _, want := range []string{fmt.Sprintf("CQ %#x", q.CQN()), fmt.Sprintf("%d CQEs", n)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the overrun error %q does not say %q", err, want)
		}
	}
	ev.await(device.AsyncEvent{Type: mlx.IBV_EVENT_CQ_ERR, CQN: q.CQN()})
	ev.await(device.AsyncEvent{Type: mlx.IBV_EVENT_QP_FATAL, QPN: a.QPN()})
	if st := a.State(); st != mlx.IBV_QPS_ERR {
		t.Fatalf("A, whose CQE found the CQ full: %v, want IBV_QPS_ERR", st)
	}
	if st := b.State(); st != mlx.IBV_QPS_RTS {
		t.Fatalf("B, which had no CQE for the CQ yet: %v, want IBV_QPS_RTS", st)
	}
	// B's next completion (an error: A no longer answers) needs the CQ.
	Write(t, b, 100, src, dst, 8)
	ev.await(device.AsyncEvent{Type: mlx.IBV_EVENT_QP_FATAL, QPN: b.QPN()})
	if st := b.State(); st != mlx.IBV_QPS_ERR {
		t.Fatalf("B after it needed the overrun CQ: %v, want IBV_QPS_ERR", st)
	}
	// A's flushes have nowhere to go: the CQ still fails, empty.
	Write(t, a, 101, src, dst, 8)
	if k, err := q.Poll(make([]cq.WC, 4)); k != 0 || !errors.Is(err, device.ErrCQOverrun) {
		t.Fatalf("Poll after more work on QPs in error: %d completions, %v; want none and ErrCQOverrun again", k, err)
	}
}

// events reads a context's asynchronous events while polling a CQ (which
// runs a simulator's engine), keeping those read for await.
type events struct {
	t    *testing.T
	c    *device.Context
	q    *device.CQ
	seen []device.AsyncEvent
}

// next polls the CQ once and reads one event if one comes within a few
// milliseconds; it returns what the poll returned.
func (e *events) next(wc []cq.WC) (int, error) {
	k, err := e.q.Poll(wc)
	if k == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		if ev, err := e.c.AsyncEvent(ctx); err == nil {
			e.seen = append(e.seen, ev) // hardware: the CQ_ERR event records the overrun
		}
		cancel()
	}
	return k, err
}

// pollToOverrun polls until Poll fails (or PollTimeout passes) and checks
// that it got no more than the n completions the CQ holds.
func (e *events) pollToOverrun(n int) error {
	e.t.Helper()
	wc := make([]cq.WC, 8)
	got := 0
	deadline := time.Now().Add(PollTimeout)
	for time.Now().Before(deadline) {
		k, err := e.next(wc)
		got += k
		if err != nil {
			if got > n {
				e.t.Fatalf("%d completions from a CQ of %d", got, n)
			}
			return err
		}
	}
	e.t.Fatalf("no overrun error within %v (%d completions from a CQ of %d)", PollTimeout, got, n)
	return nil
}

// await waits (PollTimeout at most) for an event equal to want in type
// and object, among those read so far and those to come.
func (e *events) await(want device.AsyncEvent) {
	e.t.Helper()
	match := func(ev device.AsyncEvent) bool {
		return ev.Type == want.Type && ev.QPN == want.QPN && ev.CQN == want.CQN && ev.SRQN == want.SRQN
	}
	wc := make([]cq.WC, 8)
	deadline := time.Now().Add(PollTimeout)
	for i := 0; ; {
		for ; i < len(e.seen); i++ {
			if match(e.seen[i]) {
				return
			}
		}
		if !time.Now().Before(deadline) {
			e.t.Fatalf("no %v (QP %#x, CQ %#x) within %v; events read: %v", want.Type, want.QPN, want.CQN, PollTimeout, e.seen)
		}
		e.next(wc)
	}
}
