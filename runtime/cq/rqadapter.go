package cq

import "github.com/mlx5gen/mlx5gen/runtime/rq"

// RQ adapts runtime/rq's receive-queue writer to RecvQueue: a responder
// completion takes the wr_id kept at the CQE's WQE counter and retires
// one work request, and inline scatter writes through the WQE's data
// segments (rq.RQ.Scatter).
type RQ struct{ Q *rq.RQ }

// Slots returns the ring's WQEs.
func (a RQ) Slots() uint32 { return a.Q.WQEs() }

// Consume returns the wr_id at idx and retires the oldest outstanding
// work request; false, changing nothing, if none is outstanding.
func (a RQ) Consume(idx uint32) (uint64, bool) {
	if a.Q.Completed(1) != nil {
		return 0, false
	}
	return a.Q.WRID(idx), true
}

// WQE returns the data segments of the WQE at idx; the signature segment
// of a QP with wq_sig is already left out.
func (a RQ) WQE(idx uint32) ([]byte, bool) { return a.Q.Scatter(idx), false }

// SRQ adapts runtime/rq's shared-receive-queue writer to SharedRecvQueue:
// a completion takes the wr_id of the WQE its counter names and frees the
// WQE back to the free list; an ODP page fault reposts it.
type SRQ struct{ Q *rq.SRQ }

// Size returns the SRQ's WQEs.
func (a SRQ) Size() uint32 { return a.Q.WQEs() }

// WRID returns the wr_id posted at WQE idx.
func (a SRQ) WRID(idx uint32) uint64 { return a.Q.WRID(uint16(idx)) }

// Free puts WQE idx back at the tail of the free list; false if it is not
// posted.
func (a SRQ) Free(idx uint32) bool {
	_, err := a.Q.Retire(uint16(idx))
	return err == nil
}

// RepostODP reposts WQE idx (rq.SRQ.RepostODP).
func (a SRQ) RepostODP(idx uint32) bool { return a.Q.RepostODP(uint16(idx)) == nil }

// WQE returns WQE idx: its next segment, then its data segments.
func (a SRQ) WQE(idx uint32) []byte { return a.Q.WQE(uint16(idx)) }
