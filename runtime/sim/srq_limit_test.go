package sim_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// TestSRQLimit is ibv_modify_srq(3)'s low watermark: an SRQ armed with a
// limit raises IBV_EVENT_SRQ_LIMIT_REACHED, naming the SRQ, once fewer
// work requests than the limit are posted, and only once (it disarms);
// arming it again brings the next one. A limit above max_wr is EINVAL,
// naming the field; max_wr itself is accepted.
func TestSRQLimit(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:srq-limit"))
	defer c.Close()
	p := devicetest.RCPairSRQ(t, c, 8)
	buf := devicetest.Buffer(t, 4096)
	mr := devicetest.Must[*device.MR](t, "RegMR")(p.PD.RegMR(buf, device.DefaultAccess))
	srq := p.SRQ
	if err := srq.ArmLimit(srq.MaxWR() + 1); !errors.Is(err, syscall.EINVAL) || !isField(err, "srq_limit") {
		t.Fatalf("ArmLimit(max_wr + 1): %v, want EINVAL naming srq_limit", err)
	}
	if err := srq.ArmLimit(-1); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("ArmLimit(-1): %v, want EINVAL", err)
	}
	if err := srq.ArmLimit(srq.MaxWR()); err != nil {
		t.Fatalf("ArmLimit(max_wr %d): %v", srq.MaxWR(), err)
	}
	post := func(n int) {
		for i := range n {
			if err := srq.RQ().Post(uint64(i), []rq.SGE{{Addr: mr.Addr, Length: 64, LKey: mr.LKey}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	recv := func(id uint64) { // A sends one message, B takes one WQE
		t.Helper()
		devicetest.Send(t, p.A, id, mr, 8)
		for range 2 { // the send's and the receive's CQEs
			if wc := devicetest.PollOne(t, p.CQ); wc.Status != cq.Success {
				t.Fatalf("message %d: %+v", id, wc)
			}
		}
	}
	post(4)
	if err := srq.ArmLimit(3); err != nil {
		t.Fatal(err)
	}
	recv(1) // 3 posted: not fewer than 3
	noEvent(t, c)
	recv(2) // 2 posted
	ev := nextEvent(t, c, device.AsyncEvent{Type: mlx.IBV_EVENT_SRQ_LIMIT_REACHED, SRQN: srq.SRQN()})
	if want := fmt.Sprintf("(SRQ %#x)", srq.SRQN()); !strings.Contains(ev.String(), want) {
		t.Errorf("the event prints %q, without %q", ev, want)
	}
	recv(3) // disarmed: no second event
	noEvent(t, c)
	if err := srq.ArmLimit(2); err != nil {
		t.Fatal(err)
	}
	post(2) // 3 posted
	recv(4)
	noEvent(t, c)
	recv(5) // 1 posted, below the new limit
	nextEvent(t, c, device.AsyncEvent{Type: mlx.IBV_EVENT_SRQ_LIMIT_REACHED, SRQN: srq.SRQN()})
	if err := srq.ArmLimit(0); err != nil { // 0: unarmed
		t.Fatal(err)
	}
	recv(6)
	noEvent(t, c)
	if err := srq.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srq.ArmLimit(1); !errors.Is(err, device.ErrClosed) {
		t.Fatalf("ArmLimit after Close: %v, want ErrClosed", err)
	}
}

// isField reports whether err is a device.ConfigError naming field.
func isField(err error, field string) bool {
	var ce *device.ConfigError
	return errors.As(err, &ce) && ce.Field == field
}
