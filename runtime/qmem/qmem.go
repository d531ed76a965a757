// Package qmem is the memory a queue pair's send path works on: the send
// queue ring, its doorbell record, the BlueFlame register window, and the
// completion queue with its doorbell record. Plain memory (tests,
// benchmarks) provides a Memory today; a real device's mapped queue
// (mlx5dv_init_obj) is meant to provide the same struct, so that the same
// writer runs on either.
package qmem

import (
	"errors"
	"fmt"
	"unsafe"

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
// the collector does not move (mmapped, or mapped by the device).
type Memory struct {
	SQ      []byte // the send ring: a power-of-two number of 64-byte WQEBBs
	DBR     []byte // doorbell record: bytes 0..3 receive counter, 4..7 send counter, big-endian
	BF      []byte // doorbell register (UAR): an 8-byte doorbell at the current half, or a BlueFlame copy filling it
	BFSize  int    // bytes per half of BF; 0: a register without BlueFlame buffers (doorbells at offset 0)
	CQ      []byte // completion queue: CQEs of CQESize bytes
	CQESize int
	CQDBR   []byte // CQ doorbell record: bytes 0..3 consumer index, 4..7 arm

	Pinned bool // the memory is locked in RAM (mlock)

	// Device says BF is a device's doorbell register (the UAR page the
	// kernel mapped), written with runtime/mmio: 64-bit stores, or the
	// s390_pci_mmio_write system call on s390x. Plain leaves it false.
	Device bool

	unmap func() error
}

// Plain maps anonymous memory for a queue of wqebbs WQEBBs (a power of
// two), cqes 64-byte CQEs and a doorbell register with BlueFlame halves of
// bfSize bytes (0 for a register without BlueFlame buffers), and tries to lock it in RAM as a device needs; Pinned says
// whether that worked (it needs CAP_IPC_LOCK or a large enough
// RLIMIT_MEMLOCK).
func Plain(wqebbs, cqes, bfSize int) (*Memory, error) {
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
	// Each part starts on its own page, as the device's would.
	sizes := []int{wqebbs * WQEBB, 64, max(2*bfSize, 64), cqes * 64, 64}
	total := 0
	offs := make([]int, len(sizes))
	for i, s := range sizes {
		offs[i] = total
		total += (s + page - 1) / page * page
	}
	mem, err := unix.Mmap(-1, 0, total, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("qmem: mmap %d bytes: %w", total, err)
	}
	m := &Memory{
		SQ:      mem[offs[0] : offs[0]+sizes[0] : offs[0]+sizes[0]],
		DBR:     mem[offs[1] : offs[1]+8 : offs[1]+8],
		BFSize:  bfSize,
		CQ:      mem[offs[3] : offs[3]+sizes[3] : offs[3]+sizes[3]],
		CQESize: 64,
		CQDBR:   mem[offs[4] : offs[4]+8 : offs[4]+8],
		unmap:   func() error { return unix.Munmap(mem) },
	}
	m.BF = mem[offs[2] : offs[2]+sizes[2] : offs[2]+sizes[2]]
	m.Pinned = unix.Mlock(mem) == nil
	return m, nil
}

// WQEBBs returns the number of WQEBBs in the ring.
func (m *Memory) WQEBBs() int { return len(m.SQ) / WQEBB }

// SQBase returns the address of the ring's first byte.
func (m *Memory) SQBase() unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(m.SQ)) }

// Check reports whether the memory can back a send queue.
func (m *Memory) Check() error {
	n := m.WQEBBs()
	switch {
	case n == 0 || n&(n-1) != 0 || len(m.SQ)%WQEBB != 0 || n > MaxWQEBBs:
		return fmt.Errorf("qmem: a %d-byte ring is not a power of two of 64-byte WQEBBs (at most %d)", len(m.SQ), MaxWQEBBs)
	case len(m.DBR) < 8:
		return errors.New("qmem: the doorbell record needs 8 bytes")
	case m.BFSize < 0 || m.BFSize%WQEBB != 0 || m.BFSize > len(m.BF)/2 || len(m.BF) < 8:
		return fmt.Errorf("qmem: a %d-byte doorbell register has not two BlueFlame halves of %d bytes (and 8 at least)", len(m.BF), m.BFSize)
	}
	return nil
}

// Close unmaps memory Plain mapped; memory a device provided is the
// device's to release.
func (m *Memory) Close() error {
	if m.unmap == nil {
		return nil
	}
	err := m.unmap()
	m.unmap = nil
	m.SQ, m.DBR, m.BF, m.CQ, m.CQDBR = nil, nil, nil, nil, nil
	return err
}
