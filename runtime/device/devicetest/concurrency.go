package devicetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// The concurrency contract, as programs use it: one goroutine posts on a
// QP while another polls the CQ it completes to (send and receive
// sides), and Close comes from a third at any moment. Run it with -race.

// whileFull calls post until it does not fail with a full queue
// (ENOMEM: the poller on another goroutine returns the room), and
// returns its last error (nil, or what ended it: a closed queue's wraps
// device.ErrClosed).
func whileFull(post func() error) error {
	for {
		err := post()
		if err == nil || !errors.Is(err, syscall.ENOMEM) || errors.Is(err, device.ErrClosed) {
			return err
		}
		runtime.Gosched()
	}
}

// postWrite posts one signaled RDMA write of n bytes, retrying while the
// ring is full.
func postWrite(q *device.QP, wrid uint64, src, dst *device.MR, n uint32) error {
	s := q.SQ()
	return whileFull(func() error {
		s.SetWRID(wrid)
		s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		if err := s.Start(); err != nil {
			return err
		}
		return errors.Join(s.RDMAWriteSGE(dst.RKey, dst.Addr, src.LKey, src.Addr, n), s.Complete())
	})
}

// postRecv posts one receive, retrying while the queue is full.
func postRecv(q *device.QP, wrid uint64, mr *device.MR, n uint32) error {
	return whileFull(func() error {
		return q.RQ().Post(wrid, []mlx.SGE{{Addr: mr.Addr, Length: n, LKey: mr.LKey}})
	})
}

// inOrder checks completions as they come: successes of one opcode
// with wr_ids first, first+1, ..., each once.
type inOrder struct {
	what string
	next uint64
	end  uint64
	op   mlx.IBVWCOpcode
}

func (o *inOrder) check(w *cq.WC) error {
	if o.next == o.end || w.Status != cq.Success || w.Opcode != o.op || w.WRID != o.next {
		return fmt.Errorf("%s: completion wr_id %d %v %v, want wr_id %d %v success (of %d)", o.what, w.WRID, w.Opcode, w.Status, o.next, o.op, o.end)
	}
	o.next++
	return nil
}

// pollAll polls the CQs in turn on one goroutine (the simulated device
// steps on the polling goroutine: one poller for both keeps its CQE
// writes ordered with the reads) until every stream is complete; each
// CQ's completions are checked by its stream, in order.
func pollAll(qs []*device.CQ, streams [][]*inOrder) error {
	wc := make([]cq.WC, 8)
	deadline := time.Now().Add(PollTimeout)
	cur := make([]int, len(qs))
	for {
		idle, done := true, true
		for i, q := range qs {
			if cur[i] == len(streams[i]) {
				continue
			}
			done = false
			n, err := q.Poll(wc)
			if err != nil {
				return err
			}
			for k := range wc[:n] {
				s := streams[i][cur[i]]
				if err := s.check(&wc[k]); err != nil {
					return err
				}
				if s.next == s.end {
					cur[i]++
				}
			}
			idle = idle && n == 0
		}
		if done {
			return nil
		}
		if idle {
			if time.Now().After(deadline) {
				return fmt.Errorf("completions missing after %v: %+v", PollTimeout, streams)
			}
			runtime.Gosched()
		}
	}
}

