package sim_test

import (
	"errors"
	"runtime"
	"syscall"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// TestCloseContextRace is issue 20's shutdown, as it was reported:
// Context.Close (or CQ.Close, SRQ.Close, a signature mkey's Close) from
// the main goroutine while others post RDMA writes, post receives on an
// SRQ, poll the CQ and create and close signature mkeys (which the CQ's
// poller looks up). devicetest's CloseRace closes objects of one context
// the suite gives it; this opens a context per round, so that the
// context's own Close races the loops too. At the commit before the
// post/poll split (29c9248) these 100 rounds faulted in cq's nextCQE in
// 4 runs of 5; 100 keeps the test's share of the race stage near 10 s.
func TestCloseContextRace(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 25
	}
	base := runtime.NumGoroutine()
	for r := range rounds {
		closeContextRound(t, r)
		if t.Failed() {
			return
		}
	}
	devicetest.NoGoroutinesLeft(t, base)
}

// untilClosed calls post until it fails with anything but a full queue
// (ENOMEM: the poller gives the room back), and returns that error.
func untilClosed(post func() error) error {
	for {
		err := post()
		if err == nil || !errors.Is(err, syscall.ENOMEM) || errors.Is(err, device.ErrClosed) {
			if err != nil {
				return err
			}
			continue
		}
		runtime.Gosched()
	}
}

// closeContextRound is one round; r picks what is closed first and when.
func closeContextRound(t *testing.T, r int) {
	c, err := device.Open("sim:closerace")
	if err != nil {
		t.Fatal(err)
	}
	p := devicetest.RCPairSRQ(t, c, 8)
	src, dst := devicetest.MRPair(t, p.PD, 64)
	loops := []func() error{
		func() error { // writer of A
			s := p.A.SQ()
			i := uint64(0)
			return untilClosed(func() error {
				i++
				s.SetWRID(i)
				s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
				if err := s.Start(); err != nil {
					return err
				}
				return errors.Join(s.RDMAWriteSGE(dst.RKey, dst.Addr, src.LKey, src.Addr, 8), s.Complete())
			})
		},
		func() error { // poller of the pair's CQ
			wc := make([]cq.WC, 4)
			return untilClosed(func() error {
				_, err := p.CQ.Poll(wc)
				return err
			})
		},
		func() error { // receive writer of B's SRQ
			i := uint64(0)
			return untilClosed(func() error {
				i++
				return p.SRQ.RQ().Post(i, []mlx.SGE{{Addr: dst.Addr, Length: 64, LKey: dst.LKey}})
			})
		},
		func() error { // signature mkeys the poller looks up, created and closed
			return untilClosed(func() error {
				mk, err := p.PD.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
				if err != nil {
					return err
				}
				return mk.Close()
			})
		},
	}
	done := make(chan error, len(loops))
	for _, f := range loops {
		go func() { done <- f() }()
	}
	time.Sleep(time.Duration(r%7) * 30 * time.Microsecond) // vary the moment
	closers := []func() error{c.Close, p.CQ.Close, p.SRQ.Close, p.PD.Close}
	if err := closers[r%len(closers)](); err != nil {
		t.Errorf("round %d: first close: %v", r, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("round %d: Context.Close: %v", r, err)
	}
	for range loops {
		select {
		case err := <-done:
			if !errors.Is(err, device.ErrClosed) {
				t.Errorf("round %d: a loop ended with %v, want an error matching device.ErrClosed", r, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: a loop still runs 5 s after the context closed", r)
		}
	}
}
