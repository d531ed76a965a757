package mkey_test

import (
	"encoding/binary"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sim/mkey"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// An mkey configured by the UMR runtime/sq writes: the engine hands the
// WQE's bytes to ExecUMR, then moves data through the mkey.
func Example() {
	mem := newMemory()
	a, b := make([]byte, 4), make([]byte, 4)
	ka, kb := mem.reg(0x1000, a, rw), mem.reg(0x2000, b, rw)
	tab := mkey.NewTable(mem)
	lkey, _ := tab.Create(1, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 2)

	ring, _ := qmem.New(qmem.Options{WQEBBs: 8, Lock: dma.LockBestEffort})
	defer ring.Close()
	q, _ := sq.New(sq.Config{Mem: ring, QPN: 1, QP: sq.QP{Type: mlx.QPRC, MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MR_LIST, MaxInlineData: 64}})
	q.Start()
	q.SetWRFlags(mlx.IBV_SEND_INLINE)
	err := q.MRList(sq.NewMkey(lkey, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 2), mlx.IBV_ACCESS_REMOTE_WRITE|mlx.IBV_ACCESS_REMOTE_READ,
		[]mlx.SGE{{Addr: 0x1000, Length: 4, LKey: ka}, {Addr: 0x2000, Length: 4, LKey: kb}})
	if err == nil {
		err = q.Complete()
	}
	ds := binary.BigEndian.Uint32(ring.SQ[4:]) & 0x3f
	if err == nil {
		err = tab.ExecUMR(ring.SQ[:ds*16])
	}
	if err == nil {
		err = tab.Scatter(lkey, 2, []byte("wxyz"), true) // a remote RDMA WRITE at offset 2
	}
	out, _ := tab.Gather(lkey, 0, 8, true, nil)
	fmt.Printf("%v %q %q %q\n", err, a, b, out)
	// Output: <nil> "\x00\x00wx" "yz\x00\x00" "\x00\x00wxyz\x00\x00"
}
