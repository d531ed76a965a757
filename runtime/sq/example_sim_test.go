package sq_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	dev "github.com/mlx5gen/mlx5gen/runtime/device" // sq_test has a device of its own
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	_ "github.com/mlx5gen/mlx5gen/runtime/sim" // the simulated backend
)

// Example_batchErrors: the first builder or setter of a batch that breaks
// a rule fails the batch. Every later call of the batch returns that same
// error, and Complete returns it again and posts nothing, so joining the
// results of every call reports one failure several times. Check Start
// and Complete instead: each failure is reported once. Runs on the
// simulated device, whose QP here offers RDMA writes and not SENDs.
func Example_batchErrors() {
	ctx, err := dev.Open("sim:example-sq")
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
	mr, err1 := pd.RegMR(buf.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_WRITE)
	c, err2 := ctx.CreateCQ(dev.CQConfig{CQEs: 16})
	if err := errors.Join(err1, err2); err != nil {
		log.Fatal(err)
	}
	qp, err := pd.CreateQP(dev.QPConfig{Kind: dev.RC, SendCQ: c, MaxSendWR: 8, MaxSendSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE})
	if err != nil {
		log.Fatal(err)
	}
	ep, err := qp.Endpoint()
	if err == nil {
		err = qp.Connect(ep) // to itself: one QP is enough for a write
	}
	if err != nil {
		log.Fatal(err)
	}
	s := qp.SQ()

	// post posts one work request, reporting each failure once.
	post := func(build func() error) error {
		s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		if err := s.Start(); err != nil {
			return err // no batch is open: nothing to abort
		}
		build()                            // its error, if any, comes back from Complete
		s.SetSGE(mr.LKey, mr.Addr+2048, 5) // so does this one's
		return s.Complete()                // the batch's first error, once; nothing posted then
	}

	copy(buf.Bytes[2048:], "hello")
	err = post(s.Send) // the QP was not created with IBV_QP_EX_WITH_SEND
	var re *mlx.RuleError
	fmt.Println("send:", errors.As(err, &re), re.Func, re.Rule)
	fmt.Println(err)
	// The same batch with every call's error joined: the one failure,
	// three times.
	joined := errors.Join(s.Start(), s.Send(), s.SetSGE(mr.LKey, mr.Addr, 5), s.Complete())
	fmt.Println("joined:", strings.Count(joined.Error(), err.Error()), "copies")

	err = post(func() error { return s.RDMAWrite(mr.RKey, mr.Addr) })
	fmt.Println("write:", err)
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wc := make([]cq.WC, 1)
	if _, err := c.PollWait(wait, wc); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%v %v %q\n", wc[0].Opcode, wc[0].Status.Err(), buf.Bytes[:5])
	// Output:
	// send: true ibv_wr_send ibv_wr.send_ops
	// work request 0: ibv_wr_send: send_ops_flags 0x1 (IBV_QP_EX_WITH_RDMA_WRITE) lacks 0x4 (IBV_QP_EX_WITH_SEND): The QP is created with ibv_create_qp_ex and IBV_QP_INIT_ATTR_SEND_OPS_FLAGS in comp_mask, and its send_ops_flags name every kind of work request that will be posted on it; a builder whose bit is missing may not be used. (rule ibv_wr.send_ops, ibv_wr_post(3))
	// joined: 3 copies
	// write: <nil>
	// IBV_WC_RDMA_WRITE <nil> "hello"
}
