package cq_test

import (
	"encoding/binary"
	"fmt"
	"log"

	"github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// Example posts a signaled RDMA write, plays the device by writing its
// CQE, and polls the completion, which gives the ring room back.
func Example() {
	mem, err := qmem.Plain(8, 8, 0) // 8 WQEBBs, 8 CQEs, no BlueFlame
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	cq.InitBuffer(mem) // every CQE invalid, as mlx5_alloc_cq_buf leaves them
	q, err := sq.New(sq.Config{Mem: mem, QPN: 0x1234, QP: sq.QP{
		Type: mlx5dv.QPRC, SendOps: mlx5dv.IBV_QP_EX_WITH_RDMA_WRITE, MaxSendSGE: 1}})
	if err != nil {
		log.Fatal(err)
	}
	c, err := cq.New(cq.Config{Mem: mem, CQN: 1})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.AddQP(&cq.QP{QPN: 0x1234, RC: true, SQ: cq.SQ{Q: q, Mem: mem}}); err != nil {
		log.Fatal(err)
	}

	// Post.
	q.SetWRID(7)
	q.SetWRFlags(mlx5dv.IBV_SEND_SIGNALED)
	q.Start()
	q.RDMAWrite(0x11223344, 0x0102030405060708)
	q.SetSGE(0x55667788, 0x1112131415161718, 0x1000)
	if err := q.Complete(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("outstanding:", q.Outstanding())

	// The device writes a requester CQE for WQE 0 (owner bit 0: first pass).
	cqe := mem.CQ[0:64]
	binary.BigEndian.PutUint32(cqe[56:60], uint32(mlx5dv.MLX5_OPCODE_RDMA_WRITE)<<24|0x1234)
	binary.BigEndian.PutUint16(cqe[60:62], 0) // wqe_counter
	cqe[63] = uint8(mlx5dv.MLX5_CQE_REQ) << 4

	// Poll.
	wc := make([]cq.WC, 16)
	n, err := c.Poll(wc)
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range wc[:n] {
		fmt.Println(w.WRID, w.Status, w.Opcode, w.Status.Err())
	}
	fmt.Println("outstanding:", q.Outstanding(), "consumer index in the doorbell record:", binary.BigEndian.Uint32(mem.CQDBR[0:4]))

	// Output:
	// outstanding: 1
	// 7 IBV_WC_SUCCESS IBV_WC_RDMA_WRITE <nil>
	// outstanding: 0 consumer index in the doorbell record: 1
}
