package engine

import (
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
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
	limit  uint16 // armed: IBV_EVENT_SRQ_LIMIT_REACHED when fewer WQEs are posted (0: not armed)
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
	if s.limit != 0 && s.pending() < s.limit {
		s.limit = 0
		s.dev.ev.post(Event{Type: mlx.IBV_EVENT_SRQ_LIMIT_REACHED, SRQN: s.srqn})
	}
	return w[16:], uint16(i)
}

// ArmLimit arms the SRQ's limit event (ibv_modify_srq(3) with
// IBV_SRQ_LIMIT): once fewer than limit WQEs are posted, the device
// raises IBV_EVENT_SRQ_LIMIT_REACHED once and disarms; 0 disarms. The
// count is checked when the device takes a WQE, as Linux's software
// devices do (drivers/infiniband/sw/rxe/rxe_resp.c get_srq_wqe, the
// qib/ipath UD receive path), so an SRQ armed with fewer WQEs posted than
// the limit raises the event at its next receive, not at once.
// [ledger: srq-limit-on-take] A limit of 0 leaves the SRQ unarmed: no
// count of WQEs is below 0. [ledger: srq-limit-zero] The caller
// (runtime/device) checks limit against the SRQ's max_wr; here it only
// has to fit the ring.
func (s *SRQ) ArmLimit(limit int) error {
	if err := s.dev.lock(); err != nil {
		return err
	}
	defer s.dev.fab.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if limit < 0 || limit >= int(s.n) {
		return fmt.Errorf("engine: modify_srq: srq_limit %d outside 0..%d, the SRQ's WQEs", limit, s.n-1)
	}
	s.limit = uint16(limit)
	return nil
}
