package device_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// TestArmLimitChecks: SRQ.ArmLimit refuses a limit outside 0..MaxWR with
// EINVAL naming srq_limit before the backend sees it, and on a backend
// that cannot arm a limit (the fake) fails with errors.ErrUnsupported.
func TestArmLimitChecks(t *testing.T) {
	c := openFake(t)
	defer c.Close()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	s := devicetest.Must[*device.SRQ](t, "CreateSRQ")(pd.CreateSRQ(device.SRQConfig{MaxWR: 4, MaxSGE: 1}))
	for _, l := range []int{-1, s.MaxWR() + 1} {
		if err := s.ArmLimit(l); !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "srq_limit") {
			t.Errorf("ArmLimit(%d) of an SRQ of %d: %v, want EINVAL naming srq_limit", l, s.MaxWR(), err)
		}
	}
	if err := s.ArmLimit(s.MaxWR()); !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "ibv_modify_srq") {
		t.Errorf("ArmLimit on a backend without SRQLimiter: %v, want ErrUnsupported naming ibv_modify_srq", err)
	}
}

// TestResetStreamChecks: QP.ResetStream refuses an RC QP and a DCI
// without streams, naming the QP, before the backend sees them, and a
// closed QP (runtime/sim's TestDCIStreamReset covers the rest).
func TestResetStreamChecks(t *testing.T) {
	c := openFake(t)
	defer c.Close()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	q := devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 4}))
	rc := devicetest.Must[*device.QP](t, "CreateQP")(pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 1}))
	if err := rc.ResetStream(0); !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "qp RC") {
		t.Errorf("ResetStream of an RC QP: %v, want EINVAL naming the QP", err)
	}
	dci := devicetest.Must[*device.QP](t, "CreateQP")(pd.CreateQP(device.QPConfig{Kind: device.DCI, SendCQ: q, MaxSendWR: 1}))
	if err := dci.ResetStream(0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("ResetStream of a DCI without streams: %v, want EINVAL", err)
	}
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rc.ResetStream(0); !errors.Is(err, device.ErrClosed) {
		t.Errorf("ResetStream after Close: %v, want ErrClosed", err)
	}
}
