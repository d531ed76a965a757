// Command pingpong bounces a message between two RC QPs with RDMA writes
// with immediate data: each side writes the message into the other's
// buffer and the immediate (the round number) completes a receive there,
// which the other side answers. It reports the mean round trip.
//
//	go run ./examples/pingpong [-device NAME] [-peer NAME] [-rounds N]
//
// By default the two QPs are on two simulated devices ("sim:ping" and
// "sim:pong") joined by the simulator's fabric; give mlx5 devices ("mlx5_0";
// -peer defaults to -device) to run the same program on hardware.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	_ "github.com/mlx5gen/mlx5gen/runtime/device/verbs" // the hardware backend
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	_ "github.com/mlx5gen/mlx5gen/runtime/sim" // the simulated backend
)

func main() {
	dev := flag.String("device", "sim:ping", `the first QP's device: "sim:NAME" (simulator) or "mlx5_0" (hardware)`)
	peer := flag.String("peer", "", "the second QP's device (default: sim:pong with a simulated -device, else -device)")
	rounds := flag.Int("rounds", 1000, "round trips")
	flag.Parse()
	if *peer == "" {
		*peer = *dev
		if *dev == "sim:ping" {
			*peer = "sim:pong"
		}
	}
	rtt, err := run(*dev, *peer, *rounds)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d round trips between %s and %s: %v each\n", *rounds, *dev, *peer, rtt)
}

// end is one side: a device, a buffer registered on it, a CQ and a QP.
type end struct {
	ctx *device.Context
	mr  *device.MR
	cq  *device.CQ
	qp  *device.QP
	wc  []cq.WC
}

func open(name string, buf []byte) (*end, error) {
	ctx, err := device.Open(name)
	if err != nil {
		return nil, err
	}
	e := &end{ctx: ctx, wc: make([]cq.WC, 1)}
	pd, err := ctx.AllocPD()
	if err == nil {
		e.mr, err = pd.RegMR(buf, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_WRITE)
	}
	if err == nil {
		e.cq, err = ctx.CreateCQ(device.CQConfig{CQEs: 16})
	}
	if err == nil {
		e.qp, err = pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: e.cq, MaxSendWR: 4, MaxSendSGE: 1,
			MaxRecvWR: 4, MaxRecvSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM})
	}
	if err != nil {
		ctx.Close()
		return nil, err
	}
	return e, nil
}

func run(devName, peerName string, rounds int) (time.Duration, error) {
	region, err := dma.Map(dma.Options{Size: 1 << 16, Lock: dma.LockBestEffort})
	if err != nil {
		return 0, err
	}
	defer region.Close()
	bufA, _ := region.Alloc(4096, 64)
	bufB, _ := region.Alloc(4096, 64)
	a, err := open(devName, bufA.Bytes)
	if err != nil {
		return 0, err
	}
	defer a.ctx.Close()
	b, err := open(peerName, bufB.Bytes)
	if err != nil {
		return 0, err
	}
	defer b.ctx.Close()
	ea, err1 := a.qp.Endpoint()
	eb, err2 := b.qp.Endpoint()
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	if err := errors.Join(a.qp.Connect(eb), b.qp.Connect(ea)); err != nil {
		return 0, err
	}
	if err := errors.Join(b.recv(), a.recv()); err != nil {
		return 0, err
	}
	// One deadline for the whole run (5 s, and 1 ms a round): a context
	// per wait would cost more than the round trip it times.
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second+time.Duration(rounds)*time.Millisecond)
	defer cancel()
	start := time.Now()
	for i := range rounds {
		msg := fmt.Sprintf("ping %d", i)
		if err := exchange(wait, a, b, msg, uint32(i)); err != nil {
			return 0, err
		}
		if err := exchange(wait, b, a, "pong"+msg[4:], uint32(i)); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / time.Duration(max(rounds, 1)), nil
}

// recv posts a receive: a write with immediate data consumes one.
func (e *end) recv() error { return e.qp.RQ().Post(0, []rq.SGE{}) }

// exchange writes msg from one side into the other's buffer with the
// round as immediate data, and waits for both completions.
func exchange(wait context.Context, from, to *end, msg string, round uint32) error {
	n := copy(from.mr.Bytes(), msg)
	s := from.qp.SQ()
	s.SetWRID(uint64(round))
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := s.Start(); err != nil {
		return err
	}
	// A failing builder or setter fails the batch, and Complete reports
	// that error once, posting nothing.
	s.RDMAWriteImm(to.mr.RKey, to.mr.Addr, mlx.BE32(round))
	s.SetSGE(from.mr.LKey, from.mr.Addr, uint32(n))
	if err := s.Complete(); err != nil {
		return err
	}
	if _, err := from.poll(wait); err != nil {
		return err
	}
	wc, err := to.poll(wait)
	if err != nil {
		return err
	}
	if wc.Opcode != mlx.IBV_WC_RECV_RDMA_WITH_IMM || wc.ByteLen != uint32(n) || string(to.mr.Bytes()[:n]) != msg {
		return fmt.Errorf("round %d: received %v of %d bytes: %q, want %q", round, wc.Opcode, wc.ByteLen, to.mr.Bytes()[:n], msg)
	}
	return to.recv()
}

// poll waits for the next completion of the side's CQ, until wait ends.
func (e *end) poll(wait context.Context) (cq.WC, error) {
	if _, err := e.cq.PollWait(wait, e.wc); err != nil {
		return cq.WC{}, err
	}
	return e.wc[0], e.wc[0].Status.Err()
}
