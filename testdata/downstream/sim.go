package downstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"example.com/downstream/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	_ "github.com/mlx5gen/mlx5gen/runtime/sim" // the simulated backend: device.Open("sim:...")
)

// WriteOnDevice opens device name, connects two RC QPs of it and
// RDMA-writes msg from a buffer of the first into one of the second
// through runtime/sq, with this module's constants; it returns what the
// second buffer holds once the write completed.
func WriteOnDevice(name, msg string) (string, error) {
	ctx, err := device.Open(name)
	if err != nil {
		return "", err
	}
	defer ctx.Close() // closes everything made on it
	region, err := dma.Map(dma.Options{Size: 1 << 16, Lock: dma.LockBestEffort})
	if err != nil {
		return "", err
	}
	defer region.Close()
	pd, err := ctx.AllocPD()
	if err != nil {
		return "", err
	}
	src, err1 := region.Alloc(4096, 64)
	dst, err2 := region.Alloc(4096, 64)
	if err := errors.Join(err1, err2); err != nil {
		return "", err
	}
	n := copy(src.Bytes, msg)
	srcMR, err1 := pd.RegMR(src.Bytes, mlx5dv.IBV_ACCESS_LOCAL_WRITE)
	dstMR, err2 := pd.RegMR(dst.Bytes, mlx5dv.IBV_ACCESS_LOCAL_WRITE|mlx5dv.IBV_ACCESS_REMOTE_WRITE)
	c, err3 := ctx.CreateCQ(device.CQConfig{CQEs: 16})
	if err := errors.Join(err1, err2, err3); err != nil {
		return "", err
	}
	cfg := device.QPConfig{Kind: device.RC, SendCQ: c, MaxSendWR: 16, MaxSendSGE: 1,
		SendOps: mlx5dv.IBV_QP_EX_WITH_RDMA_WRITE}
	a, err1 := pd.CreateQP(cfg)
	b, err2 := pd.CreateQP(cfg)
	if err := errors.Join(err1, err2); err != nil {
		return "", err
	}
	ea, err1 := a.Endpoint()
	eb, err2 := b.Endpoint()
	if err := errors.Join(err1, err2); err != nil {
		return "", err
	}
	if err := errors.Join(a.Connect(eb), b.Connect(ea)); err != nil {
		return "", err
	}
	// The same call the qmem test makes: runtime/sq's writer, handed out
	// by the QP over the device's queue memory.
	if err := WriteSignaled(a.SQ(), 1, srcMR.LKey, srcMR.Addr, uint32(n), dstMR.RKey, dstMR.Addr); err != nil {
		return "", err
	}
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wc := make([]cq.WC, 1)
	if _, err := c.PollWait(wait, wc); err != nil {
		return "", err
	}
	if err := wc[0].Status.Err(); err != nil {
		return "", err
	}
	if wc[0].Opcode != mlx5dv.IBV_WC_RDMA_WRITE {
		return "", fmt.Errorf("completion of %v, want IBV_WC_RDMA_WRITE", wc[0].Opcode)
	}
	return string(dst.Bytes[:n]), nil
}
