// Package engine is the simulated mlx5 device: devices joined by an
// in-process fabric (each with a LID and a GID), their protection domains,
// memory regions and windows, completion queues, queue pairs (RC, DCI, DCT)
// and shared receive queues, and the engine that executes what programs
// post. Everything the program and the device share is real memory: the
// send ring, doorbell record and doorbell register runtime/sq writes, the
// receive rings runtime/rq writes, the CQ buffer runtime/cq polls. The
// engine reads a send queue only after its doorbell register was written
// (an 8-byte doorbell or a BlueFlame copy naming the QP), and then up to
// the doorbell record's producer index; it decodes each WQE with the
// generated segment views of generated/mlx5dv and writes CQEs through
// runtime/sim/cqe.
//
// Fabric.Step runs every queue once (deterministic, for tests);
// Fabric.Start runs Step on a goroutine until Stop. The device's
// management calls (creating and destroying objects, modifying a QP) take
// the fabric's lock, so they may run while the goroutine does.
package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// Fabric joins simulated devices: a message from one QP reaches the QP
// or DCT its address names on any device of the fabric.
type Fabric struct {
	mu      sync.Mutex
	x       exec
	devices []*Device
	nextLID uint16
	nextQPN uint32 // QPNs are unique on the fabric (24 bits)

	stop chan struct{}
	done chan struct{}

	// Trace, if set before the engine runs, is called (under the
	// fabric's lock) for every work request the device fails, with the
	// reason: a debugging aid the CQE's syndrome alone does not give.
	Trace func(WQEError)
}

// NewFabric makes an empty fabric.
func NewFabric() *Fabric { return &Fabric{nextLID: 1, nextQPN: 0x100} }

// Lock takes the fabric's lock (the engine holds it while it steps): a
// caller that changes what the engine reads, outside the device's own
// calls, holds it.
func (f *Fabric) Lock() { f.mu.Lock() }

// Unlock releases the fabric's lock.
func (f *Fabric) Unlock() { f.mu.Unlock() }

// Caps are what a simulated device offers.
type Caps struct {
	MaxQPWR       int    // work requests per queue
	MaxSGE        int    // scatter/gather entries per work request
	MaxInlineData int    // bytes of inline data
	MaxMemcpy     uint64 // MMO memcpy: the largest copy (max_wr_memcpy_length)
	MaxRdAtomic   int    // READs and atomics in flight per QP
	MaxDCIStreams int    // DCI streams (1 << log_num_concurrent)
	MaxErrStreams int    // DCI streams that may be in error at once
	MaxMsgSize    uint32
	MaxCQE        int
	MaxSRQWR      int // work requests per SRQ (max_srq_wr)
	// CryptoMultiBlock: the AES-XTS engine takes many data units per mkey
	// (MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS_MULTI_BLOCK, its tweak
	// byte-reversed in the crypto BSF); false: one data unit per mkey
	// (_SINGLE_BLOCK alone). Every device reports the single-block engine.
	CryptoMultiBlock bool
}

// DefaultCaps are the capabilities NewDevice gives [ledger: default-caps, max-msg-size]: the single-block
// AES-XTS engine, which the engine's own tests drive; runtime/sim's
// devices report the multi-block one (sim.DefaultCaps).
var DefaultCaps = Caps{
	MaxQPWR: 1 << 15, MaxSGE: 16, MaxInlineData: 256, MaxMemcpy: 1 << 20, MaxRdAtomic: 16,
	MaxDCIStreams: 16, MaxErrStreams: 8, MaxMsgSize: 1 << 30,
	MaxCQE: 1 << 22,
	// An SRQ of 2^15 WQEs keeps one on its free list: mlx5 reports
	// max_srq_wr = 2^log_max_srq_sz - 1 (Linux
	// drivers/infiniband/hw/mlx5/main.c, mlx5_ib_query_device), and the
	// writer's ring (rq.MaxSRQWQEs) holds no more. [ledger: srq-max-wr]
	MaxSRQWR: 1<<15 - 1,
}

// NewDevice adds a device with DefaultCaps to the fabric, with the next
// free LID and a link-local GID made from it.
func (f *Fabric) NewDevice(name string) (*Device, error) { return f.NewDeviceCaps(name, DefaultCaps) }

