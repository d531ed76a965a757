package sim_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// TestCreateFlagsNotModelled: a QP asking for a create flag whose
// behaviour the simulator lacks (SIG_PIPELINING's drain on a signature
// error, rdma-core tests/test_mlx5_mkey.py test_mkey_sig_pipelining_bad)
// is refused with errors.ErrUnsupported naming the flag, not created to
// behave otherwise: a *device.ConfigError of QPConfig.CreateFlags wrapping
// EOPNOTSUPP, like every refused configuration (FuzzConfigs found the
// plain error); the flags that change nothing a program sees are taken.
func TestCreateFlagsNotModelled(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:createflags"))
	defer c.Close()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	q := devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	cfg := func(f mlx.QPCreateFlags) device.QPConfig {
		return device.QPConfig{Kind: device.RC, SendCQ: q, RecvCQ: q, MaxSendWR: 4, MaxRecvWR: 4,
			MaxSendSGE: 1, MaxRecvSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_SEND, CreateFlags: f}
	}
	for _, f := range []mlx.QPCreateFlags{mlx.MLX5DV_QP_CREATE_SIG_PIPELINING, mlx.MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC} {
		_, err := pd.CreateQP(cfg(f))
		var ce *device.ConfigError
		if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, syscall.EOPNOTSUPP) || !strings.Contains(err.Error(), f.String()) ||
			!errors.As(err, &ce) || ce.Field != "QPConfig.CreateFlags" {
			t.Fatalf("create flags %v: %v, want a ConfigError of QPConfig.CreateFlags naming the flag, EOPNOTSUPP (errors.ErrUnsupported)", f, err)
		}
	}
	for _, f := range []mlx.QPCreateFlags{0, mlx.MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE,
		mlx.MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE, mlx.MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE} {
		qp, err := pd.CreateQP(cfg(f))
		if err != nil {
			t.Fatalf("create flags %#x: %v", uint32(f), err)
		}
		qp.Close()
	}
}
