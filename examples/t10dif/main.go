// Command t10dif writes T10-DIF protected data: a target registers an
// indirect mkey whose wire domain carries T10-DIF every 4 KiB (a CRC16
// guard, an application tag, a reference tag counting blocks), and an
// initiator RDMA-writes data with those fields through it; the device
// checks them and strips them, so the target's memory holds the data
// alone. A corrupted block still lands, and mlx5dv_mkey_check reports the
// failed guard with the expected and actual values and the offset.
//
// The initiator's write completes successfully either way: the
// signature-error completion goes to the CQ of the side whose mkey
// checked the data, the target's, which must be polled before the check.
// Here both QPs share one CQ of one device, so the initiator's poll
// consumes it too; runtime/device's ExampleMkey_Check has the two sides on
// two devices.
//
//	go run ./examples/t10dif [-device NAME]
//
// NAME is "sim:..." for the simulated device (the default), or an mlx5
// card (-device mlx5_0). libmlx5 keeps a signature mkey's PSV indexes,
// which its SET_PSV work requests need, private; so runtime/device
// creates the mkey and its two PSVs itself with DEVX commands (CREATE_PSV,
// CREATE_MKEY), the same bytes on the simulator and on hardware, after
// QUERY_HCA_CAP says the device has block signature offload. The card
// must allow DEVX (the kernel's MLX5DV_CONTEXT_FLAGS_DEVX); no run on a
// ConnectX is on record.
package main

import (
	"context"
	"encoding/binary"
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

const (
	block    = 4096
	blocks   = 2
	tuple    = 8 // guard, application tag, reference tag
	appTag   = 0x5a5a
	firstRef = 0x1000
)

func main() {
	name := flag.String("device", "sim:t10dif", `the device: "sim:NAME" (simulator) or "mlx5_0" (hardware)`)
	flag.Parse()
	if err := run(*name); err != nil {
		log.Fatal(err)
	}
}

// setup is the target's memory and mkey, the initiator's wire buffer, and
// two RC QPs of one device connected to each other.
type setup struct {
	ctx          *device.Context
	pd           *device.PD
	cq           *device.CQ
	init, target *device.QP
	data, wire   *device.MR
	mk           *device.Mkey
}

func run(name string) error {
	region, err := dma.Map(dma.Options{Size: 1 << 16, Lock: dma.LockBestEffort})
	if err != nil {
		return err
	}
	defer region.Close()
	s, err := open(name, region)
	if err != nil {
		return err
	}
	defer s.ctx.Close()
	if err := s.configure(); err != nil {
		return err
	}
	data := make([]byte, blocks*block)
	for i := range data {
		data[i] = byte(i*31 + i>>8)
	}
	protect(s.wire.Bytes(), data)
	if err := s.write(); err != nil {
		return err
	}
	e, err := s.mk.Check()
	if err != nil || e.Type != mlx.MLX5DV_MKEY_NO_ERR || string(s.data.Bytes()) != string(data) {
		return fmt.Errorf("clean write: check %+v (%v), data stripped into memory: %v", e, err, string(s.data.Bytes()) == string(data))
	}
	fmt.Printf("%d protected blocks written, checked and stripped\n", blocks)
	blk1 := s.wire.Bytes()[block+tuple : 2*block+tuple]
	blk1[100] ^= 0x01 // a bit of block 1's data flips on the way
	if err := s.write(); err != nil {
		return err
	}
	if e, err = s.mk.Check(); err != nil {
		return err
	}
	want := cq.MkeyErr{Type: mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD, Expected: uint64(crc16T10(data[block:])),
		Actual: uint64(crc16T10(blk1)), Offset: block + tuple}
	if e != want {
		return fmt.Errorf("corrupted write: mkey check says %+v, want %+v", e, want)
	}
	fmt.Printf("corrupted block: %v, expected guard %#04x, actual %#04x, at wire offset %d\n", e.Type, e.Expected, e.Actual, e.Offset)
	return nil
}

// open makes the objects of the example on device name.
func open(name string, region *dma.Region) (*setup, error) {
	ctx, err := device.Open(name)
	if err != nil {
		return nil, err
	}
	s := &setup{ctx: ctx}
	if err := s.objects(region); err != nil {
		ctx.Close()
		return nil, err
	}
	return s, nil
}

func (s *setup) objects(region *dma.Region) error {
	pd, err := s.ctx.AllocPD()
	if err != nil {
		return err
	}
	s.pd = pd
	dataBuf, err1 := region.Alloc(blocks*block, 64)
	wireBuf, err2 := region.Alloc(blocks*(block+tuple), 64)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if s.data, err = pd.RegMR(dataBuf.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE); err != nil {
		return err
	}
	if s.wire, err = pd.RegMR(wireBuf.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE); err != nil {
		return err
	}
	if s.cq, err = s.ctx.CreateCQ(device.CQConfig{CQEs: 16}); err != nil {
		return err
	}
	cfg := device.QPConfig{Kind: device.RC, SendCQ: s.cq, MaxSendWR: 8, MaxSendSGE: 1, MaxInlineData: 256,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE}
	if s.init, err = pd.CreateQP(cfg); err != nil {
		return err
	}
	if s.target, err = pd.CreateQP(cfg); err != nil {
		return err
	}
	ei, err1 := s.init.Endpoint()
	et, err2 := s.target.Endpoint()
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if err := errors.Join(s.init.Connect(et), s.target.Connect(ei)); err != nil {
		return err
	}
	// A signature mkey: the CQs of the context record its signature
	// errors, which Check reports.
	s.mk, err = pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 1)
	return err
}

