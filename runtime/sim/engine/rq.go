package engine

import (
	"fmt"

	"github.com/mlx5gen/mlx5gen/runtime/mmio"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// recvQueue is the device's side of a QP's receive queue.
type recvQueue struct {
	ring   []byte
	stride int
	n      uint32
	dbr    []byte // the receive counter: bytes 0..3 of the QP's doorbell record
	sig    bool   // each WQE starts with a signature segment
	ci     uint32 // WQEs consumed
}

func (r *recvQueue) init(ring []byte, stride int, m *qmem.Memory, sig bool) error {
	if stride < 16 || stride&(stride-1) != 0 {
		return fmt.Errorf("engine: a receive WQE stride of %d bytes is not a power of two of 16 at least", stride)
	}
	n := len(ring) / stride
	if n == 0 || n&(n-1) != 0 || n*stride != len(ring) {
		return fmt.Errorf("engine: a %d-byte receive ring is not a power-of-two number of %d-byte WQEs", len(ring), stride)
	}
	if m == nil || len(m.DBR) < 8 {
		return fmt.Errorf("engine: a receive queue needs the QP's doorbell record")
	}
	r.ring, r.stride, r.n, r.dbr, r.sig = ring, stride, uint32(n), m.DBR[0:4:4], sig
	return nil
}

func (r *recvQueue) reset() { r.ci = 0 }

// pending returns the receive WQEs posted and not consumed.
func (r *recvQueue) pending() uint32 {
	if r.ring == nil {
		return 0
	}
	return (mmio.LoadRecord32((*[4]byte)(r.dbr)) - r.ci) & 0xffff
}

// take consumes the next receive WQE: its data segments and its index.
func (r *recvQueue) take() ([]byte, uint16) {
	i := r.ci & (r.n - 1)
	w := r.ring[int(i)*r.stride : int(i+1)*r.stride]
	if r.sig {
		w = w[16:]
	}
	r.ci++
	return w, uint16(i)
}

// SRQ is a shared receive queue: the device takes its WQEs in the order
// of the free list the program keeps in them (each WQE's next segment
// names the next), as far as the doorbell record's counter says. [ledger: srq-free-list]
type SRQ struct {
	dev    *Device
	srqn   uint32
	ring   []byte
	stride int
	n      uint32
	dbr    []byte
	head   uint16 // the next WQE to take
	ci     uint16 // WQEs taken
	closed bool
}

// SRQN returns the SRQ's number.
func (s *SRQ) SRQN() uint32 { return s.srqn }

// CreateSRQ makes an SRQ over a ring of stride-byte WQEs (the first at the
// free list's head, head) and its doorbell record (4 bytes).
func (d *Device) CreateSRQ(ring []byte, stride int, dbr []byte, head uint16) (*SRQ, error) {
	if err := d.lock(); err != nil {
		return nil, err
	}
	defer d.fab.mu.Unlock()
	if stride < 32 || stride&(stride-1) != 0 {
		return nil, fmt.Errorf("engine: an SRQ WQE stride of %d bytes is not a power of two of 32 at least", stride)
	}
	n := len(ring) / stride
	if n == 0 || n&(n-1) != 0 || n*stride != len(ring) || n > 1<<16 {
		return nil, fmt.Errorf("engine: a %d-byte SRQ ring is not a power-of-two number (at most 65536) of %d-byte WQEs", len(ring), stride)
	}
	if len(dbr) < 4 {
		return nil, fmt.Errorf("engine: an SRQ needs a 4-byte doorbell record")
	}
	s := &SRQ{dev: d, srqn: d.nextSRQN, ring: ring, stride: stride, n: uint32(n), dbr: dbr[0:4:4], head: head}
	d.nextSRQN++
	d.srqs[s.srqn] = s
	return s, nil
}

// DestroySRQ removes an SRQ.
func (d *Device) DestroySRQ(s *SRQ) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.fab.mu.Unlock()
	s.closed = true
	delete(d.srqs, s.srqn)
	return nil
}

func (s *SRQ) pending() uint16 { return uint16(mmio.LoadRecord32((*[4]byte)(s.dbr))) - s.ci }

// take consumes the WQE at the head of the list: its data segments and
// its index.
func (s *SRQ) take() ([]byte, uint16) {
	i := uint32(s.head) & (s.n - 1)
	w := s.ring[int(i)*s.stride : int(i+1)*s.stride]
	s.head = be.Uint16(w[2:4]) // next_wqe_index
	s.ci++
	return w[16:], uint16(i)
}
