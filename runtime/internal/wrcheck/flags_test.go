package wrcheck_test

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// The send operations the tests' QPs are created with: every builder of
// ibv_wr_post(3) and of mlx5dv_wr_post(3) on an RC QP.
const (
	rcSendOps = mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | mlx.IBV_QP_EX_WITH_SEND |
		mlx.IBV_QP_EX_WITH_SEND_WITH_IMM | mlx.IBV_QP_EX_WITH_RDMA_READ | mlx.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		mlx.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | mlx.IBV_QP_EX_WITH_LOCAL_INV | mlx.IBV_QP_EX_WITH_BIND_MW |
		mlx.IBV_QP_EX_WITH_SEND_WITH_INV
	rcMlxSendOps = mlx.MLX5DV_QP_EX_WITH_MR_INTERLEAVED | mlx.MLX5DV_QP_EX_WITH_MR_LIST |
		mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE | mlx.MLX5DV_QP_EX_WITH_RAW_WQE | mlx.MLX5DV_QP_EX_WITH_MEMCPY
)
