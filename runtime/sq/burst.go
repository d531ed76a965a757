package sq

import (
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// RDMAWriteReq is one RDMA write of a burst: Length bytes at Addr (under
// LKey) to Raddr (under RKey), reported with WRID.
type RDMAWriteReq struct {
	WRID   uint64
	Raddr  uint64
	Addr   uint64
	RKey   uint32
	LKey   uint32
	Length uint32
}

// RDMAWriteBurst builds one RDMA write per request, each with a single
// scatter/gather entry and the current wr_flags. It writes exactly what
// SetWRID, RDMAWrite and SetSGE called for each request would, and is
// checked against the same rules, but checks them once for the burst and
// writes each WQE in one go: the fast path of a stream of writes. On an
// RC QP with room for the whole burst it never fails; otherwise the
// state machine checks the calls one by one, and the WQEs are written
// only when all passed: a rejected burst writes nothing (and fails the
// batch, as its first failing call would).
func (q *SQ) RDMAWriteBurst(reqs []RDMAWriteReq) error {
	// The fast path's tests, written out here (each call a burst makes
	// costs about 3 ns, as much as these tests: docs/performance.md):
	// room below fastEnd (never on a DCI), the builder ready and offered
	// with the current wr_flags, the setter making each work request
	// whole on this QP (oneOK, computed by SetWRFlags), every length
	// within SGELimit (0 included).
	n := len(reqs)
	if n == 0 || q.oneOK&oneWrite == 0 || !q.burstRoom(n) || !q.chk.Free() ||
		lengthsOR(reqs) > q.chk.SGELimit() && !q.lengthsEach(reqs) {
		return q.rdmaWriteChecked(reqs)
	}
	q.chk.OpenBurst(mlx.FnWRRDMAWrite, mlx.FnWRSetSGE, n)
	// fm_ce_se as the one-call forms write it: the flags' part (SetWRFlags)
	// in every WQE, the cached fence in the first only (none when the flags
	// fence).
	fcs := q.fcs
	fcsFirst := fcs | q.fmCache&q.keepFm
	q.fmCache = 0
	// The ctrl segment's first 8 bytes (opcode and index; qpn and ds) and
	// bytes 8..11 (fm_ce_se), a data segment's byte count and lkey, the
	// remote address segment's rkey and reserved word: one store each.
	word2 := mlx.ToBE32(uint32(fcs))
	qpnDs := q.qpnDs3
	ring, mask, first, w := q.ring, q.mask, q.curPost, q.head+q.nreq
	if w == q.tail {
		q.limit = first + q.n // the first WQE is the oldest in flight
	}
	// The loop runs over chunks in which neither the WQEs and slots (index
	// pi), the starts (index pi+d) nor the low byte of the ctrl segment's
	// 16-bit index wrap, so that each is a pointer or word stepped by its
	// stride: the ctrl word is kept as it is stored (big-endian), and the
	// index's low byte steps in it with no carry. Slots and start have
	// mask+1 entries (New): no bounds checks.
	d, end := w-first, first+uint32(n)
	r := (*RDMAWriteReq)(unsafe.Pointer(unsafe.SliceData(reqs)))
	slots, start := unsafe.Pointer(unsafe.SliceData(q.Slots)), unsafe.Pointer(unsafe.SliceData(q.start))
	for pi := first; pi != end; {
		k := min(end-pi, mask+1-pi&mask, mask+1-(pi+d)&mask, 0x100-pi&0xff)
		c := burstChunk{
			r:     r,
			wqe:   unsafe.Add(ring, uintptr(pi&mask)*wqebb),
			slot:  (*Slot)(unsafe.Add(slots, uintptr(pi&mask)*unsafe.Sizeof(Slot{}))),
			start: (*uint32)(unsafe.Add(start, uintptr((pi+d)&mask)*4)),
			ctrl:  uint64(mlx.ToBE64(uint64(uint32(uint16(pi))<<8|uint32(mlx.MLX5_OPCODE_RDMA_WRITE))<<32 | qpnDs)),
			tail:  slotTail(pi+d, 0, uint8(mlx.MLX5_OPCODE_RDMA_WRITE)),
			step:  uint64(mlx.ToBE64(1 << 40)),
			pi:    pi, word2: word2,
		}
		c.write(k)
		if pi += k; pi != end { // never past the last request (checkptr)
			r = (*RDMAWriteReq)(unsafe.Add(unsafe.Pointer(r), uintptr(k)*unsafe.Sizeof(RDMAWriteReq{})))
		}
	}
	pi := end
	*(*mlx.BE32)(unsafe.Add(ring, uintptr(first&mask)*wqebb+8)) = mlx.ToBE32(uint32(fcsFirst))
	q.curCtrl = int((pi-1)&mask) * wqebb
	q.curSize = 3
	if reqs[n-1].Length == 0 {
		q.curSize = 2
	}
	q.curData = q.curCtrl + 48
	q.wrID = reqs[n-1].WRID
	q.nreq += uint32(n)
	q.curPost = pi
	return nil
}

// burstRoom reports whether n one-WQEBB WQEs fit the ring and max_post:
// below fastEnd (which is curPost on a DCI), read again if the poller
// returned room.
func (q *SQ) burstRoom(n int) bool {
	return int(int32(q.fastEnd-q.curPost)) >= n || q.refresh() && int(int32(q.fastEnd-q.curPost)) >= n
}

// lengthsOR is the OR of the lengths of reqs (at least one). The burst's
// WQEs are written in one pass that cannot stop, so a length the rules
// refuse (bit 31 set, above max_msg_sz) sends the whole burst to
// rdmaWriteChecked before anything is written, and that names the
// request. The lengths are ORed, four requests a step: an OR is at least
// each of its terms, so an OR within the limit proves every length within
// it, at one load-and-OR per request (the subtract-and-OR walk this
// replaced took eight instructions a request, a tenth of the burst's).
// Lengths whose OR passes the limit (1 GiB and 1 under a max_msg_sz of
// 1 GiB) are compared one by one (lengthsEach).
func lengthsOR(reqs []RDMAWriteReq) uint32 {
	const size = unsafe.Sizeof(RDMAWriteReq{})
	var or uint32
	p, n := unsafe.Pointer(unsafe.SliceData(reqs)), len(reqs)
	for ; n > 4; n -= 4 { // at least one request left after the step (checkptr)
		r := (*[4]RDMAWriteReq)(p)
		or |= r[0].Length | r[1].Length | r[2].Length | r[3].Length
		p = unsafe.Add(p, 4*size)
	}
	for {
		or |= (*RDMAWriteReq)(p).Length
		if n--; n == 0 {
			return or
		}
		p = unsafe.Add(p, size)
	}
}

// testHookBurstChecked, set by tests only, is called when a burst takes
// the general path: the fast path's tests are written out in
// RDMAWriteBurst, and its tests say which bursts must not take it.
var testHookBurstChecked func()

// lengthsEach is the case of lengths whose OR passes the limit: each
// compared with it.
func (q *SQ) lengthsEach(reqs []RDMAWriteReq) bool {
	lim := q.chk.SGELimit()
	for i := range reqs {
		if reqs[i].Length > lim {
			return false
		}
	}
	return true
}

// rdmaWriteChecked is RDMAWriteBurst's general case: the checks of every
// RDMAWrite and SetSGE call first, then the room for all the WQEs, then
// the WQEs as those calls write them.
func (q *SQ) rdmaWriteChecked(reqs []RDMAWriteReq) error {
	if testHookBurstChecked != nil {
		testHookBurstChecked()
	}
	fn, set := mlx.FnWRRDMAWrite, mlx.FnWRSetSGE
	t := q.transport()
	wqebbs := 0
	whole := false
	for i := range reqs {
		if err := q.chk.Builder(fn, q.wrFlags); err != nil {
			return err
		}
		if err := q.budget(fn, i+1); err != nil {
			return err
		}
		var err error
		if whole, err = q.chk.Data(set, 1, 0); err != nil {
			return err
		}
		if err := q.chk.SGE(set, reqs[i].Length); err != nil {
			return err
		}
		size := 16 + t + mlx.WQERaddrSegSize
		if reqs[i].Length != 0 {
			size += mlx.WQEDataSegSize
		}
		wqebbs += (size + wqebb - 1) / wqebb
	}
	if err := q.room(fn, wqebbs*wqebb); err != nil {
		return err
	}
	for i := range reqs {
		r := &reqs[i]
		q.wrID = r.WRID
		q.initWQE(mlx.MLX5_OPCODE_RDMA_WRITE, 0, q.wrFlags)
		q.curSize = (16 + t + mlx.WQERaddrSegSize) / 16
		off := q.wrap(q.curCtrl + 16 + t)
		q.curData = off + mlx.WQERaddrSegSize
		q.setRaddr(off, r.RKey, r.Raddr)
		if r.Length != 0 {
			d := (*mlx.WQEDataSeg)(q.at(q.curData))
			d.SetByteCount(r.Length)
			d.SetLKey(r.LKey)
			d.SetAddr(r.Addr)
			q.curSize++
		}
		q.done(whole) // the checks passed for every request: each is as whole as the last
	}
	return nil
}

// burstChunk is where RDMAWriteBurst's next WQE goes, in a stretch where
// no index wraps: the request, the WQE, its slot and start entry, its ctrl
// segment's first 8 bytes as stored (big-endian) and its slot's second
// word, its producer index, and the stored ctrl word's step (the index's
// low byte; a field so that the loop keeps it in a register: as a
// constant it was loaded afresh each request).
type burstChunk struct {
	r     *RDMAWriteReq
	wqe   unsafe.Pointer
	slot  *Slot
	start *uint32
	ctrl  uint64
	tail  uint64
	step  uint64
	pi    uint32
	word2 mlx.BE32
}

// write writes k WQEs of the burst. It is a function of its own so that
// the register allocator has only the chunk's values to keep in registers
// (inside RDMAWriteBurst it spilled them around the loop). The slot's
// second word steps by one work request (its head does not wrap in a
// chunk: New makes the slots a power of two, which divides 2^32).
//
//go:noinline
func (c burstChunk) write(k uint32) {
	r, wqe, slot, st, ctrl, tail, step, pi, word2 := c.r, c.wqe, c.slot, c.start, c.ctrl, c.tail, c.step, c.pi, c.word2
	for end := pi + k; ; {
		cw := ctrl
		if r.Length != 0 {
			be64(unsafe.Add(wqe, 32), lkeyLength(r))
			be64(unsafe.Add(wqe, 40), r.Addr)
		} else {
			cw -= uint64(mlx.ToBE64(1)) // ds 2: an empty SGE adds no data segment
		}
		*(*uint64)(wqe) = cw
		*(*mlx.BE32)(unsafe.Add(wqe, 8)) = word2
		be64(unsafe.Add(wqe, 16), r.Raddr)
		be64(unsafe.Add(wqe, 24), uint64(r.RKey)<<32) // rkey, reserved 0
		setSlot(slot, r.WRID, tail)
		*st = pi
		// Stop before stepping past the last: a pointer past the end of
		// the requests (or the ring) is invalid even unused (checkptr).
		pi++
		if pi == end {
			return
		}
		ctrl += step
		tail += 1 << slotHeadShift
		r = (*RDMAWriteReq)(unsafe.Add(unsafe.Pointer(r), unsafe.Sizeof(RDMAWriteReq{})))
		wqe = unsafe.Add(wqe, wqebb)
		slot = (*Slot)(unsafe.Add(unsafe.Pointer(slot), unsafe.Sizeof(Slot{})))
		st = (*uint32)(unsafe.Add(unsafe.Pointer(st), 4))
	}
}
