// Package rq writes receive work requests, as ibv_post_recv and
// ibv_post_srq_recv do with libmlx5 (rdma-core v44.0's providers/mlx5
// mlx5_post_recv and mlx5_post_srq_recv): RQ posts to a QP's receive queue,
// SRQ to a shared receive queue. Pure Go, no cgo, no allocation when
// posting or retiring.
//
// The contract is the send queue's (runtime/sq): every call is checked
// before anything is written, a call that fails writes nothing (not the
// ring, not the doorbell record, not the bookkeeping), and a full queue is
// such a failure. A check that fails returns a *mlx5dv.RuleError naming
// its rule of spec/api/post_recv.yaml (post_recv.rq_room,
// post_recv.sge_count, post_recv.sge_length, post_recv.srq_room,
// post_recv.srq_sge_count, post_recv.srq_sge_length) and
// wrapping libmlx5's errno (ENOMEM for a full queue, EINVAL for too many
// SGEs or an SGE length with bit 31 set). Errors that are not the man
// pages' (bad configuration, retiring more than is outstanding, freeing a
// WQE that is not posted) are plain errors.
//
// Lists: PostList follows ibv_post_recv's bad_wr semantics, as libmlx5
// does: the work requests before the first bad one are posted (and the
// doorbell record updated for them), the bad one and those after it are
// not; it returns how many were posted. Post posts one work request or
// nothing.
//
// The CQ poller retires what completes (runtime/cq's RQ and SRQ adapters
// wire these queues to it): for a responder completion of a receive queue
// the wr_id at the CQE's wqe_counter (RQ.WRID) and one retirement
// (RQ.Completed; RQ.Retire is v44's tail form); for a completion of a
// shared receive queue (*SRQ).Retire (the WQE named by the CQE's
// wqe_counter goes back at the tail of the free list), and for an ODP
// page fault (*SRQ).RepostODP.
//
// The SRQ keeps v44's free list linked by the next segments' next_wqe_index
// (rdma-core 54 replaced it with a bitmap of free WQEs); the reference CQE
// vectors come from v44, so the list's order of reuse is v44's.
//
// Concurrency: one goroutine posts on an RQ (Post, PostList) while one
// other polls its CQ (the retiring calls), handing off through atomics.
// An SRQ takes a lock around posting and retiring, as libmlx5's srq->lock,
// because several CQs, each polled on its own goroutine, may retire into
// it. Close of either may come from any goroutine at any moment and waits
// for a call in progress. Two goroutines posting on one RQ at once are
// not supported (docs/design.md, "Goroutines").
package rq

import (
	"errors"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/runtime/barrier"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
	"github.com/mlx5gen/mlx5gen/runtime/mmio"
)

// SGE is one scatter/gather element: struct ibv_sge.
type SGE = mlx.SGE

// RecvWR is one receive work request of a list: struct ibv_recv_wr, with
// the list as a Go slice (num_sge is len(SGEs)).
type RecvWR struct {
	WRID uint64
	SGEs []SGE
}

// Memory is a receive queue's memory: its ring of WQEs and its doorbell
// record. Both must be memory the collector does not move (mmapped, or the
// device's queue buffer from mlx5dv_init_obj).
//
// For a QP's receive queue, DBR is the receive counter of the QP's
// doorbell record, dbrec[MLX5_RCV_DBR]: bytes 0..3 of runtime/qmem's
// Memory.DBR ((*[4]byte)(m.DBR[0:4])). For an SRQ it is the SRQ's own
// doorbell record.
type Memory struct {
	Ring []byte   // a power-of-two number of WQEs of Stride bytes
	DBR  *[4]byte // big-endian 32-bit counter
}

