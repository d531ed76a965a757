package cq

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/barrier"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
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
	slots   []sq.Slot // sq's Slots when sq is the SQ adapter
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

// pollFast completes CQEs into wc for as long as the fast path applies,
// and returns how many; it stops at an empty CQ or, leaving it to the
// full path, at a CQE the fast path does not handle. It is nextCQE and
// req with the work done once per call hoisted out of the loop: the hot
// QP's fields live in locals and are written back when it changes, and
// the loop that reads CQE bodies calls nothing (a call spills every
// register in Go's ABI).
func (c *CQ) pollFast(wc []WC) int {
	buf, mask, ownSh := c.buf, c.mask, c.ownSh
	base, sh, v1 := c.sz-64+63, c.szShift, c.v1
	ci := c.ci
	// How many CQEs from ci are the software's: their owner bits first,
	// then one barrier for all of them (libmlx5 has one per CQE; one
	// after the last owner bit read orders every body read after it).
	k := 0
	for ; k < len(wc); k++ {
		n := ci + uint32(k)
		own := buf[int(n&mask)<<sh+base]
		if own>>4 == uint8(mlx.MLX5_CQE_INVALID) || own&1 != uint8(n>>ownSh&1) {
			break
		}
	}
	if k == 0 {
		return 0
	}
	barrier.UDMAFromDeviceBarrier()
	base -= 63
	hotKey, hotOK, slots, sqMask := c.hot.key, c.hot.qp != nil, c.hot.slots, c.hot.mask
	tail, pending := c.hot.tail, c.hot.pending
	i := 0
	for ; i < k; i++ {
		off := int(ci&mask)<<sh + base
		cqe := buf[off : off+64 : off+64]
		if cqe[63]&0xfc != opReq<<4 { // the opcode, and no inline scatter
			break
		}
		sqpn := be.Uint32(cqe[56:60])
		op := &reqOps[uint8(sqpn>>24)]
		key := sqpn & 0xffffff
		if v1 {
			key = be.Uint32(cqe[32:36]) & 0xffffff
		}
		if !op.ok {
			break
		}
		if key != hotKey || !hotOK {
			c.hot.tail, c.hot.pending = tail, pending
			if !c.hotFor(key) {
				break
			}
			hotKey, hotOK, slots, sqMask = key, true, c.hot.slots, c.hot.mask
			tail, pending = c.hot.tail, c.hot.pending
		}
		idx := uint32(be.Uint16(cqe[60:62]))
		var wrID uint64
		var head, wrData uint32
		if len(slots) > 0 {
			s := &slots[idx&uint32(len(slots)-1)]
			wrID, head, wrData = s.WRID, s.WQEHead, s.WRData
		} else {
			wrID, head, wrData = c.hot.sq.Slot(idx & sqMask)
		}
		if wrData != 0 {
			break
		}
		// Field by field: a composite literal is built on the stack and
		// copied, and its wide loads stall on the narrow stores just made.
		w := &wc[i]
		*w = WC{}
		w.WRID, w.Opcode, w.Flags, w.ByteLen, w.QPNum = wrID, op.opcode, op.flags, op.byteLen, sqpn&0xffffff
		tail, pending = head+1, true
		ci++
	}
	c.ci = ci
	c.hot.tail, c.hot.pending = tail, pending
	return i
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
	if a, ok := qp.SQ.(SQ); ok && len(a.Q.Slots) == int(c.hot.mask)+1 {
		c.hot.slots = a.Q.Slots // runtime/sq's bookkeeping, read without a call
	}
	return true
}