// configure gives the mkey, on the target's send queue, remote write
// access, the target's data buffer as its layout, and T10-DIF in the wire
// domain, every field checked.
func (s *setup) configure() error {
	dif := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_4096}
	dif.SetSigDif(&mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, AppTag: appTag, RefTag: firstRef,
		Flags: uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP)})
	q := s.target.SQ()
	q.SetWRID(1)
	q.SetWRFlags(mlx.IBV_SEND_INLINE | mlx.IBV_SEND_SIGNALED)
	if err := q.Start(); err != nil {
		return err
	}
	// A failing builder or setter fails the batch, and Complete reports
	// that error once, posting nothing.
	q.MkeyConfigure(s.mk.Mkey(), 3, &mlx.MkeyConfAttr{})
	q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_WRITE)
	q.SetMkeyLayoutList([]mlx.SGE{{Addr: s.data.Addr, Length: uint32(s.data.Len()), LKey: s.data.LKey}})
	q.SetMkeySigBlock(&mlx.SigBlockAttr{Wire: dif, CheckMask: 0xff})
	if err := q.Complete(); err != nil {
		return err
	}
	return s.poll()
}

// write RDMA-writes the wire buffer through the mkey (zero-based) and
// waits for its completion.
func (s *setup) write() error { return s.writeOn(s.init, s.cq) }

// writeOn writes from the initiator qp, whose completions go to c.
func (s *setup) writeOn(qp *device.QP, c *device.CQ) error {
	q := qp.SQ()
	q.SetWRID(2)
	q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := q.Start(); err != nil {
		return err
	}
	q.RDMAWrite(s.mk.LKey(), 0)
	q.SetSGE(s.wire.LKey, s.wire.Addr, uint32(s.wire.Len()))
	if err := q.Complete(); err != nil {
		return err
	}
	return poll(c)
}

func (s *setup) poll() error { return poll(s.cq) }

// poll waits for c's next completion (5 s at most) and returns its
// error.
func poll(c *device.CQ) error {
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wc := make([]cq.WC, 1)
	if _, err := c.PollWait(wait, wc); err != nil {
		return err
	}
	return wc[0].Status.Err()
}

// protect lays data out as it travels: each 4 KiB block followed by its
// T10-DIF tuple (CRC16 guard, application tag, reference tag), big-endian.
func protect(wire, data []byte) {
	for i := range blocks {
		b := data[i*block : (i+1)*block]
		out := wire[i*(block+tuple):]
		copy(out, b)
		binary.BigEndian.PutUint16(out[block:], crc16T10(b))
		binary.BigEndian.PutUint16(out[block+2:], appTag)
		binary.BigEndian.PutUint32(out[block+4:], firstRef+uint32(i))
	}
}

// crc16T10 is the T10-DIF guard: CRC-16 with polynomial 0x8BB7, MSB
// first, from 0, no final XOR.
func crc16T10(p []byte) uint16 {
	var r uint16
	for _, b := range p {
		r ^= uint16(b) << 8
		for range 8 {
			if r&0x8000 != 0 {
				r = r<<1 ^ 0x8bb7
			} else {
				r <<= 1
			}
		}
	}
	return r
}
