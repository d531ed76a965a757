package cq_test

import (
	"errors"
	"fmt"
	"log"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	_ "github.com/mlx5gen/mlx5gen/runtime/sim" // the simulated backend
)

// Example_errorCompletion posts two RDMA writes on the simulated device,
// the first to a key without remote write access. The device fails it
// with an error completion and moves the QP to the error state, which
// flushes the second: the poller reports both, with the syndrome of the
// first and the opcode it posted, and Status.Err as an error.
func Example_errorCompletion() {
	ctx, err := device.Open("sim:example-cq")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	region, err := dma.Map(dma.Options{Size: 1 << 16, Lock: dma.LockBestEffort})
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	pd, err := ctx.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	buf, _ := region.Alloc(4096, 64)
	mr, err1 := pd.RegMR(buf.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE) // no remote write
	c, err2 := ctx.CreateCQ(device.CQConfig{CQEs: 16})
	if err := errors.Join(err1, err2); err != nil {
		log.Fatal(err)
	}
	qp, err := pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: c, MaxSendWR: 8, MaxSendSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE})
	if err != nil {
		log.Fatal(err)
	}
	ep, err := qp.Endpoint()
	if err == nil {
		err = qp.Connect(ep) // to itself
	}
	if err != nil {
		log.Fatal(err)
	}
	s := qp.SQ()
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := s.Start(); err != nil {
		log.Fatal(err)
	}
	for id := uint64(1); id <= 2; id++ {
		s.SetWRID(id)
		s.RDMAWrite(mr.RKey, mr.Addr+2048)
		s.SetSGE(mr.LKey, mr.Addr, 64)
	}
	if err := s.Complete(); err != nil {
		log.Fatal(err)
	}

	wc := make([]cq.WC, 4)
	for got := 0; got < 2; {
		n, err := c.Poll(wc) // each poll runs the simulated device a step
		if err != nil {
			log.Fatal(err)
		}
		for _, w := range wc[:n] {
			fmt.Printf("wr_id %d: %v, posted %v, syndrome %v\n", w.WRID, w.Status, mlx.Opcode(w.PostedOpcode), mlx.CQESyndrome(w.Syndrome))
			fmt.Println("  ", w.Status.Err())
		}
		got += n
	}
	fmt.Println(qp.State())
	// Output:
	// wr_id 1: IBV_WC_REM_ACCESS_ERR, posted MLX5_OPCODE_RDMA_WRITE, syndrome MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR
	//    work completion IBV_WC_REM_ACCESS_ERR (vendor error 0x0)
	// wr_id 2: IBV_WC_WR_FLUSH_ERR, posted MLX5_OPCODE_RDMA_WRITE, syndrome MLX5_CQE_SYNDROME_WR_FLUSH_ERR
	//    work completion IBV_WC_WR_FLUSH_ERR (vendor error 0x0)
	// IBV_QPS_ERR
}
