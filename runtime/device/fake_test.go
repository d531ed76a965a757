package device_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/mmio"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// fake is a test fixture, not the simulator (runtime/sim is): a backend
// whose objects are plain runtime/qmem memory, executing only what the
// API tests need (signaled RDMA writes of one SGE between its MRs, from
// the doorbell records, in Progress), and logging every close so the
// tests see the order the API closes in.
type fake struct{}

func init() { device.Register("fake:", fake{}) }

var be = binary.BigEndian

func (fake) Open(name string) (device.BackendContext, error) {
	if name == "fake:none" {
		return nil, fmt.Errorf("fake: %w: there is nothing behind %q", device.ErrNoDevice, name)
	}
	c := &fakeCtx{name: name, mrs: map[uint32]*fakeMR{}, qps: map[uint32]*fakeQP{}, cqs: map[uint32]*fakeCQ{}}
	fakes.Lock()
	fakes.last = c
	fakes.Unlock()
	return c, nil
}

func (fake) List() ([]device.Info, error) { return []device.Info{fakeInfo("fake:0")}, nil }

// fakeInfo describes a fake device; one named "fake:nooffload" reports
// neither signature nor crypto offload.
func fakeInfo(name string) device.Info {
	offload := name != "fake:nooffload"
	return device.Info{Name: name, Caps: device.Caps{MaxQPWR: 1024, MaxSGE: 16, MaxCQE: 1 << 16, MaxInlineData: 256, DC: true,
		MaxSRQWR: 4096, MaxSRQSGE: 8, Signature: offload, Crypto: offload}}
}

// fakes keeps the context the last Open made, for tests that read its log.
var fakes struct {
	sync.Mutex
	last *fakeCtx
}

type fakeCtx struct {
	name string
	mu   sync.Mutex
	next uint32
	mrs  map[uint32]*fakeMR
	qps  map[uint32]*fakeQP
	cqs  map[uint32]*fakeCQ
	log  []string
	// events are the asynchronous events raised and not read yet.
	events []device.AsyncEvent
}

func (c *fakeCtx) id() uint32 { c.next++; return c.next + 0x100 }

func (c *fakeCtx) closed(what string) error {
	c.mu.Lock()
	c.log = append(c.log, what)
	c.mu.Unlock()
	return nil
}

func (c *fakeCtx) Info() device.Info { return fakeInfo(c.name) }
func (c *fakeCtx) Port() (device.Port, error) {
	return device.Port{State: mlx.IBV_PORT_ACTIVE, MTU: mlx.IBV_MTU_1024, LID: 7, MaxMsgSize: 1 << 20}, nil
}
func (c *fakeCtx) AllocPD() (device.BackendPD, error) { return &fakePD{c: c}, nil }
func (c *fakeCtx) Close() error                       { return c.closed("context") }
func (c *fakeCtx) RegUmem(buf []byte, _ mlx.AccessFlags) (device.BackendUmem, error) {
	return fakeObj{c: c, id: c.id(), what: "umem"}, nil
}

// AsyncEvent returns the oldest event raised, checking every 100µs until
// ctx is done.
func (c *fakeCtx) AsyncEvent(ctx context.Context) (device.AsyncEvent, error) {
	for {
		c.mu.Lock()
		if len(c.events) > 0 {
			ev := c.events[0]
			c.events = c.events[1:]
			c.mu.Unlock()
			return ev, nil
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return device.AsyncEvent{}, ctx.Err()
		case <-time.After(100 * time.Microsecond):
		}
	}
}

func (c *fakeCtx) CreateCompChannel() (device.BackendChannel, error) {
	return &fakeChan{c: c}, nil
}

func (c *fakeCtx) CreateCQ(attr device.CQConfig, ch device.BackendChannel) (device.BackendCQ, error) {
	n := 2
	for n < attr.CQEs {
		n <<= 1
	}
	mem, err := qmem.New(qmem.Options{WQEBBs: 1, CQEs: n, Lock: dma.LockBestEffort})
	if err != nil {
		return nil, err
	}
	cq.InitBuffer(mem)
	c.mu.Lock()
	defer c.mu.Unlock()
	q := &fakeCQ{c: c, mem: mem, cqn: c.id(), uar: make([]byte, 64)}
	if ch != nil {
		q.ch = ch.(*fakeChan)
	}
	c.cqs[q.cqn] = q
	return q, nil
}

type fakeObj struct {
	c    *fakeCtx
	id   uint32
	what string
}

func (o fakeObj) ID() uint32       { return o.id }
func (o fakeObj) LKey() uint32     { return o.id << 8 }
func (o fakeObj) ObjectID() uint32 { return o.id }

// errNoPSV is the PSVs error of the device "fake:nopsv".
var errNoPSV = errors.New("fake: no PSVs here")

// PSVs: a signature mkey's two PSVs, numbered after its id.
func (o fakeObj) PSVs() (uint32, uint32, error) {
	if o.c.name == "fake:nopsv" {
		return 0, 0, errNoPSV
	}
	return o.id<<1 | 0x100, o.id<<1 | 0x101, nil
}
func (o fakeObj) Close() error { return o.c.closed(fmt.Sprintf("%s %#x", o.what, o.id)) }

type fakePD struct{ c *fakeCtx }

