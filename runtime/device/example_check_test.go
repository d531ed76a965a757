package device_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
)

// ExampleMkey_Check: an initiator on one device RDMA-writes T10-DIF
// protected data through a target's signature mkey on another device.
// The block's guard is wrong. The data still lands, the initiator's
// write completes successfully, and the signature-error completion goes
// to the CQ of the side whose mkey checked the data, the target's: Check
// reports nothing until the target has polled its own CQ.
func ExampleMkey_Check() {
	region, err := dma.Map(dma.Options{Size: 1 << 16, Lock: dma.LockBestEffort})
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	const block, tuple = 512, 8 // data, then guard, application tag, reference tag
	ini := openEnd("sim:example-initiator", region, block+tuple)
	defer ini.ctx.Close()
	tgt := openEnd("sim:example-target", region, block)
	defer tgt.ctx.Close()
	ei, err1 := ini.qp.Endpoint()
	et, err2 := tgt.qp.Endpoint()
	if err := errors.Join(err1, err2, ini.qp.Connect(et), tgt.qp.Connect(ei)); err != nil {
		log.Fatal(err)
	}

	// The target's mkey: remote write, its buffer as the layout, and
	// T10-DIF on the wire side, every field checked; configured by a UMR
	// on the target's own send queue.
	mk, err := tgt.pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 1)
	if err != nil {
		log.Fatal(err)
	}
	dif := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	dif.SetSigDif(&mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, AppTag: 0x5a5a, RefTag: 7})
	q := tgt.qp.SQ()
	q.SetWRFlags(mlx.IBV_SEND_INLINE | mlx.IBV_SEND_SIGNALED)
	if err := q.Start(); err != nil {
		log.Fatal(err)
	}
	q.MkeyConfigure(mk.Mkey(), 3, &mlx.MkeyConfAttr{})
	q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_WRITE)
	q.SetMkeyLayoutList([]mlx.SGE{{Addr: tgt.mr.Addr, Length: block, LKey: tgt.mr.LKey}})
	q.SetMkeySigBlock(&mlx.SigBlockAttr{Wire: dif, CheckMask: 0xff})
	if err := errors.Join(q.Complete(), tgt.wait()); err != nil {
		log.Fatal(err)
	}

	// The initiator's block on the wire: the tags right, the guard 0
	// (the CRC of 512 zero bytes, so the data is not).
	wire := ini.mr.Bytes()
	copy(wire, "a block of data whose guard was lost")
	binary.BigEndian.PutUint16(wire[block:], 0)
	binary.BigEndian.PutUint16(wire[block+2:], 0x5a5a)
	binary.BigEndian.PutUint32(wire[block+4:], 7)
	s := ini.qp.SQ()
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := s.Start(); err != nil {
		log.Fatal(err)
	}
	s.RDMAWrite(mk.LKey(), 0) // the mkey's address space starts at 0
	s.SetSGE(ini.mr.LKey, ini.mr.Addr, block+tuple)
	if err := errors.Join(s.Complete(), ini.wait()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("initiator: the write completed")

	e, _ := mk.Check()
	fmt.Println("before the target polls:", e.Type)
	wc := make([]cq.WC, 4)
	n, err := tgt.cq.Poll(wc) // consumes the signature-error CQE: no work completion
	if err != nil {
		log.Fatal(err)
	}
	e, err = mk.Check()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("after the target polled (%d completions): %v: the wire says %#x, the data's CRC is %#x, block at wire offset %d\n",
		n, e.Type, e.Expected, e.Actual, e.Offset)
	e, _ = mk.Check()
	fmt.Println("once reported:", e.Type)
	// Output:
	// initiator: the write completed
	// before the target polls: MLX5DV_MKEY_NO_ERR
	// after the target polled (0 completions): MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD: the wire says 0x0, the data's CRC is 0x147, block at wire offset 0
	// once reported: MLX5DV_MKEY_NO_ERR
}

// end is one side of ExampleMkey_Check: a device, a buffer of size bytes
// registered on it, a CQ and an RC QP that can write and configure mkeys.
type end struct {
	ctx *device.Context
	pd  *device.PD
	mr  *device.MR
	cq  *device.CQ
	qp  *device.QP
}

func openEnd(name string, region *dma.Region, size int) *end {
	ctx, err := device.Open(name)
	if err != nil {
		log.Fatal(err)
	}
	e := &end{ctx: ctx}
	buf, err := region.Alloc(size, 64)
	if err == nil {
		e.pd, err = ctx.AllocPD()
	}
	if err == nil {
		e.mr, err = e.pd.RegMR(buf.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE)
	}
	if err == nil {
		e.cq, err = ctx.CreateCQ(device.CQConfig{CQEs: 16})
	}
	if err == nil {
		e.qp, err = e.pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: e.cq, MaxSendWR: 8, MaxSendSGE: 1,
			MaxInlineData: 256, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE})
	}
	if err != nil {
		log.Fatal(err)
	}
	return e
}

// wait waits (5 s at most) for the side's next completion and returns
// its error.
func (e *end) wait() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wc := make([]cq.WC, 1)
	if _, err := e.cq.PollWait(ctx, wc); err != nil {
		return err
	}
	return wc[0].Status.Err()
}
