package engine

import (
	"context"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/gate"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sim/cqe"
	"github.com/mlx5gen/mlx5gen/runtime/sim/keys"
	"github.com/mlx5gen/mlx5gen/runtime/sim/mkey"
)

// ErrClosed is the error of a call on a closed device or object.
var ErrClosed = gate.Closed("engine: closed")

// mrKeyBase is the first key index of MRs and MWs (keys from 0x01000000:
// never key 0x400, which a UMR translation reads as a repeat block);
// indirect mkeys have bit 31 set, so the two never share a key. [ledger: mr-keys]
const mrKeyBase = 0x10000

// Device is one simulated HCA.
type Device struct {
	fab    *Fabric
	name   string
	lid    uint16
	gid    [16]byte
	caps   Caps
	closed bool

	keys   *keys.Table
	mkeys  *mkey.Table
	ev     events
	qpList []*QP
	qps    map[uint32]*QP
	cqs    map[uint32]*CQ
	cqList []*CQ
	srqs   map[uint32]*SRQ
	pds    map[uint32]bool

	nextCQN, nextPDN, nextSRQN uint32
}

func newDevice(f *Fabric, name string, lid uint16, caps Caps) *Device {
	d := &Device{fab: f, name: name, lid: lid, caps: caps, keys: keys.New(mrKeyBase),
		qps: map[uint32]*QP{}, cqs: map[uint32]*CQ{}, srqs: map[uint32]*SRQ{}, pds: map[uint32]bool{},
		nextCQN: 1, nextPDN: 1, nextSRQN: 1}
	d.mkeys = mkey.NewTable(mkeyMemory{d})
	// The mkey table runs the engine the device reports, so a crypto BSF
	// is read in the byte order the QPs' writers were told to use.
	d.mkeys.CryptoMultiBlock = caps.CryptoMultiBlock
	d.ev.ready = make(chan struct{})
	d.gid[0], d.gid[1] = 0xfe, 0x80
	d.gid[14], d.gid[15] = byte(lid>>8), byte(lid)
	return d
}

// Name returns the device's name.
func (d *Device) Name() string { return d.name }

// LID returns the device's port LID.
func (d *Device) LID() uint16 { return d.lid }

// GID returns the device's port GID (index 0).
func (d *Device) GID() [16]byte { return d.gid }

// Caps returns what the device offers.
func (d *Device) Caps() Caps { return d.caps }

// Validate checks that a device could offer c: every limit a QP, CQ or
// message is checked against is at least 1 (0 bytes for MaxInlineData and
// MaxMemcpy), and no more DCI streams may be in error than exist.
func (c Caps) Validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"MaxQPWR", int64(c.MaxQPWR)}, {"MaxSGE", int64(c.MaxSGE)}, {"MaxRdAtomic", int64(c.MaxRdAtomic)},
		{"MaxDCIStreams", int64(c.MaxDCIStreams)}, {"MaxErrStreams", int64(c.MaxErrStreams)},
		{"MaxMsgSize", int64(c.MaxMsgSize)}, {"MaxCQE", int64(c.MaxCQE)}, {"MaxSRQWR", int64(c.MaxSRQWR)}} {
		if f.v < 1 {
			return fmt.Errorf("engine: Caps.%s %d: at least 1", f.name, f.v)
		}
	}
	if c.MaxInlineData < 0 {
		return fmt.Errorf("engine: Caps.MaxInlineData %d: negative", c.MaxInlineData)
	}
	if c.MaxErrStreams > c.MaxDCIStreams {
		return fmt.Errorf("engine: Caps.MaxErrStreams %d: more than Caps.MaxDCIStreams %d", c.MaxErrStreams, c.MaxDCIStreams)
	}
	return nil
}

// Fabric returns the device's fabric.
func (d *Device) Fabric() *Fabric { return d.fab }

// NextEvent returns the oldest asynchronous event, waiting until ctx is
// done (ibv_get_async_event).
func (d *Device) NextEvent(ctx context.Context) (Event, error) { return d.ev.next(ctx) }

// Close closes the device; its objects stop working.
func (d *Device) Close() error {
	d.fab.mu.Lock()
	defer d.fab.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	for _, q := range d.qpList {
		q.closed = true
	}
	d.qpList = nil
	return nil
}

func (d *Device) lock() error {
	d.fab.mu.Lock()
	if d.closed {
		d.fab.mu.Unlock()
		return ErrClosed
	}
	return nil
}

// AllocPD allocates a protection domain and returns its number.
func (d *Device) AllocPD() (uint32, error) {
	if err := d.lock(); err != nil {
		return 0, err
	}
	defer d.fab.mu.Unlock()
	n := d.nextPDN
	d.nextPDN++
	d.pds[n] = true
	return n, nil
}

