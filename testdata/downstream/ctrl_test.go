package downstream

import (
	"bytes"
	"testing"

	"example.com/downstream/mlx5dv"
)

func TestRDMAWriteCtrl(t *testing.T) {
	var c mlx5dv.Mlx5WqeCtrlSeg
	RDMAWriteCtrl(&c, 7, 0x1234, 3)
	want := []byte{0, 0, 7, 8, 0, 0x12, 0x34, 3, 0, 0, 0, 8, 0, 0, 0, 0}
	if !bytes.Equal(c[:], want) {
		t.Fatalf("ctrl segment %x, want %x", c[:], want)
	}
	if c.Opcode() != mlx5dv.MLX5_OPCODE_RDMA_WRITE || c.Ds() != 3 {
		t.Fatalf("decoded %v", c.String())
	}
	if mlx5dv.MLX5_SEND_WQE_BB != 64 {
		t.Fatalf("MLX5_SEND_WQE_BB = %d", mlx5dv.MLX5_SEND_WQE_BB)
	}
}
