package devicetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// EndBound is how soon after a Close (from its call to the blocked
// call's return) a wait on what it closed must end in these tests. The
// API promises 10 ms and takes well under a millisecond (the latency is
// logged); the tests allow 100 ms, so that a loaded 2-core machine
// running the race detector does not fail them: what they catch is a
// wait that does not end with its object, not a slow scheduler.
var EndBound = 100 * time.Millisecond

// blocked runs call on a goroutine and checks that it is still blocked
// a moment later: the result arrives on the channel returned.
func blocked(t *testing.T, what string, call func() error) <-chan error {
	t.Helper()
	res := make(chan error, 1)
	go func() { res <- call() }()
	select {
	case err := <-res:
		t.Fatalf("%s returned before anything was closed: %v", what, err)
	case <-time.After(20 * time.Millisecond):
	}
	return res
}

// endsClosed checks that each of the blocked calls ends with an error
// wrapping device.ErrClosed within EndBound of close's call.
func endsClosed(t *testing.T, what string, close func() error, calls map[string]<-chan error) {
	t.Helper()
	start := time.Now()
	if err := close(); err != nil {
		t.Errorf("%s: %v", what, err)
	}
	for name, res := range calls {
		select {
		case err := <-res:
			took := time.Since(start)
			if took > EndBound {
				t.Errorf("%s ended %v after %s, want within %v", name, took, what, EndBound)
			}
			t.Logf("%s ended %v after %s", name, took, what)
			if !errors.Is(err, device.ErrClosed) {
				t.Errorf("%s after %s: %v, want an error wrapping device.ErrClosed", name, what, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still blocked 5 s after %s", name, what)
		}
	}
}

// waiters starts a Wait (no deadline), a WaitSolicited (a far deadline:
// it must end with ErrClosed, not wait for it) and a PollWait on CQs of
// ch, and a PollWait on a CQ without a channel when plain is not nil.
func waiters(t *testing.T, qs []*device.CQ, plain *device.CQ) map[string]<-chan error {
	t.Helper()
	far, cancel := context.WithTimeout(context.Background(), time.Hour)
	t.Cleanup(cancel)
	calls := map[string]<-chan error{
		"Wait":          blocked(t, "Wait", func() error { return qs[0].Wait(context.Background()) }),
		"WaitSolicited": blocked(t, "WaitSolicited", func() error { return qs[1].WaitSolicited(far) }),
		"PollWait":      blocked(t, "PollWait", func() error { return pollWaitErr(qs[2], far) }),
	}
	if plain != nil {
		calls["PollWait without a channel"] = blocked(t, "PollWait without a channel",
			func() error { return pollWaitErr(plain, context.Background()) })
	}
	return calls
}

// pollWaitErr runs PollWait with nothing to complete: its error, or one
// saying what it returned instead.
func pollWaitErr(q *device.CQ, ctx context.Context) error {
	n, err := q.PollWait(ctx, make([]cq.WC, 4))
	if n != 0 {
		return fmt.Errorf("PollWait returned %d completions of an idle CQ (%v)", n, err)
	}
	return err
}

// channelCQs creates a channel and n CQs bound to it.
func channelCQs(t *testing.T, c *device.Context, n int) (*device.CompChannel, []*device.CQ) {
	t.Helper()
	ch := Must[*device.CompChannel](t, "CreateCompChannel")(c.CreateCompChannel())
	var qs []*device.CQ
	for range n {
		qs = append(qs, Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 4, Channel: ch})))
	}
	return ch, qs
}

// testWaitCQClose: closing a CQ ends the waits on it (and only those).
func testWaitCQClose(t *testing.T, c *device.Context) {
	_, qs := channelCQs(t, c, 4)
	plain := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 4}))
	calls := waiters(t, qs, plain)
	other := blocked(t, "Wait on another CQ of the channel", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		return qs[3].Wait(ctx)
	})
	for i, name := range []string{"Wait", "WaitSolicited", "PollWait"} {
		endsClosed(t, fmt.Sprintf("Close of CQ %#x", qs[i].CQN()), qs[i].Close, map[string]<-chan error{name: calls[name]})
	}
	endsClosed(t, "Close of the CQ without a channel", plain.Close,
		map[string]<-chan error{"PollWait without a channel": calls["PollWait without a channel"]})
	if err := <-other; !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, device.ErrClosed) {
		t.Errorf("Wait on an open CQ of the channel while others closed: %v, want its deadline", err)
	}
}

// testWaitChannelClose: closing the channel ends the waits on its CQs.
func testWaitChannelClose(t *testing.T, c *device.Context) {
	ch, qs := channelCQs(t, c, 3)
	endsClosed(t, "Close of the channel", ch.Close, waiters(t, qs, nil))
	if err := qs[0].Wait(context.Background()); !errors.Is(err, device.ErrClosed) {
		t.Errorf("Wait after the channel's Close: %v, want ErrClosed", err)
	}
}

// testWaitContextClose: closing the context ends every wait, AsyncEvent
// too, and leaves no goroutine behind.
func testWaitContextClose(t *testing.T, c *device.Context) {
	base := runtime.NumGoroutine()
	_, qs := channelCQs(t, c, 3)
	plain := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 4}))
	calls := waiters(t, qs, plain)
	calls["AsyncEvent"] = blocked(t, "AsyncEvent", func() error {
		ev, err := c.AsyncEvent(context.Background())
		if !ev.IsZero() {
			return fmt.Errorf("AsyncEvent returned the event %v with %v", ev, err)
		}
		return err
	})
	endsClosed(t, "Close of the context", c.Close, calls)
	if _, err := c.AsyncEvent(context.Background()); !errors.Is(err, device.ErrClosed) {
		t.Errorf("AsyncEvent after Close: %v, want ErrClosed", err)
	}
	NoGoroutinesLeft(t, base)
}

