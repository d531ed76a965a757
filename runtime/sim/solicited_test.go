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

// TestWaitSolicited: a CQ armed for solicited completions only gets no
// event for a SEND without IBV_SEND_SOLICITED (its completions arrive all
// the same), and gets one for a SEND with it.
func TestWaitSolicited(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:solicited"))
	defer c.Close()
	ch := devicetest.Must[*device.CompChannel](t, "CreateCompChannel")(c.CreateCompChannel())
	p := devicetest.RCPair(t, c, ch)
	src, dst := devicetest.MRPair(t, p.PD, 64)
	wc := make([]cq.WC, 4)
	for i, flags := range []mlx.SendFlags{mlx.IBV_SEND_SIGNALED, mlx.IBV_SEND_SIGNALED | mlx.IBV_SEND_SOLICITED} {
		if err := p.B.RQ().Post(uint64(100+i), []rq.SGE{{Addr: dst.Addr, Length: 64, LKey: dst.LKey}}); err != nil {
			t.Fatal(err)
		}
		s := p.A.SQ()
		s.SetWRID(uint64(i))
		s.SetWRFlags(flags)
		if err := errors.Join(s.Start(), s.Send(), s.SetSGE(src.LKey, src.Addr, 64), s.Complete()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		err := p.CQ.WaitSolicited(ctx)
		cancel()
		if solicited := flags&mlx.IBV_SEND_SOLICITED != 0; solicited != (err == nil) {
			t.Fatalf("SEND %v: WaitSolicited: %v", flags, err)
		}
		if i == 0 && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("SEND without SOLICITED: WaitSolicited: %v, want the deadline", err)
		}
		got := 0
		for deadline := time.Now().Add(devicetest.PollTimeout); got < 2 && time.Now().Before(deadline); {
			n, err := p.CQ.Poll(wc[got:])
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
		if got != 2 {
			t.Fatalf("SEND %v: %d completions, want the send's and the receive's", flags, got)
		}
	}
}
