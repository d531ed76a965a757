package devicetest

import (
	"errors"
	"runtime"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// CloseContextRounds is how many rounds testCloseContextRace runs (a
// quarter with -short). At 29c9248, before the post/poll split, 100
// rounds of it on the simulator faulted in nextCQE in 4 runs of 5.
var CloseContextRounds = 100

// sigMkeyFlags are the flags of the mkeys the mkey loop creates: a
// signature mkey is registered with the CQ for the poller's lookups (the
// map that once raced RemoveQP), so it is the case worth racing.
const sigMkeyFlags = mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE

// testCloseContextRace is issue 20's shutdown as it was reported, on
// every backend: a context per round (so it needs the opener, not one
// context), and its Close, or the CQ's, SRQ's or PD's first, from this
// goroutine while others post RDMA writes, post receives on an SRQ, poll
// the CQ, and create and close mkeys beside the poller. No fault, no
// hang, every loop ends with an error matching device.ErrClosed and no
// goroutine is left. CloseRace closes QPs, CQs, PDs and channels of the
// one context a case gets; this adds the context, the SRQ and mkeys.
func testCloseContextRace(t *testing.T, open Opener) {
	rounds := CloseContextRounds
	if testing.Short() {
		rounds /= 4
	}
	base := runtime.NumGoroutine()
	flags := mkeyFlags(t, open)
	for r := range rounds {
		closeContextRound(t, open, flags, r)
		if t.Failed() {
			return
		}
	}
	NoGoroutinesLeft(t, base)
}

// mkeyFlags returns sigMkeyFlags if the backend creates signature mkeys,
// else plain indirect ones (the hardware backend cannot drive signature
// mkeys through libmlx5's public API: runtime/device/verbs ErrSigMkeyPSV).
func mkeyFlags(t *testing.T, open Opener) mlx.MkeyInitAttrFlags {
	c := open(t)
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	mk, err := pd.CreateMkey(sigMkeyFlags, 4)
	if err != nil {
		t.Logf("signature mkeys refused (%v): the mkey loop creates plain indirect mkeys", err)
		return mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
	}
	if err := mk.Close(); err != nil {
		t.Errorf("mkey Close: %v", err)
	}
	return sigMkeyFlags
}

// untilErr calls post until it fails with anything but a full queue
// (ENOMEM: the poller gives the room back) and returns that error.
func untilErr(post func() error) error {
	for {
		if err := whileFull(post); err != nil {
			return err
		}
	}
}

// closeContextRound is one round; r picks what is closed first and when.
func closeContextRound(t *testing.T, open Opener, mkFlags mlx.MkeyInitAttrFlags, r int) {
	c := open(t)
	p := RCPairSRQ(t, c, 8)
	src, dst := MRPair(t, p.PD, 64)
	i := uint64(0)
	loops := []func() error{
		func() error { return untilErr(func() error { i++; return postWrite(p.A, i, src, dst, 8) }) },
		func() error {
			wc := make([]cq.WC, 4)
			return untilErr(func() error { _, err := p.CQ.Poll(wc); return err })
		},
		func() error {
			j := uint64(0)
			return untilErr(func() error {
				j++
				return p.SRQ.RQ().Post(j, []mlx.SGE{{Addr: dst.Addr, Length: 64, LKey: dst.LKey}})
			})
		},
		func() error {
			return untilErr(func() error {
				mk, err := p.PD.CreateMkey(mkFlags, 4)
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
