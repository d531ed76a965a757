package device_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// TestQPSendOpsByKind: CreateQP refuses, with libmlx5's EOPNOTSUPP and
// naming the field and the bits, the send operations libmlx5 refuses for
// the QP's kind (mlx5_qp_fill_wr_pfns, linux-rdma/rdma-core
// providers/mlx5/qp.c): verbs bits outside the RC/DCI set (an unknown
// bit, TSO, ATOMIC_WRITE) and mlx5dv bits a DCI cannot carry (all but
// RAW_WQE and MEMCPY). Every send operation the kind carries is accepted,
// and nothing refused reaches the backend.
func TestQPSendOpsByKind(t *testing.T) {
	c := openFake(t)
	defer c.Close()
	pd, _ := c.AllocPD()
	q, _ := c.CreateCQ(device.CQConfig{CQEs: 4})
	const rcOps = mlx.IBV_QP_EX_WITH_SEND | mlx.IBV_QP_EX_WITH_SEND_WITH_INV | mlx.IBV_QP_EX_WITH_SEND_WITH_IMM |
		mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | mlx.IBV_QP_EX_WITH_RDMA_READ |
		mlx.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | mlx.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		mlx.IBV_QP_EX_WITH_LOCAL_INV | mlx.IBV_QP_EX_WITH_BIND_MW
	cfg := func(k device.QPKind, ops mlx.IBVQPCreateSendOpsFlags, mops mlx.QPCreateSendOpsFlags) device.QPConfig {
		return device.QPConfig{Kind: k, SendCQ: q, MaxSendWR: 1, SendOps: ops, MlxSendOps: mops}
	}
	for _, good := range []device.QPConfig{
		cfg(device.RC, rcOps, mlx.MLX5DV_QP_EX_WITH_MR_INTERLEAVED|mlx.MLX5DV_QP_EX_WITH_MR_LIST|
			mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE|mlx.MLX5DV_QP_EX_WITH_RAW_WQE|mlx.MLX5DV_QP_EX_WITH_MEMCPY),
		cfg(device.DCI, rcOps, mlx.MLX5DV_QP_EX_WITH_RAW_WQE|mlx.MLX5DV_QP_EX_WITH_MEMCPY),
	} {
		qp, err := pd.CreateQP(good)
		if err != nil {
			t.Fatalf("%v QP with SendOps %v, MlxSendOps %v: %v", good.Kind, good.SendOps, good.MlxSendOps, err)
		}
		qp.Close()
	}
	before := len(lastFake().qps)
	for _, tc := range []struct {
		cfg  device.QPConfig
		want string // the field and the bits outside
	}{
		{cfg(device.RC, mlx.IBV_QP_EX_WITH_RDMA_WRITE|1<<30, 0), "QPConfig.SendOps"},
		{cfg(device.RC, mlx.IBV_QP_EX_WITH_TSO, 0), "QPConfig.SendOps"},
		{cfg(device.DCI, mlx.IBV_QP_EX_WITH_ATOMIC_WRITE, 0), "QPConfig.SendOps"},
		{cfg(device.DCI, mlx.IBV_QP_EX_WITH_RDMA_WRITE, mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE), "QPConfig.MlxSendOps"},
		{cfg(device.DCI, mlx.IBV_QP_EX_WITH_RDMA_WRITE, mlx.MLX5DV_QP_EX_WITH_MR_LIST|mlx.MLX5DV_QP_EX_WITH_RAW_WQE), "QPConfig.MlxSendOps"},
	} {
		_, err := pd.CreateQP(tc.cfg)
		var ce *device.ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.want || !errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EINVAL) {
			t.Errorf("%v QP with SendOps %v, MlxSendOps %v: %v; want a ConfigError of %s wrapping EOPNOTSUPP", tc.cfg.Kind, tc.cfg.SendOps, tc.cfg.MlxSendOps, err, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), "cannot carry") || !strings.Contains(err.Error(), tc.cfg.Kind.String()) {
			t.Errorf("%v: does not say which kind cannot carry the bits", err)
		}
	}
	if n := len(lastFake().qps); n != before {
		t.Errorf("%d refused configurations reached the backend", n-before)
	}
}
