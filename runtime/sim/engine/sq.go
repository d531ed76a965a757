package engine

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/mmio"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

var be = binary.BigEndian

// maxWQE is the largest WQE: ds is 6 bits, 63 16-byte units (16 WQEBBs).
const maxWQE = 63 * 16

// sendQueue is the device's side of a send queue.
type sendQueue struct {
	ring   []byte
	nbb    uint32 // WQEBBs in the ring, a power of two
	dbr    []byte // doorbell record: bytes 4..7 the send counter
	bf     []byte // the doorbell register
	bfSize int

	ci   uint32 // WQEBBs consumed (16 bits are compared with the record)
	auth uint32 // how far the last doorbell authorised execution

	wqe [maxWQE + 64]byte // a WQE that wraps the ring, copied whole

	flight    []flight // READs and atomics whose responses have not landed
	nflight   int
	maxFlight int
}

// flight is a READ or atomic in flight: its WQE (at WQEBB start) and its
// completion's slot.
type flight struct {
	start, bbs uint32
	comp       uint32
	peer       *QP
}

func (s *sendQueue) init(m *qmem.Memory, maxRdAtomic int) error {
	if m == nil {
		return fmt.Errorf("engine: a send queue needs queue memory")
	}
	if err := m.Check(); err != nil {
		return err
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(m.BF)))%8 != 0 || m.BFSize%8 != 0 {
		return fmt.Errorf("engine: the doorbell register is not 8-byte aligned")
	}
	s.ring, s.nbb, s.dbr, s.bf, s.bfSize = m.SQ, uint32(m.WQEBBs()), m.DBR, m.BF, m.BFSize
	s.maxFlight = maxRdAtomic
	s.flight = make([]flight, maxRdAtomic)
	return nil
}

func (s *sendQueue) reset() {
	s.ci, s.auth, s.nflight = 0, 0, 0
}

// posted returns the producer index of the doorbell record, as an
// unmasked index at or after ci (16 bits of difference).
func (s *sendQueue) posted() uint32 {
	return s.ci + (mmio.LoadRecord32((*[4]byte)(s.dbr[4:8]))-s.ci)&0xffff
}

// doorbell reads the doorbell register: a write naming this QP (the first
// 8 bytes of a WQE's control segment, on its own or leading a BlueFlame
// copy, in either half) authorises execution up to the doorbell record.
// The write is consumed: the word is swapped with zero atomically, so a
// doorbell the program rings while the engine runs on another goroutine
// is either seen now or left for the next step, never lost.
func (s *sendQueue) doorbell(qpn uint32) bool {
	rung := false
	for h := 0; h <= s.bfSize && h+8 <= len(s.bf); h += max(s.bfSize, 1) {
		p := (*uint64)(unsafe.Pointer(&s.bf[h]))
		if atomic.LoadUint64(p) == 0 {
			continue
		}
		var w [8]byte
		binary.NativeEndian.PutUint64(w[:], atomic.SwapUint64(p, 0))
		if be.Uint32(w[4:8])>>8 == qpn&0xffffff {
			rung = true
		} // else not this QP's: a stray write, dropped [ledger: doorbell-stray-write]
	}
	if rung {
		// A record claiming more than the ring holds is the program's
		// overrun: no more than one ring is taken as posted. [ledger: doorbell-stray-write]
		s.auth = min(s.posted(), s.ci+s.nbb)
	}
	return rung
}

// pending returns the WQEBBs authorised and not executed.
func (s *sendQueue) pending() uint32 { return s.auth - s.ci }

// at returns the WQE starting at WQEBB index pi, whole and contiguous: in
// the ring, or copied from it when it wraps. n is the WQEBBs it may take
// (past them is not posted); the WQE's ds is not checked here.
func (s *sendQueue) at(pi uint32, n uint32) []byte {
	off := int(pi&(s.nbb-1)) * qmem.WQEBB
	size := int(min(n, maxWQE/qmem.WQEBB+1, s.nbb)) * qmem.WQEBB
	if off+size <= len(s.ring) {
		return s.ring[off : off+size : off+size]
	}
	k := copy(s.wqe[:], s.ring[off:])
	k += copy(s.wqe[k:size], s.ring)
	return s.wqe[:k:k]
}

// compQueue holds the completions of a send queue in the order the
// work requests were posted: a READ's waits for its response, and those
// after it wait behind it. [ledger: read-atomic-in-flight]
type compQueue struct {
	c          []comp
	head, tail uint32
}

type comp struct {
	op       mlx.Opcode
	ctr      uint16
	signaled bool
	ready    bool
	synd     mlx.CQESyndrome
	vendor   uint8
	byteCnt  uint32
}

func (c *compQueue) reset()      { c.head, c.tail = 0, 0 }
func (c *compQueue) empty() bool { return c.head == c.tail }

// push queues a completion and returns its slot; the queue holds as many
// as the ring has WQEBBs, more than can be outstanding.
func (c *compQueue) push(x comp) uint32 {
	i := c.tail
	c.c[i&uint32(len(c.c)-1)] = x
	c.tail++
	return i
}

func (c *compQueue) at(i uint32) *comp { return &c.c[i&uint32(len(c.c)-1)] }
