package device_test

import (
	"context"
	"fmt"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// TestPollWaitNoAlloc: PollWait with a completion already there (its
// fast path) allocates nothing, as Poll does, with and without a
// completion channel.
func TestPollWaitNoAlloc(t *testing.T) {
	c := openFake(t)
	defer c.Close()
	ch, err := c.CreateCompChannel()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, pch := range []bool{false, true} {
		p := devicetest.RCPair(t, c, nil)
		if pch {
			p = devicetest.RCPair(t, c, ch)
		}
		src, dst := devicetest.MRPair(t, p.PD, 64)
		wc := make([]cq.WC, 4)
		s := p.A.SQ()
		n := testing.AllocsPerRun(50, func() {
			s.SetWRID(1)
			s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
			s.Start()
			s.RDMAWrite(dst.RKey, dst.Addr)
			s.SetSGE(src.LKey, src.Addr, 64)
			s.Complete()
			if k, err := p.CQ.PollWait(ctx, wc); k != 1 || err != nil {
				panic(fmt.Sprint(k, err))
			}
		})
		if n != 0 {
			t.Errorf("post and PollWait (channel %v): %v allocations", pch, n)
		}
	}
}
