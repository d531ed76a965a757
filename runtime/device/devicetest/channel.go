package devicetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// testSharedWaiters: two goroutines wait on two CQs of one channel; each
// gets its own CQ's event whoever reads the channel, while a third posts.
// Run with -race, it also checks that arming a CQ and the backend's look
// at its doorbell do not race (device.Arming).
func testSharedWaiters(t *testing.T, c *device.Context) {
	ch := Must[*device.CompChannel](t, "CreateCompChannel")(c.CreateCompChannel())
	p1 := RCPair(t, c, ch)
	p2 := RCPair(t, c, ch)
	src, dst := MRPair(t, p1.PD, 64)
	src2, dst2 := MRPair(t, p2.PD, 64)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, p := range []Pair{p1, p2} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = p.CQ.Wait(ctx) }()
	}
	time.Sleep(10 * time.Millisecond)
	Write(t, p2.A, 2, src2, dst2, 64)
	time.Sleep(10 * time.Millisecond)
	Write(t, p1.A, 1, src, dst, 64)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("waiter %d: %v", i, err)
		}
	}
}
