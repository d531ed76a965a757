package cq

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/barrier"
)

// Clean removes the CQEs of the QP registered under key (its QPN, or its
// user index with cqe_version 1) that wait in the CQ, as libmlx5's
// mlx5_cq_clean does when a QP moves to RESET or is destroyed: the QP's
// queues start over, so a completion of theirs polled later would name a
// work request of the old rings. The later CQEs of other QPs move back
// over them, oldest order kept, each keeping the owner bit of the entry
// it lands in, and the consumer index moves on by the number removed
// (written to the doorbell record). A removed receive CQE of a QP that
// receives through a shared receive queue gives its WQE back to the SRQ
// (mlx5_free_srq_wqe); the QP's own queues are reset by their writers
// (runtime/sq's and runtime/rq's Reset), not here.
//
// Fields touched: the ring entries from the consumer index on, ci and
// the doorbell record's SET_CI; the fast path's QP and its pending retire
// (given back first) and the last lookups, so the next poll looks the
// QP up afresh. The QP stays registered.
//
// The device may still write CQEs of other QPs meanwhile: the entries
// past the ones Clean saw owned by software are not touched. Call it only
// while nothing polls the CQ (no StartPoll session open) and the QP is in
// RESET or gone, so that none of its CQEs is added. On a closed CQ it
// does nothing. A poll in progress on another goroutine is waited for and
// the poller kept out meanwhile (it fails only as RemoveQP does).
func (c *CQ) Clean(key uint32) error {
	return c.change("Clean", func() error {
		if !c.gate.Closed() {
			c.clean(key)
		}
		return nil
	})
}

// clean is Clean with the poller kept out.
func (c *CQ) clean(key uint32) {
	c.flushRetire()
	c.curQP, c.curSRQ, c.hot = nil, nil, hot{}
	var srq SharedRecvQueue
	if qp := c.qps[key]; qp != nil {
		srq = qp.SRQ
	}
	// The producer index: the first entry not owned by software, at most
	// a ring's worth (less one, as libmlx5 bounds it) past ci.
	prod := c.ci
	for c.swOwned(prod) && prod != c.ci+c.mask {
		prod++
	}
	// Read the bodies only after their ownership was seen.
	barrier.UDMAFromDeviceBarrier()
	freed := uint32(0)
	for prod != c.ci {
		prod--
		off, cqe := c.entry(prod)
		if c.cleans(cqe, key, srq) {
			freed++
			continue
		}
		if freed == 0 {
			continue
		}
		doff, dcqe := c.entry(prod + freed)
		owner := dcqe[63] & 1
		copy(c.buf[doff:doff+c.sz], c.buf[off:off+c.sz])
		dcqe[63] = dcqe[63]&^1 | owner
	}
	if freed != 0 {
		c.ci += freed
		barrier.UDMAToDeviceBarrier() // the moved entries before the consumer index
		c.updateConsIndex()
	}
}

// swOwned reports whether the entry at index n holds a CQE the device
// handed to software (get_sw_cqe): a valid opcode and the owner bit of
// n's pass over the ring.
func (c *CQ) swOwned(n uint32) bool {
	_, cqe := c.entry(n)
	own := cqe[63]
	return own>>4 != uint8(mlx.MLX5_CQE_INVALID) && own&1 == uint8(n>>c.ownSh&1)
}

// cleans reports whether cqe belongs to the QP of key (free_res_cqe),
// giving an SRQ WQE a responder CQE consumed back to srq.
func (c *CQ) cleans(cqe []byte, key uint32, srq SharedRecvQueue) bool {
	got := be.Uint32(cqe[56:60]) & 0xffffff // sop_drop_qpn
	if c.v1 {
		got = be.Uint32(cqe[32:36]) & 0xffffff // srqn_uidx
	}
	if got != key {
		return false
	}
	switch cqe[63] >> 4 {
	case opRespImm, opRespSend, opRespSImm, opRespSInv, opRespErr:
		if srq != nil {
			srq.Free(uint32(be.Uint16(cqe[60:62])))
		}
	}
	return true
}
