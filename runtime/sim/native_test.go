package sim_test

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// TestNativeRefused: the simulator has no libibverbs object behind its
// context, PD, CQ, QP or SRQ, so Native refuses each with ErrNoNative
// (errors.ErrUnsupported): a program that calls a generated binding the
// device API does not wrap learns it needs the hardware backend.
func TestNativeRefused(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:native"))
	defer c.Close()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	cq := devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 8}))
	qp := devicetest.Must[*device.QP](t, "CreateQP")(pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: cq, RecvCQ: cq,
		MaxSendWR: 4, MaxSendSGE: 1, MaxRecvWR: 4, MaxRecvSGE: 1}))
	srq := devicetest.Must[*device.SRQ](t, "CreateSRQ")(pd.CreateSRQ(device.SRQConfig{MaxWR: 4, MaxSGE: 1}))
	for name, f := range map[string]func() (unsafe.Pointer, error){
		"Context": c.Native, "PD": pd.Native, "CQ": cq.Native, "QP": qp.Native, "SRQ": srq.Native,
	} {
		if p, err := f(); p != nil || !errors.Is(err, device.ErrNoNative) || !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s.Native: %p, %v; want ErrNoNative", name, p, err)
		}
	}
}

// TestFlowSteeringRefused: the simulator's fabric carries RDMA operations,
// not packets, so it has no flow tables; CreateFlowMatcher says so with
// ErrNoFlowSteering (errors.ErrUnsupported) after the configuration's
// own checks.
func TestFlowSteeringRefused(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:flow"))
	defer c.Close()
	m, err := c.CreateFlowMatcher(device.FlowMatcherConfig{Mask: make([]byte, 8)})
	if m != nil || !errors.Is(err, device.ErrNoFlowSteering) || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("CreateFlowMatcher: %v, %v; want ErrNoFlowSteering", m, err)
	}
	var ce *device.ConfigError
	if _, err := c.CreateFlowMatcher(device.FlowMatcherConfig{}); !errors.As(err, &ce) {
		t.Fatalf("an empty mask: %v, want the ConfigError before the backend's refusal", err)
	}
}
