// Package qmem is the memory a queue pair's send path works on: the send
// queue ring, its doorbell record, the BlueFlame register window, and the
// completion queue with its doorbell record. New (and Plain) map it with
// runtime/dma: populated, out of forked children, and locked in RAM,
// failing with mlock's error (naming RLIMIT_MEMLOCK) unless the caller
// asks for best effort. A real device's mapped queue (mlx5dv_init_obj) is
// meant to provide the same struct, so that the same writer runs on
// either.
package qmem

import (
	"errors"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/internal/gate"
	"golang.org/x/sys/unix"
)

// WQEBB is the size of a send queue building block.
const WQEBB = 64

// Limits of Plain, well above what a device offers (a send queue of at
// most 2^15 WQEs of up to 16 WQEBBs, BlueFlame halves of a few hundred
// bytes), and low enough that no size computed from them overflows.
const (
	MaxWQEBBs = 1 << 20
	MaxCQEs   = 1 << 24
	MaxBFSize = 1 << 16
)

// Memory is one queue pair's queue memory. Its slices point into memory
// the collector does not move (a runtime/dma mapping, or mapped by the
// device).
type Memory struct {
	SQ      []byte // the send ring: a power-of-two number of 64-byte WQEBBs
	DBR     []byte // doorbell record: bytes 0..3 receive counter, 4..7 send counter, big-endian
	BF      []byte // doorbell register (UAR): an 8-byte doorbell at the current half, or a BlueFlame copy filling it
	BFSize  int    // bytes per half of BF; 0: a register without BlueFlame buffers (doorbells at offset 0)
	CQ      []byte // completion queue: CQEs of CQESize bytes
	CQESize int
	CQDBR   []byte // CQ doorbell record: bytes 0..3 consumer index, 4..7 arm

	// Pinned says the memory is locked in RAM (mlock). New with
	// dma.LockRequired (Plain) never returns unpinned memory; with
	// dma.LockBestEffort, LockErr says why it is not.
	Pinned  bool
	LockErr error

	// Device says BF is a device's doorbell register (the UAR page the
	// kernel mapped), written with runtime/mmio: 64-bit stores, or the
	// s390_pci_mmio_write system call on s390x. New leaves it false.
	Device bool

	region *dma.Region // the mapping New made; nil for a device's memory
	closed bool
}

// ErrClosed is the error of Check on memory after Close.
var ErrClosed = gate.Closed("qmem: the queue memory is closed")

// Options describe queue memory for New.
type Options struct {
	WQEBBs int // send ring size in WQEBBs, a power of two
	CQEs   int // 64-byte CQEs (0: no CQ)
	BFSize int // bytes per BlueFlame half, a multiple of 64 (0: a register without BlueFlame buffers)

	// Lock is dma.LockRequired (the default: New fails with mlock's
	// error, which names RLIMIT_MEMLOCK, when the memory cannot be
	// locked) or dma.LockBestEffort (the memory is kept unlocked; Pinned
	// and LockErr say so).
	Lock dma.Lock
}

// Plain is New with locking required: queue memory of wqebbs WQEBBs,
// cqes 64-byte CQEs and BlueFlame halves of bfSize bytes, locked in RAM
// as a device needs (it needs CAP_IPC_LOCK or a large enough
// RLIMIT_MEMLOCK: a few pages per queue for small rings).
func Plain(wqebbs, cqes, bfSize int) (*Memory, error) {
	return New(Options{WQEBBs: wqebbs, CQEs: cqes, BFSize: bfSize})
}

// New maps queue memory with runtime/dma (anonymous, populated, kept out
// of forked children, locked as o.Lock says): each part starts on its own
// page, as the device's would. The doorbell register is plain memory
// standing in for a device's.
func New(o Options) (*Memory, error) {
	wqebbs, cqes, bfSize := o.WQEBBs, o.CQEs, o.BFSize
	if wqebbs <= 0 || wqebbs&(wqebbs-1) != 0 {
		return nil, fmt.Errorf("qmem: %d WQEBBs: the ring size must be a power of two", wqebbs)
	}
	if cqes < 0 || bfSize < 0 || bfSize%WQEBB != 0 {
		return nil, fmt.Errorf("qmem: bad CQ size %d or BlueFlame size %d", cqes, bfSize)
	}
	// Bound every part before any arithmetic on it, so that no size
	// overflows.
	if wqebbs > MaxWQEBBs || cqes > MaxCQEs || bfSize > MaxBFSize {
		return nil, fmt.Errorf("qmem: %d WQEBBs, %d CQEs or BlueFlame halves of %d bytes exceed the limits (%d, %d, %d)",
			wqebbs, cqes, bfSize, MaxWQEBBs, MaxCQEs, MaxBFSize)
	}
	page := unix.Getpagesize()
	sizes := []int{wqebbs * WQEBB, 64, max(2*bfSize, 64), cqes * 64, 64}
	total := 0
	offs := make([]int, len(sizes))
	for i, s := range sizes {
		offs[i] = total
		total += (s + page - 1) / page * page
	}
	// One buffer of the region's allocator holds all parts: the
	// allocator hands out powers of two.
	size := 1 << bits.Len(uint(total-1))
	r, err := dma.Map(dma.Options{Size: size, Lock: o.Lock, MinBlock: page})
	if err != nil {
		return nil, fmt.Errorf("qmem: %w", err)
	}
	b, err := r.Alloc(size, page)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("qmem: %w", err)
	}
	mem := b.Bytes
	part := func(i, n int) []byte { return mem[offs[i] : offs[i]+n : offs[i]+n] }
	return &Memory{
		SQ: part(0, sizes[0]), DBR: part(1, 8), BF: part(2, sizes[2]), BFSize: bfSize,
		CQ: part(3, sizes[3]), CQESize: 64, CQDBR: part(4, 8),
		Pinned: r.Pinned(), LockErr: r.LockErr(), region: r,
	}, nil
}

// WQEBBs returns the number of WQEBBs in the ring.
func (m *Memory) WQEBBs() int { return len(m.SQ) / WQEBB }

// SQBase returns the address of the ring's first byte.
func (m *Memory) SQBase() unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(m.SQ)) }

// Check reports whether the memory can back a send queue.
func (m *Memory) Check() error {
	n := m.WQEBBs()
	switch {
	case m.closed:
		return ErrClosed
	case n == 0 || n&(n-1) != 0 || len(m.SQ)%WQEBB != 0 || n > MaxWQEBBs:
		return fmt.Errorf("qmem: a %d-byte ring is not a power of two of 64-byte WQEBBs (at most %d)", len(m.SQ), MaxWQEBBs)
	case len(m.DBR) < 8:
		return errors.New("qmem: the doorbell record needs 8 bytes")
	case m.BFSize < 0 || m.BFSize%WQEBB != 0 || m.BFSize > len(m.BF)/2 || len(m.BF) < 8:
		return fmt.Errorf("qmem: a %d-byte doorbell register has not two BlueFlame halves of %d bytes (and 8 at least)", len(m.BF), m.BFSize)
	}
	return nil
}

// Close unmaps memory New mapped (a device's memory is the device's to
// release). It is idempotent; afterwards the slices are nil and Check
// returns ErrClosed, so writers refuse the memory.
func (m *Memory) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	m.SQ, m.DBR, m.BF, m.CQ, m.CQDBR = nil, nil, nil, nil, nil
	return m.region.Close()
}

// Closed reports whether Close was called.
func (m *Memory) Closed() bool { return m.closed }
