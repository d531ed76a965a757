package rq_test

import (
	"errors"
	"fmt"
	"log"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	_ "github.com/mlx5gen/mlx5gen/runtime/sim" // the simulated backend
)

// Example_sendRecv posts two receives, with one call, on a QP of the
// simulated device, and SENDs two messages to it: each SEND lands in the
// next receive's buffer, and its completion on the receiving side gives
// the receive's wr_id and the bytes that landed.
func Example_sendRecv() {
	ctx, err := device.Open("sim:example-rq")
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
	mr, err1 := pd.RegMR(buf.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE)
	c, err2 := ctx.CreateCQ(device.CQConfig{CQEs: 16})
	if err := errors.Join(err1, err2); err != nil {
		log.Fatal(err)
	}
	qp, err := pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: c, MaxSendWR: 8, MaxSendSGE: 1,
		MaxRecvWR: 8, MaxRecvSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_SEND})
	if err != nil {
		log.Fatal(err)
	}
	ep, err := qp.Endpoint()
	if err == nil {
		err = qp.Connect(ep) // to itself: its SENDs come back to its receive queue
	}
	if err != nil {
		log.Fatal(err)
	}

	// Two receives: 1 KiB at offset 1024, and 1 KiB at 2048 (ibv_post_recv).
	recv := func(off int) []rq.SGE {
		return []rq.SGE{{Addr: mr.Addr + uint64(off), Length: 1024, LKey: mr.LKey}}
	}
	if n, err := qp.RQ().PostList([]rq.RecvWR{{WRID: 100, SGEs: recv(1024)}, {WRID: 200, SGEs: recv(2048)}}); err != nil {
		log.Fatal(n, err)
	}
	s := qp.SQ()
	for i, msg := range []string{"first", "second message"} {
		copy(buf.Bytes[i*64:], msg)
		if err := s.Start(); err != nil {
			log.Fatal(err)
		}
		s.SetWRID(uint64(i))
		s.Send()
		s.SetSGE(mr.LKey, mr.Addr+uint64(i*64), uint32(len(msg)))
		if err := s.Complete(); err != nil {
			log.Fatal(err)
		}
	}

	wc := make([]cq.WC, 4)
	for got := 0; got < 2; {
		n, err := c.Poll(wc) // unsignaled SENDs: only the receives complete
		if err != nil {
			log.Fatal(err)
		}
		for _, w := range wc[:n] {
			off := map[uint64]int{100: 1024, 200: 2048}[w.WRID]
			fmt.Printf("wr_id %d: %v, %d bytes: %q\n", w.WRID, w.Opcode, w.ByteLen, buf.Bytes[off:off+int(w.ByteLen)])
		}
		got += n
	}
	// Output:
	// wr_id 100: IBV_WC_RECV, 5 bytes: "first"
	// wr_id 200: IBV_WC_RECV, 14 bytes: "second message"
}