func (p *fakePD) Opaque() sq.PD { return sq.PD{} }
func (p *fakePD) Close() error  { return p.c.closed("PD") }
func (p *fakePD) CreateMkey(mlx.MkeyInitAttrFlags, int) (device.BackendMkey, error) {
	return fakeObj{c: p.c, id: p.c.id(), what: "mkey"}, nil
}
func (p *fakePD) CreateDEK(device.DEKConfig) (device.BackendDEK, error) {
	return fakeObj{c: p.c, id: p.c.id(), what: "DEK"}, nil
}

type fakeMR struct {
	c      *fakeCtx
	key    uint32
	buf    []byte
	addr   uint64
	access mlx.AccessFlags
}

func (p *fakePD) RegMR(buf []byte, access mlx.AccessFlags) (device.BackendMR, error) {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	m := &fakeMR{c: p.c, key: p.c.id(), buf: buf, access: access,
		addr: uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))}
	p.c.mrs[m.key] = m
	return m, nil
}

func (m *fakeMR) Keys() (uint32, uint32) { return m.key, m.key }
func (m *fakeMR) Close() error {
	m.c.mu.Lock()
	delete(m.c.mrs, m.key)
	m.c.mu.Unlock()
	return m.c.closed(fmt.Sprintf("MR %#x", m.key))
}

// bytes returns the n bytes at addr of the MR key, if it covers them with
// the access asked.
func (c *fakeCtx) bytes(key uint32, addr uint64, n uint32, need mlx.AccessFlags) []byte {
	m := c.mrs[key]
	if m == nil || m.access&need != need || addr < m.addr || addr+uint64(n) > m.addr+uint64(len(m.buf)) {
		return nil
	}
	off := addr - m.addr
	return m.buf[off : off+uint64(n)]
}

type fakeCQ struct {
	c     *fakeCtx
	mem   *qmem.Memory
	cqn   uint32
	pi    uint32 // next CQE to write
	ch    *fakeChan
	uar   []byte // the arm doorbell at MLX5_CQ_DOORBELL
	fired uint64 // the arm doorbell's value the last event answered
	// overrun: a CQE found the CQ full; the CQ takes no more, as the
	// device's.
	overrun bool
	errSent bool // IBV_EVENT_CQ_ERR was raised
}

// Overrun reports a CQE that found the CQ full.
func (q *fakeCQ) Overrun() bool {
	q.c.mu.Lock()
	defer q.c.mu.Unlock()
	return q.overrun
}

func (q *fakeCQ) Memory() device.CQMemory { return device.CQMemory{Mem: q.mem, CQN: q.cqn, UAR: q.uar} }
func (q *fakeCQ) Progress()               { q.c.run() }

// Arming arms under the context's lock, which the channel's Wait holds
// while it reads the arm doorbell.
func (q *fakeCQ) Arming(arm func()) {
	q.c.mu.Lock()
	defer q.c.mu.Unlock()
	arm()
}
func (q *fakeCQ) Close() error {
	q.c.mu.Lock()
	delete(q.c.cqs, q.cqn)
	q.c.mu.Unlock()
	q.mem.Close()
	return q.c.closed(fmt.Sprintf("CQ %#x", q.cqn))
}

// write writes a CQE of op_own op for the WQE at index idx of qpn; false:
// the CQ is full.
func (q *fakeCQ) write(op mlx.CQEOpcode, synd mlx.CQESyndrome, wqeOp uint8, qpn uint32, idx uint16) bool {
	return q.writeResp(op, synd, wqeOp, qpn, idx, 0, 0)
}

// writeResp is write with a responder's SRQ number and byte count.
func (q *fakeCQ) writeResp(op mlx.CQEOpcode, synd mlx.CQESyndrome, wqeOp uint8, qpn uint32, idx uint16, srqn, byteCnt uint32) bool {
	n := uint32(len(q.mem.CQ) / 64)
	if q.overrun || q.pi-mmio.LoadRecord32((*[4]byte)(q.mem.CQDBR[0:4]))&0xffffff >= n {
		q.overrun = true
		return false
	}
	e := q.mem.CQ[(q.pi&(n-1))*64:][:64]
	clear(e)
	e[55] = byte(synd)
	be.PutUint32(e[32:36], srqn)
	be.PutUint32(e[44:48], byteCnt)
	be.PutUint32(e[56:60], uint32(wqeOp)<<24|qpn)
	be.PutUint16(e[60:62], idx)
	e[63] = byte(op)<<4 | byte(q.pi/n&1)
	q.pi++
	return true
}

type fakeChan struct{ c *fakeCtx }

// Wait runs the fake device and reports a CQ of the channel that was
// armed and has a CQE past its consumer index.
func (ch *fakeChan) Wait(ctx context.Context) (uint32, error) {
	for {
		ch.c.run()
		ch.c.mu.Lock()
		for _, q := range ch.c.cqs {
			arm := be.Uint64(q.uar[mlx.MLX5_CQ_DOORBELL:])
			if q.ch == ch && arm != q.fired && q.pi&0xffffff != uint32(arm>>32)&0xffffff {
				q.fired = arm
				ch.c.mu.Unlock()
				return q.cqn, nil
			}
		}
		ch.c.mu.Unlock()
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Microsecond):
		}
	}
}

func (ch *fakeChan) Ack(device.BackendCQ, int) {}
func (ch *fakeChan) Close() error              { return ch.c.closed("channel") }
