package cq

import (
	"unsafe"

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
	buf, mask := c.buf, c.mask
	base, sh := c.sz-64, c.szShift&63
	ci := c.ci
	k := owned(buf, ci, mask, c.ownSh, sh, base, len(wc))
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

// owned counts the CQEs from index ci on, at most max, that the software
// owns (a valid opcode and the owner bit of their pass through the ring),
// as Poll reads them before its barrier. It walks each stretch up to the
// ring's end by a pointer step with the stretch's owner bit: the indexed
// loop recomputed each owner byte's offset with a variable shift, tested
// its bound and reloaded its values, 30 instructions per CQE of the
// fast path's 108. buf holds mask+1 CQEs of 1<<sh bytes, each 64-byte CQE
// at base in its slot.
func owned(buf []byte, ci, mask, ownSh, sh uint32, base, max int) int {
	sh &= 31
	stride := uintptr(1) << sh
	k := 0
	for k < max {
		n := ci + uint32(k)
		idx := int(n & mask)
		run := min(max-k, int(mask)+1-idx) // the owner bit is the same up to the ring's end
		want := uint(n>>(ownSh&31)) & 1
		first := unsafe.Pointer(&buf[idx<<sh+base+63])
		last := unsafe.Add(first, uintptr(run-1)<<sh) // within buf: idx+run-1 <= mask
		for p := first; ; {
			// Not the software's: an invalid opcode (0xf in the high
			// nibble) or the owner bit of another pass.
			if own := uint(*(*uint8)(p)); own >= 0xf0 || (own^want)&1 != 0 {
				return k + int((uintptr(p)-uintptr(first))>>sh)
			}
			// Stop at the last owner byte of the stretch: a pointer past
			// the buffer is invalid even unused.
			if p == last {
				break
			}
			p = unsafe.Add(p, stride)
		}
		k += run
	}
	return k
}

// hotRun completes the 64-byte CQEs (cqe_version 0) from ci, all the
// software's and read after the barrier, while they are fast-path
// requester completions of the QP of hotKey, whose send queue's
// bookkeeping is slots; it returns how many and the send queue tail after
// the last. It splits them into stretches up to the ring's end, which
// hotSlots.stretch walks by pointers.
func hotRun(wc []WC, buf []byte, ci, mask, hotKey uint32, slots []sq.Slot) (n int, tail uint32) {
	st := hotSlots{base: unsafe.Pointer(unsafe.SliceData(slots)), mask: uintptr(len(slots) - 1), key: hotKey}
	for n < len(wc) {
		idx := (ci + uint32(n)) & mask
		run := min(len(wc)-n, int(mask-idx)+1)                          // to the ring's end
		k, t := st.stretch((*[64]byte)(buf[int(idx)<<6:]), &wc[n], run) // buf holds mask+1 CQEs
		if k > 0 {
			tail = t
		}
		if n += k; k < run {
			break
		}
	}
	return n, tail
}

// hotSlots is what hotRun's stretches read besides the CQEs: the send
// queue's slots (an index masked by mask is within them) and the hot QP.
type hotSlots struct {
	base unsafe.Pointer
	mask uintptr
	key  uint32
}

// stretch completes up to run CQEs from cqe into w on, none past the
// ring's end, as hotRun; it returns how many and the tail after the last.
// It is a function of its own, called with few values, so that its loop
// keeps them in registers (inside hotRun, with an index per CQE, the loop
// reloaded five values from the stack for every CQE).
//
//go:noinline
func (h hotSlots) stretch(cqe *[64]byte, w *WC, run int) (n int, tail uint32) {
	for {
		sqpn := be.Uint32(cqe[56:60])
		op := &reqOps[uint8(sqpn>>24)]
		// The opcode without inline scatter, the send opcode, the QP.
		if cqe[63]&0xfc != opReq<<4 || !op.ok || sqpn&0xffffff != h.key {
			return n, tail
		}
		s := (*sq.Slot)(unsafe.Add(h.base, (uintptr(be.Uint16(cqe[60:62]))&h.mask)*unsafe.Sizeof(sq.Slot{})))
		if s.WRData != 0 {
			return n, tail
		}
		// Field by field: a composite literal is built on the stack and
		// copied, and its wide loads stall on the narrow stores just made.
		*w = WC{}
		w.WRID, w.Opcode, w.Flags, w.ByteLen, w.QPNum = s.WRID, op.opcode, op.flags, op.byteLen, h.key
		tail = s.WQEHead + 1
		// Stop at the last CQE: a pointer past the ring or past the
		// completions is invalid even unused.
		if n++; n == run {
			return n, tail
		}
		cqe = (*[64]byte)(unsafe.Add(unsafe.Pointer(cqe), 64))
		w = (*WC)(unsafe.Add(unsafe.Pointer(w), unsafe.Sizeof(WC{})))
	}
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
