package cq

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// The fast path of Poll: a requester success CQE (no inline scatter) of
// the QP polled last, whose send opcode alone gives the completion's
// opcode, flags and byte_len. Anything else takes parse, the full path;
// both give the same completions (TestFastPathAgrees).

// reqOp is what handle_good_req makes of a send opcode when neither the
// CQE's byte count nor the slot's wr_data enter into it.
type reqOp struct {
	opcode  mlx.IbvWcOpcode
	flags   mlx.IbvWcFlags
	byteLen uint32
	ok      bool // the fast path may use it
}

// reqOps is handleGoodReq tabulated by send opcode.
var reqOps = func() (t [256]reqOp) {
	var cqe [64]byte
	for sop := range t {
		switch mlx.Mlx5Opcode(sop) {
		case mlx.MLX5_OPCODE_RDMA_READ, mlx.MLX5_OPCODE_UMR, mlx.MLX5_OPCODE_SET_PSV, mlx.MLX5_OPCODE_NOP, mlx.MLX5_OPCODE_MMO:
			continue // byte_len from the CQE, or the opcode from wr_data
		}
		var wc WC
		handleGoodReq(&wc, cqe[:], mlx.Mlx5Opcode(sop), 0)
		t[sop] = reqOp{opcode: wc.Opcode, flags: wc.Flags, byteLen: wc.ByteLen, ok: true}
	}
	return t
}()

// hot is the QP the fast path completes for, kept across polls (AddQP
// clears it), and the send queue tail it has not yet given back: the tail
// only moves on, so one Retire with the last one does what one per CQE
// does; Poll gives it back before it returns and before any full-path CQE.
type hot struct {
	qp      *QP
	key     uint32
	sq      SendQueue
	mask    uint32
	tail    uint32
	pending bool
}

// flushRetire gives the pending send queue tail back.
func (c *CQ) flushRetire() {
	if c.hot.pending {
		c.hot.pending = false
		c.hot.sq.Retire(c.hot.tail)
	}
}

// fastReq completes a requester success CQE into w if the fast path
// applies, and reports whether it did; it changes nothing if not.
func (c *CQ) fastReq(cqe []byte, w *WC) bool {
	cqe = cqe[:64:64]
	if cqe[63]&0xfc != opReq<<4 { // the opcode, and no inline scatter
		return false
	}
	sq := be.Uint32(cqe[56:60])
	op := &reqOps[uint8(sq>>24)]
	key := sq & 0xffffff
	if c.v1 {
		key = be.Uint32(cqe[32:36]) & 0xffffff
	}
	if !op.ok || !c.hotFor(key) {
		return false
	}
	wrID, head, wrData := c.hot.sq.Slot(uint32(be.Uint16(cqe[60:62])) & c.hot.mask)
	if wrData != 0 {
		return false
	}
	// Field by field: a composite literal is built on the stack and
	// copied, and its wide loads stall on the narrow stores just made.
	*w = WC{}
	w.WRID, w.Opcode, w.Flags, w.ByteLen, w.QPNum = wrID, op.opcode, op.flags, op.byteLen, sq&0xffffff
	c.hot.tail, c.hot.pending = head+1, true
	return true
}

// hotFor makes the QP of key the hot one, if it has a send queue.
func (c *CQ) hotFor(key uint32) bool {
	if c.hot.qp != nil && c.hot.key == key {
		return true
	}
	qp := c.qps[key]
	if qp == nil || qp.SQ == nil {
		return false
	}
	c.flushRetire()
	c.hot = hot{qp: qp, key: key, sq: qp.SQ, mask: qp.SQ.Slots() - 1}
	return true
}
