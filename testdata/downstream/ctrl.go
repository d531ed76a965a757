package downstream

import "example.com/downstream/mlx5dv"

// RDMAWriteCtrl writes the control segment of an RDMA write WQE of ds
// 16-byte units at producer index pi, asking for a completion.
func RDMAWriteCtrl(c *mlx5dv.Mlx5WqeCtrlSeg, pi uint16, qpn uint32, ds uint8) {
	c.SetOpmodIdxOpcode(uint32(pi)<<8 | uint32(mlx5dv.MLX5_OPCODE_RDMA_WRITE))
	c.SetQpnDs(qpn<<8 | uint32(ds))
	c.SetFmCeSe(mlx5dv.MLX5_WQE_CTRL_CQ_UPDATE)
}