// HasPD reports whether pdn is one of the device's PDs; the caller holds
// the fabric's lock (the device's commands run under it).
func (d *Device) HasPD(pdn uint32) bool { return d.pds[pdn] }

// DeallocPD frees a protection domain.
func (d *Device) DeallocPD(pdn uint32) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.fab.mu.Unlock()
	if !d.pds[pdn] {
		return fmt.Errorf("engine: no PD %d", pdn)
	}
	delete(d.pds, pdn)
	return nil
}

// RegMR registers mem, whose first byte has address addr, for pd; it
// returns the MR's key (lkey = rkey, as mlx5's). [ledger: mr-keys]
func (d *Device) RegMR(pd uint32, mem []byte, addr uint64, access mlx.AccessFlags) (uint32, error) {
	if err := d.lock(); err != nil {
		return 0, err
	}
	defer d.fab.mu.Unlock()
	if !d.pds[pd] {
		return 0, fmt.Errorf("engine: reg_mr: no PD %d", pd)
	}
	return d.keys.RegMR(pd, mem, addr, access)
}

// DeregMR removes an MR (or an MW).
func (d *Device) DeregMR(key uint32) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.fab.mu.Unlock()
	return d.keys.Dereg(key)
}

// AllocMW allocates a type 2 memory window of pd and returns its rkey.
func (d *Device) AllocMW(pd uint32) (uint32, error) {
	if err := d.lock(); err != nil {
		return 0, err
	}
	defer d.fab.mu.Unlock()
	if !d.pds[pd] {
		return 0, fmt.Errorf("engine: alloc_mw: no PD %d", pd)
	}
	return d.keys.AllocMW(pd)
}

// CQ is a completion queue: the device writes its CQEs into the memory
// the poller reads.
type CQ struct {
	dev    *Device
	cqn    uint32
	ring   *cqe.Ring
	mem    *qmem.Memory
	closed bool
	errOut bool // the overrun was reported

	// OnCQE, if set, is called (under the fabric's lock) after CQEs were
	// written in a step: the completion channel's hook.
	OnCQE func()
	wrote bool
}

// CQN returns the CQ's number.
func (c *CQ) CQN() uint32 { return c.cqn }

// Written returns the CQEs the device wrote to the CQ so far (the caller
// holds the fabric's lock).
func (c *CQ) Written() uint32 { return c.ring.Written() }

// Solicited returns the count of CQEs written up to the last one a
// solicited-only arm waits for (a solicited responder CQE or an error),
// 0 for none (the caller holds the fabric's lock).
func (c *CQ) Solicited() uint32 { return c.ring.Solicited }

// Overrun reports whether a CQE found the CQ full (the caller holds the
// fabric's lock). The CQ then takes no more CQEs: the overrun is for
// good. [ledger: cq-overrun]
func (c *CQ) Overrun() bool { return c.ring.Overrun }

// CreateCQ makes a CQ over mem's CQ buffer (CQESize bytes per entry) and
// CQ doorbell record. The buffer must be initialised (cq.InitBuffer).
func (d *Device) CreateCQ(mem *qmem.Memory) (*CQ, error) {
	if err := d.lock(); err != nil {
		return nil, err
	}
	defer d.fab.mu.Unlock()
	r, err := cqe.New(mem.CQ, mem.CQESize, mem.CQDBR)
	if err != nil {
		return nil, err
	}
	c := &CQ{dev: d, cqn: d.nextCQN, ring: r, mem: mem}
	d.nextCQN++
	d.cqs[c.cqn] = c
	d.cqList = append(d.cqList, c)
	return c, nil
}

// DestroyCQ removes a CQ; QPs still using it lose their completions.
func (d *Device) DestroyCQ(c *CQ) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.fab.mu.Unlock()
	for _, q := range d.qpList {
		if q.scq == c || q.rcq == c {
			return fmt.Errorf("engine: CQ %d is used by QP %#x", c.cqn, q.qpn)
		}
	}
	c.closed = true
	delete(d.cqs, c.cqn)
	for i, x := range d.cqList {
		if x == c {
			d.cqList = append(d.cqList[:i], d.cqList[i+1:]...)
			break
		}
	}
	return nil
}

// overrun reports a full CQ once, as the device does: IBV_EVENT_CQ_ERR. [ledger: cq-overrun]
func (c *CQ) overrun() {
	if !c.errOut {
		c.errOut = true
		c.dev.ev.post(Event{Type: mlx.IBV_EVENT_CQ_ERR, CQN: c.cqn})
	}
}

// notify runs the CQ's hook if it wrote CQEs.
func (c *CQ) notify() {
	if c.wrote {
		c.wrote = false
		if c.OnCQE != nil {
			c.OnCQE()
		}
	}
}
