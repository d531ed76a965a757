package cq

import (
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// SQ adapts runtime/sq's writer to SendQueue: the poller reads the
// writer's per-slot bookkeeping (sq.SQ.Slots) and gives ring room back
// through sq.SQ.Retire, so posting resumes on a full ring once its
// completions are polled. Both hand off through atomics: the writer may
// post on another goroutine while the CQ is polled.
type SQ struct {
	Q   *sq.SQ
	Mem *qmem.Memory // the send ring, for requester inline scatter
}

// Slots returns the ring's WQEBBs.
func (a SQ) Slots() uint32 { return uint32(len(a.Q.Slots)) }

// Slot returns the bookkeeping libmlx5 keeps at a slot, as the writer
// published it.
func (a SQ) Slot(i uint32) (uint64, uint32, uint32) {
	a.Q.Acquire()
	s := &a.Q.Slots[i]
	return s.WRID, s.WQEHead, uint32(s.WRData)
}

// SlotOpcode returns the opcode (MLX5_OPCODE_*) of the WQE posted at a
// slot: an error CQE does not say which operation failed.
func (a SQ) SlotOpcode(i uint32) uint8 { return a.Q.Slots[i].Opcode }

// Retire completes the work requests before tail. A tail that is not
// ahead of the writer's (a CQE of a work request already retired) changes
// nothing.
func (a SQ) Retire(tail uint32) { a.Q.Retire(tail) }

// Ring returns the send ring.
func (a SQ) Ring() []byte {
	if a.Mem == nil {
		return nil
	}
	return a.Mem.SQ
}

// InitBuffer marks every entry of a new CQ buffer invalid (opcode
// MLX5_CQE_INVALID, owner bit 0), as mlx5_alloc_cq_buf does, so that
// nothing is polled before the device writes it. A device's CQ created
// by libmlx5 is initialised already; plain memory is not.
func InitBuffer(m *qmem.Memory) {
	if m.CQESize <= 0 {
		return
	}
	for off := 0; off+m.CQESize <= len(m.CQ); off += m.CQESize {
		clear(m.CQ[off : off+m.CQESize])
		m.CQ[off+m.CQESize-1] = 0xf0
	}
}