// NewDeviceCaps is NewDevice for a device offering caps.
func (f *Fabric) NewDeviceCaps(name string, caps Caps) (*Device, error) {
	if err := caps.Validate(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range f.devices {
		if d.name == name {
			return nil, fmt.Errorf("engine: the fabric has a device %q already", name)
		}
	}
	if f.nextLID >= 0xc000 { // unicast LIDs end at 0xbfff
		return nil, fmt.Errorf("engine: the fabric has no LID left for %q", name)
	}
	d := newDevice(f, name, f.nextLID, caps)
	f.nextLID++
	f.devices = append(f.devices, d)
	return d, nil
}

// Device returns the device of that name, or nil.
func (f *Fabric) Device(name string) *Device {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range f.devices {
		if d.name == name {
			return d
		}
	}
	return nil
}

// Devices returns the fabric's open devices, in the order they were made.
func (f *Fabric) Devices() []*Device {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*Device
	for _, d := range f.devices {
		if !d.closed {
			out = append(out, d)
		}
	}
	return out
}

// byLID finds a device by LID (nil: none); the caller holds the lock.
func (f *Fabric) byLID(lid uint16) *Device {
	for _, d := range f.devices {
		if d.lid == lid && !d.closed {
			return d
		}
	}
	return nil
}

// byGID finds a device by GID (nil: none); the caller holds the lock.
func (f *Fabric) byGID(gid [16]byte) *Device {
	for _, d := range f.devices {
		if d.gid == gid && !d.closed {
			return d
		}
	}
	return nil
}

// Step runs every device's queues once: each send queue executes what its
// doorbell authorised, READ responses and atomic results land, completions
// are written; it returns whether anything happened.
func (f *Fabric) Step() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stepLocked()
}

func (f *Fabric) stepLocked() bool {
	busy := false
	for _, d := range f.devices {
		for _, q := range d.qpList {
			if q.step() {
				busy = true
			}
		}
	}
	for _, d := range f.devices {
		for _, c := range d.cqList {
			c.notify()
		}
	}
	return busy
}

// Drain steps until nothing happens (at most max steps); it returns the
// steps that did something.
func (f *Fabric) Drain(max int) int {
	n := 0
	for n < max && f.Step() {
		n++
	}
	return n
}

// Start runs Step on a goroutine until Stop: busy while there is work,
// sleeping idle for a moment between empty steps.
func (f *Fabric) Start() {
	f.mu.Lock()
	if f.stop != nil {
		f.mu.Unlock()
		return
	}
	f.stop, f.done = make(chan struct{}), make(chan struct{})
	stop, done := f.stop, f.done
	f.mu.Unlock()
	go func() {
		defer close(done)
		idle := 0
		for {
			select {
			case <-stop:
				return
			default:
			}
			if f.Step() {
				idle = 0
				continue
			}
			if idle++; idle > 64 {
				time.Sleep(20 * time.Microsecond)
			}
		}
	}()
}

// Stop stops the goroutine Start started and waits for it.
func (f *Fabric) Stop() {
	f.mu.Lock()
	stop, done := f.stop, f.done
	f.stop, f.done = nil, nil
	f.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// Event is an asynchronous event (struct ibv_async_event).
type Event struct {
	Type mlx.EventType
	CQN  uint32 // IBV_EVENT_CQ_ERR
	QPN  uint32 // QP events
	SRQN uint32 // SRQ events
}

func (e Event) String() string {
	return fmt.Sprintf("%v (CQ %#x, QP %#x, SRQ %#x)", e.Type, e.CQN, e.QPN, e.SRQN)
}

// events is a device's queue of asynchronous events.
type events struct {
	mu    sync.Mutex
	q     []Event
	ready chan struct{} // closed and replaced when an event is queued
}

func (e *events) post(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.q) < 1024 { // a reader that never reads loses the newest [ledger: async-event-queue]
		e.q = append(e.q, ev)
	}
	close(e.ready)
	e.ready = make(chan struct{})
}

// next returns the oldest event, waiting for one until ctx is done.
func (e *events) next(ctx context.Context) (Event, error) {
	for {
		e.mu.Lock()
		if len(e.q) > 0 {
			ev := e.q[0]
			e.q = e.q[1:]
			e.mu.Unlock()
			return ev, nil
		}
		ready := e.ready
		e.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}
