package device_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	_ "github.com/mlx5gen/mlx5gen/runtime/sim" // the simulated backend: "sim:..." names
)

// Example opens a simulated device, connects two RC QPs of it, RDMA-writes
// a message from one registered buffer to the other and polls the
// completion: the same code runs on an mlx5 card, opened as "mlx5_0"
// with runtime/device/verbs imported.
func Example() {
	ctx, err := device.Open("sim:example-device")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close() // closes the PD, MRs, CQ and QPs too, newest first
	region, err := dma.Map(dma.Options{Size: 1 << 16, Lock: dma.LockBestEffort})
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	pd, err := ctx.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	src, _ := region.Alloc(4096, 64)
	dst, _ := region.Alloc(4096, 64)
	n := copy(src.Bytes, "written by the device")
	srcMR, err1 := pd.RegMR(src.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE)
	dstMR, err2 := pd.RegMR(dst.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_WRITE)
	c, err3 := ctx.CreateCQ(device.CQConfig{CQEs: 16})
	if err := errors.Join(err1, err2, err3); err != nil {
		log.Fatal(err)
	}
	cfg := device.QPConfig{Kind: device.RC, SendCQ: c, MaxSendWR: 16, MaxSendSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}
	a, err1 := pd.CreateQP(cfg)
	b, err2 := pd.CreateQP(cfg)
	if err := errors.Join(err1, err2); err != nil {
		log.Fatal(err)
	}
	ea, err1 := a.Endpoint()
	eb, err2 := b.Endpoint()
	if err := errors.Join(err1, err2, a.Connect(eb), b.Connect(ea)); err != nil {
		log.Fatal(err)
	}

	s := a.SQ()
	s.SetWRID(1)
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := s.Start(); err != nil {
		log.Fatal(err)
	}
	s.RDMAWrite(dstMR.RKey, dstMR.Addr) // an error here comes back from Complete
	s.SetSGE(srcMR.LKey, srcMR.Addr, uint32(n))
	if err := s.Complete(); err != nil {
		log.Fatal(err)
	}
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wc := make([]cq.WC, 1)
	if _, err := c.PollWait(wait, wc); err != nil {
		log.Fatal(err)
	}
	fmt.Println(wc[0].WRID, wc[0].Opcode, wc[0].Status.Err())
	fmt.Printf("%q\n", dst.Bytes[:n])
	// Output:
	// 1 IBV_WC_RDMA_WRITE <nil>
	// "written by the device"
}