// check validates memory for WQEs of stride bytes (a power of two of at
// least min) and returns their number.
func (m *Memory) check(what string, stride, min, maxWQEs int) (int, error) {
	if m.DBR == nil {
		return 0, fmt.Errorf("rq: %s: no doorbell record", what)
	}
	if stride < min || stride > 1<<16 || stride&(stride-1) != 0 {
		return 0, fmt.Errorf("rq: %s: a WQE stride of %d bytes is not a power of two from %d to 65536", what, stride, min)
	}
	n := len(m.Ring) / stride
	if n == 0 || n*stride != len(m.Ring) || n&(n-1) != 0 || n > maxWQEs {
		return 0, fmt.Errorf("rq: %s: a %d-byte ring is not a power of two (at most %d) of %d-byte WQEs", what, len(m.Ring), maxWQEs, stride)
	}
	if err := barrier.Check(); err != nil {
		return 0, fmt.Errorf("rq: %w", err)
	}
	return n, nil
}

// ringDBR publishes a counter in the doorbell record after the WQEs, as
// libmlx5 does: udma_to_device_barrier, then a big-endian 32-bit store.
func ringDBR(dbr *[4]byte, v uint32) {
	barrier.UDMAToDeviceBarrier()
	mmio.Record32(dbr, v)
}

// dataSeg writes one data segment.
func dataSeg(b []byte, length, lkey uint32, addr uint64) {
	d := (*mlx.WQEDataSeg)(b[:mlx.WQEDataSegSize])
	d.SetByteCount(length)
	d.SetLKey(lkey)
	d.SetAddr(addr)
}

// endSeg writes the segment that ends a scatter list shorter than the
// WQE: byte_count 0, MLX5_INVALID_LKEY, address 0.
func endSeg(b []byte) { dataSeg(b, 0, mlx.MLX5_INVALID_LKEY, 0) }

// ruleErr fills e from the rule of check c in function fn, and what was
// wrong: field's value broke limit.
func ruleErr(e *mlx.RuleError, c mlx5rules.ChainCheck, fn mlx.Func, wr int, field string, test mlx.Test, v, limit uint64, limitName string) error {
	*e = *mlx5rules.ChainError(c, fn)
	e.WR, e.Field, e.Test, e.Value, e.Limit, e.LimitName = wr, field, test, v, limit, limitName
	return e
}

// sgeLengths refuses an SGE whose length has bit 31 set (rules
// post_recv.sge_length and post_recv.srq_sge_length): the receive data
// segment's byte_count cannot state it (bit 31 is MLX5_INLINE_SEG), and
// the device would fail the receive with a protection error. libmlx5
// writes it unchecked.
func sgeLengths(e *mlx.RuleError, fn mlx.Func, wr int, sges []SGE) error {
	for i := range sges {
		if l := sges[i].Length; l > wrcheck.MaxSGELength {
			return ruleErr(e, mlx5rules.ChainRQSGELength, fn, wr, wrcheck.SGEField(i), mlx.TestMax, uint64(l),
				wrcheck.MaxSGELength, "2^31 - 1: bit 31 of byte_count is MLX5_INLINE_SEG")
		}
	}
	return nil
}

var errNoOutstanding = errors.New("rq: no receive work request is outstanding")

// RetireError is a retirement the queue refused, changing nothing: more
// completions than outstanding work requests, or an SRQ WQE that is not
// posted. It is the queue's until its next refused retirement (reporting
// does not allocate); copy it to keep it longer.
type RetireError struct {
	SRQ         bool   // the shared receive queue refused it
	WQE         uint32 // SRQ: the WQE index given
	WQEs        uint32 // SRQ: how many the ring has
	N           uint32 // RQ: the completions given
	Outstanding uint32 // RQ: the work requests outstanding
}

func (e *RetireError) Error() string {
	if e.SRQ {
		return fmt.Sprintf("rq: shared receive queue WQE %d is not posted (of %d WQEs)", e.WQE, e.WQEs)
	}
	return fmt.Sprintf("rq: %d completions with %d receive work requests outstanding", e.N, e.Outstanding)
}