// NoGoroutinesLeft fails t if the number of goroutines does not settle
// back to base within a second, listing them.
func NoGoroutinesLeft(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines after closing everything, %d before:\n%s", runtime.NumGoroutine(), base, buf)
		}
		time.Sleep(time.Millisecond)
	}
}

// testWaitTimeout: a wait that times out returns the zero value and
// ctx's error alone (not ErrClosed), naming what it waited on.
func testWaitTimeout(t *testing.T, c *device.Context) {
	_, qs := channelCQs(t, c, 1)
	plain := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 4}))
	deadline := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, device.ErrClosed) || !strings.Contains(err.Error(), what) {
			t.Errorf("%v, want the context's deadline naming %s", err, what)
		}
	}
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	deadline("CQ", qs[0].Wait(short()))
	deadline("CQ", qs[0].WaitSolicited(short()))
	deadline("CQ", pollWaitErr(qs[0], short()))
	deadline("CQ", pollWaitErr(plain, short()))
	ev, err := c.AsyncEvent(short())
	deadline("context", err)
	if !ev.IsZero() || ev != (device.AsyncEvent{}) {
		t.Errorf("AsyncEvent that timed out returned %+v", ev)
	}
	if s := fmt.Sprintf("%v %+v", ev, ev); s != "no event no event" {
		t.Errorf("the zero AsyncEvent prints as %q, want \"no event\"", s)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := pollWaitErr(plain, done); !errors.Is(err, context.Canceled) {
		t.Errorf("PollWait with a canceled ctx: %v, want context.Canceled", err)
	}
	if err := qs[0].Wait(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a canceled ctx: %v, want context.Canceled", err)
	}
}

// testPollWait: PollWait returns completions already there, and those
// that arrive while it waits, with and without a completion channel.
func testPollWait(t *testing.T, c *device.Context) {
	ch := Must[*device.CompChannel](t, "CreateCompChannel")(c.CreateCompChannel())
	ctx, cancel := context.WithTimeout(context.Background(), PollTimeout)
	defer cancel()
	for _, pch := range []*device.CompChannel{nil, ch} {
		p := RCPair(t, c, pch)
		src, dst := MRPair(t, p.PD, 64)
		wc := make([]cq.WC, 4)
		Write(t, p.A, 1, src, dst, 64)
		if n, err := p.CQ.PollWait(ctx, wc); n != 1 || err != nil || wc[0].WRID != 1 || wc[0].Status != cq.Success {
			t.Fatalf("PollWait after a write (channel %v): %d, %v, %+v", pch != nil, n, err, wc[0])
		}
		for i := range 3 {
			Write(t, p.A, uint64(20+i), src, dst, 64)
		}
		for got := 0; got < 3; {
			n, err := p.CQ.PollWait(ctx, wc)
			if err != nil || n == 0 {
				t.Fatalf("PollWait for %d more of three writes: %d, %v", 3-got, n, err)
			}
			got += n
		}
		pollWaitArrival(t, c, pch)
	}
}

// pollWaitArrival: a PollWait blocked on a CQ returns the receive
// completion of a SEND posted while it spins or sleeps. The waiting
// goroutine polls only the receiver's CQ (which retires SRQ entries
// posted before it started), so the sender's queues stay the test's.
func pollWaitArrival(t *testing.T, c *device.Context, ch *device.CompChannel) {
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	sendCQ := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	recvCQ := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16, Channel: ch}))
	srq := Must[*device.SRQ](t, "CreateSRQ")(pd.CreateSRQ(device.SRQConfig{MaxWR: 4, MaxSGE: 1}))
	cfg := device.QPConfig{Kind: device.RC, SendCQ: sendCQ, MaxSendWR: 8, MaxSendSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_SEND}
	a := Must[*device.QP](t, "CreateQP A")(pd.CreateQP(cfg))
	cfg.SendCQ, cfg.SRQ = recvCQ, srq
	b := Must[*device.QP](t, "CreateQP B")(pd.CreateQP(cfg))
	ConnectPair(t, a, b)
	src, dst := MRPair(t, pd, 64)
	ctx, cancel := context.WithTimeout(context.Background(), PollTimeout)
	defer cancel()
	for round := range 3 {
		if err := srq.RQ().Post(uint64(100+round), []rq.SGE{{Addr: dst.Addr, Length: 64, LKey: dst.LKey}}); err != nil {
			t.Fatalf("post receive: %v", err)
		}
		type result struct {
			n   int
			err error
			wc  cq.WC
		}
		res := make(chan result, 1)
		go func() {
			wc := make([]cq.WC, 4)
			n, err := recvCQ.PollWait(ctx, wc)
			res <- result{n, err, wc[0]}
		}()
		time.Sleep(time.Duration(round) * 5 * time.Millisecond) // PollWait starting, spinning, sleeping
		Send(t, a, uint64(10+round), src, 64)
		r := <-res
		if r.n != 1 || r.err != nil || r.wc.WRID != uint64(100+round) || r.wc.Status != cq.Success || r.wc.Opcode != mlx.IBV_WC_RECV {
			t.Fatalf("PollWait for a SEND posted while it waits (channel %v, round %d): %d, %v, %+v",
				ch != nil, round, r.n, r.err, r.wc)
		}
		if wc := PollOne(t, sendCQ); wc.WRID != uint64(10+round) || wc.Status != cq.Success {
			t.Fatalf("the SEND's completion: %+v", wc)
		}
	}
}