// testPostPollSplit: a writer goroutine posts RDMA writes, then SENDs,
// on A; another posts receives on B's SRQ; a third polls A's send CQ and
// B's receive CQ. Every work request completes once, in order, and the
// rings wrap many times (8-entry queues).
func testPostPollSplit(t *testing.T, c *device.Context) {
	const n = 2000
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	scq := Must[*device.CQ](t, "CreateCQ send")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	rcq := Must[*device.CQ](t, "CreateCQ recv")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	srq := Must[*device.SRQ](t, "CreateSRQ")(pd.CreateSRQ(device.SRQConfig{MaxWR: 8, MaxSGE: 1}))
	cfg := device.QPConfig{Kind: device.RC, SendCQ: scq, RecvCQ: rcq, MaxSendWR: 8, MaxSendSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_SEND}
	a := Must[*device.QP](t, "CreateQP A")(pd.CreateQP(cfg))
	cfg.SRQ = srq
	b := Must[*device.QP](t, "CreateQP B")(pd.CreateQP(cfg))
	ConnectPair(t, a, b)
	src, dst := MRPair(t, pd, 256)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	run := func(what string, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				errs <- fmt.Errorf("%s: %w", what, err)
			}
		}()
	}
	run("writer of A", func() error {
		for i := range uint64(n) {
			if err := postWrite(a, i, src, dst, 64); err != nil {
				return err
			}
		}
		for i := range uint64(n) {
			if err := postSend(a, n+i, src, 32); err != nil {
				return err
			}
		}
		return nil
	})
	run("receive writer of B's SRQ", func() error {
		for i := range uint64(n) {
			if err := postSRQ(srq, 2*n+i, dst, 256); err != nil {
				return err
			}
		}
		return nil
	})
	run("poller", func() error {
		return pollAll([]*device.CQ{scq, rcq}, [][]*inOrder{
			{{"A's writes", 0, n, mlx.IBV_WC_RDMA_WRITE}, {"A's sends", n, 2 * n, mlx.IBV_WC_SEND}},
			{{"B's receives", 2 * n, 3 * n, mlx.IBV_WC_RECV}},
		})
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// postSRQ posts one receive on an SRQ, retrying while it is full.
func postSRQ(s *device.SRQ, wrid uint64, mr *device.MR, n uint32) error {
	return whileFull(func() error {
		return s.RQ().Post(wrid, []mlx.SGE{{Addr: mr.Addr, Length: n, LKey: mr.LKey}})
	})
}

// postSend posts one signaled SEND of n bytes, retrying while full.
func postSend(q *device.QP, wrid uint64, src *device.MR, n uint32) error {
	s := q.SQ()
	return whileFull(func() error {
		s.SetWRID(wrid)
		s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		if err := s.Start(); err != nil {
			return err
		}
		return errors.Join(s.SendSGE(src.LKey, src.Addr, n), s.Complete())
	})
}

// CloseRounds is how many rounds testCloseRace runs (fewer with -short).
var CloseRounds = 1000

// testCloseRace: round after round, goroutines post, poll, wait in
// PollWait and post receives in loops while the main goroutine closes
// one object under them (the QP, the CQ, the PD, the channel, or all of
// the context's objects through the PD and channel): no fault, no hang,
// and every goroutine ends with an error matching device.ErrClosed.
func testCloseRace(t *testing.T, c *device.Context) {
	rounds := CloseRounds
	if testing.Short() {
		rounds /= 5
	}
	base := runtime.NumGoroutine()
	for r := range rounds {
		closeRound(t, c, r)
		if t.Failed() {
			return
		}
	}
	NoGoroutinesLeft(t, base)
}

// closeRound is one round of testCloseRace; r picks what is closed.
func closeRound(t *testing.T, c *device.Context, r int) {
	ch := Must[*device.CompChannel](t, "CreateCompChannel")(c.CreateCompChannel())
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	// One goroutine polls q, another waits on q2 (B's receives): one
	// poller per CQ, as the contract says.
	q := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	q2 := Must[*device.CQ](t, "CreateCQ 2")(c.CreateCQ(device.CQConfig{CQEs: 16, Channel: ch}))
	cfg := device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}
	a := Must[*device.QP](t, "CreateQP A")(pd.CreateQP(cfg))
	cfg.RecvCQ = q2
	b := Must[*device.QP](t, "CreateQP B")(pd.CreateQP(cfg))
	ConnectPair(t, a, b)
	src, dst := MRPair(t, pd, 64)
	loops := []func() error{
		func() error { // writer
			for i := uint64(0); ; i++ {
				if err := postWrite(a, i, src, dst, 8); err != nil {
					return err
				}
			}
		},
		func() error { // poller
			wc := make([]cq.WC, 4)
			for {
				if _, err := q.Poll(wc); err != nil {
					return err
				}
				runtime.Gosched()
			}
		},
		func() error { // waiter
			wc := make([]cq.WC, 4)
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				_, err := q2.PollWait(ctx, wc)
				cancel()
				if err != nil && !errors.Is(err, context.DeadlineExceeded) {
					return err
				}
			}
		},
		func() error { // receive writer
			for i := uint64(0); ; i++ {
				if err := postRecv(b, i, dst, 8); err != nil {
					return err
				}
			}
		},
	}
	done := make(chan error, len(loops))
	for _, f := range loops {
		go func() { done <- f() }()
	}
	time.Sleep(time.Duration(r%5) * 20 * time.Microsecond) // vary the moment
	closers := []func() error{a.Close, q.Close, pd.Close, ch.Close, b.Close, q2.Close}
	if err := closers[r%len(closers)](); err != nil {
		t.Errorf("round %d: close: %v", r, err)
	}
	// Whatever the round closed, close the rest so that every loop ends.
	for _, cl := range []func() error{a.Close, b.Close, q.Close, q2.Close, pd.Close, ch.Close} {
		if err := cl(); err != nil {
			t.Errorf("round %d: close: %v", r, err)
		}
	}
	for range loops {
		select {
		case err := <-done:
			if !errors.Is(err, device.ErrClosed) {
				t.Errorf("round %d: a loop ended with %v, want an error matching device.ErrClosed", r, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: a loop still runs 5 s after its objects were closed", r)
		}
	}
}
