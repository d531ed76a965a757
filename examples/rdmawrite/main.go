// Command rdmawrite is the README's complete program: it opens a device,
// registers two buffers, creates a CQ and two RC QPs, connects them to
// each other, posts an RDMA write from one buffer to the other and waits
// for its completion.
//
//	go run ./examples/rdmawrite [-device NAME]
//
// NAME is "sim:..." for the simulated device, or an mlx5 device
// ("mlx5_0"; "" for the first) for the hardware: the same program runs on
// either.
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
	_ "github.com/mlx5gen/mlx5gen/runtime/sim" // the simulated backend
)

func main() {
	name := flag.String("device", "sim:rdmawrite", `the device: "sim:NAME" (simulator) or "mlx5_0" (hardware)`)
	flag.Parse()
	if err := run(*name); err != nil {
		log.Fatal(err)
	}
}

func run(name string) error {
	// Open the device. Closing the context closes everything made on it,
	// newest first.
	ctx, err := device.Open(name)
	if err != nil {
		return err
	}
	defer ctx.Close()
	pd, err := ctx.AllocPD()
	if err != nil {
		return err
	}

	// Memory the device reads and writes: mapped, pinned, never moved by
	// the collector.
	region, err := dma.Map(dma.Options{Size: 1 << 16, Lock: dma.LockBestEffort})
	if err != nil {
		return err
	}
	defer region.Close()
	src, err := region.Alloc(4096, 64)
	if err != nil {
		return err
	}
	dst, err := region.Alloc(4096, 64)
	if err != nil {
		return err
	}
	msg := copy(src.Bytes, "hello, RDMA")
	srcMR, err := pd.RegMR(src.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE)
	if err != nil {
		return err
	}
	dstMR, err := pd.RegMR(dst.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_WRITE)
	if err != nil {
		return err
	}

	// One CQ, and two RC QPs completing to it.
	q, err := ctx.CreateCQ(device.CQConfig{CQEs: 16})
	if err != nil {
		return err
	}
	cfg := device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 16, MaxSendSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}
	a, err := pd.CreateQP(cfg)
	if err != nil {
		return err
	}
	b, err := pd.CreateQP(cfg)
	if err != nil {
		return err
	}

	// Connect them: each side needs the other's QPN, PSN and address
	// (between two machines, exchanged out of band).
	ea, err := a.Endpoint()
	if err != nil {
		return err
	}
	eb, err := b.Endpoint()
	if err != nil {
		return err
	}
	if err := errors.Join(a.Connect(eb), b.Connect(ea)); err != nil {
		return err
	}

	// Post a signaled RDMA write of the message to b's buffer: the writer
	// builds the WQE in the ring and rings the doorbell.
	s := a.SQ()
	s.SetWRID(1)
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := s.Start(); err != nil {
		return err
	}
	// A builder or setter that breaks a rule fails the batch: the calls
	// after it return the same error, and Complete reports it once and
	// posts nothing. So Start's and Complete's errors are the ones to check.
	s.RDMAWrite(dstMR.RKey, dstMR.Addr)
	s.SetSGE(srcMR.LKey, srcMR.Addr, uint32(msg))
	if err := s.Complete(); err != nil {
		return err
	}

	// Wait for its completion, 5 seconds at most: PollWait polls, then
	// backs off (or sleeps on the CQ's completion channel, if it has one)
	// until a completion comes.
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wc := make([]cq.WC, 1)
	if _, err := q.PollWait(wait, wc); err != nil {
		return err
	}
	if err := wc[0].Status.Err(); err != nil {
		return fmt.Errorf("wr_id %d: %w", wc[0].WRID, err)
	}
	fmt.Printf("wr_id %d: %v: %q\n", wc[0].WRID, wc[0].Opcode, dst.Bytes[:msg])
	return nil
}
