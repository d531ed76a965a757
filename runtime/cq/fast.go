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
	opcode  mlx.IBVWCOpcode
	flags   mlx.WCFlags
	byteLen uint32
	ok      bool // the fast path may use it
}

// reqOps is handleGoodReq tabulated by send opcode.
var reqOps = func() (t [256]reqOp) {
	var cqe [64]byte
	for sop := range t {
		switch mlx.Opcode(sop) {
		case mlx.MLX5_OPCODE_RDMA_READ, mlx.MLX5_OPCODE_UMR, mlx.MLX5_OPCODE_SET_PSV, mlx.MLX5_OPCODE_NOP, mlx.MLX5_OPCODE_MMO:
			continue // byte_len from the CQE, or the opcode from wr_data
		}
		var wc WC
		handleGoodReq(&wc, cqe[:], mlx.Opcode(sop), 0)
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
	acq     *sq.SQ    // the writer whose Slots those are
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
// req with the work done once per call hoisted out of the loop: the
// owner bits of the batch first, then one barrier (libmlx5 has one per
// CQE; one after the last owner bit read orders every body read after
// it), then the bodies, in hotRun while the QP stays the same, in fastOne
// when it changes or its send queue is not runtime/sq's.
func (c *CQ) pollFast(wc []WC) int {
	buf, mask, ownSh := c.buf, c.mask, c.ownSh
	base, sh := c.sz-64, c.szShift&63
	ci := c.ci
	k := 0
	for ; k < len(wc); k++ {
		n := ci + uint32(k)
		own := buf[int(n&mask)<<sh+base+63]
		if own>>4 == uint8(mlx.MLX5_CQE_INVALID) || own&1 != uint8(n>>ownSh&1) {
			break
		}
	}
	if k == 0 {
		return 0
	}
	barrier.UDMAFromDeviceBarrier()
	i := 0
	for i < k {
		if h := &c.hot; h.qp != nil && len(h.slots) > 0 && c.sz == 64 && !c.v1 {
			h.acq.Acquire() // the writer's slots as of its published head
			n, tail := hotRun(wc[i:k], buf, ci, mask, h.key, h.slots)
			if n > 0 {
				h.tail, h.pending = tail, true
				ci += uint32(n)
				if i += n; i == k {
					break
				}
			}
		}
		off := int(ci&mask)<<sh + base
		if !c.fastOne(buf[off:off+64:off+64], &wc[i]) {
			break
		}
		ci++
		i++
	}
	c.ci = ci
	return i
}

// hotRun completes the 64-byte CQEs (cqe_version 0) from ci, all the
// software's and read after the barrier, while they are fast-path
// requester completions of the QP of hotKey, whose send queue's
// bookkeeping is slots; it returns how many and the send queue tail after
// the last. It calls nothing and takes few values, so that its loop keeps
// them in registers.
func hotRun(wc []WC, buf []byte, ci, mask, hotKey uint32, slots []sq.Slot) (n int, tail uint32) {
	smask := uint32(len(slots) - 1)
	for i := range wc {
		off := int((ci+uint32(i))&mask) << 6
		cqe := buf[off : off+64 : off+64]
		sqpn := be.Uint32(cqe[56:60])
		op := &reqOps[uint8(sqpn>>24)]
		// The opcode without inline scatter, the send opcode, the QP.
		if cqe[63]&0xfc != opReq<<4 || !op.ok || sqpn&0xffffff != hotKey {
			return i, tail
		}
		s := &slots[uint32(be.Uint16(cqe[60:62]))&smask]
		if s.WRData != 0 {
			return i, tail
		}
		// Field by field: a composite literal is built on the stack and
		// copied, and its wide loads stall on the narrow stores just made.
		w := &wc[i]
		*w = WC{}
		w.WRID, w.Opcode, w.Flags, w.ByteLen, w.QPNum = s.WRID, op.opcode, op.flags, op.byteLen, hotKey
		tail = s.WQEHead + 1
	}
	return len(wc), tail
}

// fastOne completes one CQE, read after the barrier, into w if the fast
// path applies (making its QP the hot one), and reports whether it did;
// it changes nothing if not.
func (c *CQ) fastOne(cqe []byte, w *WC) bool {
	cqe = cqe[:64:64]
	if cqe[63]&0xfc != opReq<<4 {
		return false
	}
	sqpn := be.Uint32(cqe[56:60])
	op := &reqOps[uint8(sqpn>>24)]
	key := sqpn & 0xffffff
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
	*w = WC{}
	w.WRID, w.Opcode, w.Flags, w.ByteLen, w.QPNum = wrID, op.opcode, op.flags, op.byteLen, sqpn&0xffffff
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
	if a, ok := qp.SQ.(SQ); ok && len(a.Q.Slots) == int(c.hot.mask)+1 {
		c.hot.slots, c.hot.acq = a.Q.Slots, a.Q // runtime/sq's bookkeeping, read without a call
	}
	return true
}
