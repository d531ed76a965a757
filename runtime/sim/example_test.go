package sim_test

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
	"github.com/mlx5gen/mlx5gen/runtime/sim"
	"github.com/mlx5gen/mlx5gen/runtime/sim/engine"
)

// Example opens two simulated devices, which the process's fabric joins,
// connects a QP of each to the other and RDMA-writes into a buffer of the
// second that was registered without remote write access. The device
// fails the work request as hardware does (a remote access error, and
// the QP moves to the error state); Fabric().Trace says why, which the
// CQE's syndrome alone does not.
func Example() {
	sim.Fabric().Lock()
	sim.Fabric().Trace = func(e engine.WQEError) { fmt.Println("trace:", e.Why) }
	sim.Fabric().Unlock()
	defer func() {
		sim.Fabric().Lock()
		sim.Fabric().Trace = nil
		sim.Fabric().Unlock()
	}()

	region, err := dma.Map(dma.Options{Size: 1 << 16, Lock: dma.LockBestEffort})
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	a := exOpen("sim:example-a", region, mlx.IBV_ACCESS_LOCAL_WRITE)
	defer a.ctx.Close()
	b := exOpen("sim:example-b", region, mlx.IBV_ACCESS_LOCAL_WRITE) // no IBV_ACCESS_REMOTE_WRITE
	defer b.ctx.Close()
	ea, err1 := a.qp.Endpoint()
	eb, err2 := b.qp.Endpoint()
	if err := errors.Join(err1, err2, a.qp.Connect(eb), b.qp.Connect(ea)); err != nil {
		log.Fatal(err)
	}
	fmt.Println("on the fabric:", sim.Fabric().Device("example-a").Name(), sim.Fabric().Device("example-b").Name())

	s := a.qp.SQ()
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := s.Start(); err != nil {
		log.Fatal(err)
	}
	s.RDMAWrite(b.mr.RKey, b.mr.Addr)
	s.SetSGE(a.mr.LKey, a.mr.Addr, 64)
	if err := s.Complete(); err != nil {
		log.Fatal(err)
	}
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wc := make([]cq.WC, 1)
	if _, err := a.cq.PollWait(wait, wc); err != nil { // the engine runs as a polls
		log.Fatal(err)
	}
	st := a.qp.State()
	fmt.Println(wc[0].Status, st)
	// Output:
	// on the fabric: example-a example-b
	// trace: the key lacks the access rights
	// IBV_WC_REM_ACCESS_ERR IBV_QPS_ERR
}

// exEnd is a device with a registered 4 KiB buffer, a CQ and an RC QP.
type exEnd struct {
	ctx *device.Context
	mr  *device.MR
	cq  *device.CQ
	qp  *device.QP
}

func exOpen(name string, region *dma.Region, access mlx.AccessFlags) *exEnd {
	ctx, err := device.Open(name)
	if err != nil {
		log.Fatal(err)
	}
	e := &exEnd{ctx: ctx}
	pd, err := ctx.AllocPD()
	buf, err2 := region.Alloc(4096, 64)
	if err = errors.Join(err, err2); err == nil {
		e.mr, err = pd.RegMR(buf.Bytes, access)
	}
	if err == nil {
		e.cq, err = ctx.CreateCQ(device.CQConfig{CQEs: 16})
	}
	if err == nil {
		e.qp, err = pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: e.cq, MaxSendWR: 8, MaxSendSGE: 1,
			MaxRecvWR: 8, MaxRecvSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_SEND})
	}
	if err != nil {
		log.Fatal(err)
	}
	return e
}
