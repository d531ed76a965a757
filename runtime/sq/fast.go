package sq

import (
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// The fast path of the common data work requests: on an RC QP, a builder
// whose checks pass on the checker's fast path (one compare) and whose
// first WQEBB fits max_post and the ring writes its WQE here, in straight
// line code with no call; everything else (a DCI's address vector, a full
// queue, a broken rule) takes the general path, which checks in full and
// names the rule. Both write the same bytes (TestFastMatchesGeneral).

// quick reports whether builder fn takes the fast path.
func (q *SQ) quick(fn mlx.Func) bool {
	return int32(q.fastEnd-q.curPost) >= 1 && q.chk.Ready(fn, q.wrFlags)
}

// refreshed reports whether a WQEBB fits after reading the poller's
// tail, for a one-call form's fast path that found fastEnd reached: most
// often the first work request of a batch (Start does not read the
// tail), which then takes its fast path at once where it went through
// the general path's requick and back (three calls more, every max_post
// work requests of a stream: 2% of a one-call write's instructions). A
// run's next does not test it: a call there costs its arguments' spills
// on every write.
func (q *SQ) refreshed() bool {
	return q.refresh() && int32(q.fastEnd-q.curPost) >= 1
}

// requick is quick again for a builder that missed the fast path, after
// reading the poller's tail if fastEnd was reached (Start does not read
// it: a batch reads it when the ring looks full). The general paths call
// it first, so that room the poller returned costs one read, not a work
// request on the general path.
func (q *SQ) requick(fn mlx.Func) bool {
	return int32(q.fastEnd-q.curPost) < 1 && q.refresh() && q.quick(fn)
}

// be64 stores v big-endian at p: two adjacent big-endian 32-bit fields
// (the high one first) in one store.
func be64(p unsafe.Pointer, v uint64) { *(*mlx.BE64)(p) = mlx.ToBE64(v) }

// be32 stores v big-endian at p.
func be32(p unsafe.Pointer, v uint32) { *(*mlx.BE32)(p) = mlx.ToBE32(v) }

// post builds a send or RDMA work request (hdr is 0 or the remote address
// segment's size): the fast path when it may, else dataWR.
func (q *SQ) post(fn mlx.Func, opcode mlx.Opcode, hdr int, rkey uint32, raddr uint64) error {
	if !q.quick(fn) {
		return q.postSlow(fn, opcode, hdr, rkey, raddr)
	}
	q.chk.Open(fn)
	pi, off := q.claim(uint8(opcode))
	wqe := unsafe.Add(q.ring, off)
	be32(wqe, uint32(uint16(pi))<<8|uint32(opcode))
	// Bytes 8..11 in one store: signature 0, stream id 0, fm_ce_se.
	// (fenceCE, with the flags' part computed by SetWRFlags.)
	be32(unsafe.Add(wqe, 8), uint32(q.fcs|q.fmCache&q.keepFm))
	q.fmCache = 0
	if hdr != 0 {
		be64(unsafe.Add(wqe, 16), raddr)
		be64(unsafe.Add(wqe, 24), uint64(rkey)<<32) // rkey, reserved 0
	}
	q.curCtrl, q.curSize, q.curData = off, 1+hdr/16, off+16+hdr
	return nil
}

// rdmaWrite is post for an RDMA write, the commonest builder, with the
// builder's constants folded in: the checker's table entry at a constant
// offset and no header-size arithmetic (issue 26: about 10 instructions
// of a per-call work request's 120).
//
// A write that follows a whole write (its SGE by SetSGE or a one-call
// form) with nothing between them is a run's next (the checker's InRun,
// as in rdmaWriteSGE): the builder's checks and flags are those the last
// one passed, the fence cache is consumed and the batch is not empty, so
// it tests its room only. Either way it opens the work request with
// OpenPair, so that SetSGE, called next, takes its pair's path.
func (q *SQ) rdmaWrite(rkey uint32, raddr uint64) error {
	const fn, opcode = mlx.FnWRRDMAWrite, mlx.MLX5_OPCODE_RDMA_WRITE
	if q.chk.InRun(fn) && int32(q.fastEnd-q.curPost) >= 1 {
		q.chk.OpenPair()
		pi, off := q.claimNext(uint8(opcode))
		wqe := unsafe.Add(q.ring, off)
		be32(wqe, uint32(uint16(pi))<<8|uint32(opcode))
		*(*mlx.BE32)(unsafe.Add(wqe, 8)) = q.fcsWord
		be64(unsafe.Add(wqe, 16), raddr)
		be64(unsafe.Add(wqe, 24), uint64(rkey)<<32) // rkey, reserved 0
		q.curCtrl, q.curSize, q.curData = off, 1+mlx.WQERaddrSegSize/16, off+16+mlx.WQERaddrSegSize
		return nil
	}
	if !q.quick(fn) && !q.requick(fn) {
		return q.postSlow(fn, opcode, mlx.WQERaddrSegSize, rkey, raddr)
	}
	q.chk.OpenPair()
	pi, off := q.claim(uint8(opcode))
	wqe := unsafe.Add(q.ring, off)
	be32(wqe, uint32(uint16(pi))<<8|uint32(opcode))
	be32(unsafe.Add(wqe, 8), uint32(q.fcs|q.fmCache&q.keepFm))
	q.fmCache = 0
	be64(unsafe.Add(wqe, 16), raddr)
	be64(unsafe.Add(wqe, 24), uint64(rkey)<<32) // rkey, reserved 0
	q.curCtrl, q.curSize, q.curData = off, 1+mlx.WQERaddrSegSize/16, off+16+mlx.WQERaddrSegSize
	return nil
}

// postSlow is post's general path.
//
//go:noinline
func (q *SQ) postSlow(fn mlx.Func, opcode mlx.Opcode, hdr int, rkey uint32, raddr uint64) error {
	if q.requick(fn) {
		return q.post(fn, opcode, hdr, rkey, raddr)
	}
	r, err := q.dataWR(fn, opcode, hdr)
	if err != nil || hdr == 0 {
		return err
	}
	q.setRaddr(r, rkey, raddr)
	return nil
}

// SetSGE sets the work request's data to one scatter/gather entry; a zero
// length sends nothing. ibv_wr_set_sge; rdma-core: mlx5_send_wr_set_sge.
// Its fast path: a data segment that does not start a WQEBB (the builder
// checked the ring's room for it) of a work request that takes it on the
// checker's fast path, with a length from 1 to SGELimit (the test that
// was length == 0 also sends a length with bit 31 set, or above
// max_msg_sz, to the general path, which refuses it).
//
// The SGE of a write that RDMAWrite opened on its fast path, with nothing
// between them (the checker's InPair), makes it whole: the WQE's size is
// RDMAWrite's and its data segment inside the WQEBB RDMAWrite claimed, so
// it tests its length only.
func (q *SQ) SetSGE(lkey uint32, addr uint64, length uint32) error {
	if q.chk.InPair() && length-1 < q.chk.SGELimit() {
		q.chk.ClosePair()
		d := q.at(q.curData)
		be64(d, uint64(length)<<32|uint64(lkey)) // byte_count, lkey
		be64(unsafe.Add(d, 8), addr)
		const ds = 2 + mlx.WQERaddrSegSize/16
		q.curSize = ds
		*(*mlx.BE32)(unsafe.Add(unsafe.Pointer(q.ctrl()), 4)) = q.qpnDs3Word // qpn_ds
		q.curPost++
		return nil
	}
	n := q.curSize
	if length-1 >= q.chk.SGELimit() || n&3 == 0 {
		return q.setSGE(lkey, addr, length)
	}
	ok, whole := q.chk.TrySGE()
	if !ok {
		return q.setSGE(lkey, addr, length)
	}
	d := q.at(q.curData)
	be64(d, uint64(length)<<32|uint64(lkey)) // byte_count, lkey
	be64(unsafe.Add(d, 8), addr)
	n++
	q.curSize = n
	if whole {
		q.ctrl().SetQPNDS(q.qpn<<8 | uint32(n))
		q.curPost += uint32(n+3) / 4
	}
	return nil
}

// claim records the fast path's new work request (its start and slot,
// both with mask+1 entries since New, so no bounds checks) and returns
// its producer index and the WQE's offset in the ring. Small enough to
// inline into post and postSGE (TestMkeyFastPathsInline checks).
func (q *SQ) claim(opcode uint8) (uint32, int) {
	pi, mask := q.curPost, q.mask
	w := q.head + q.nreq
	if w == q.tail {
		q.limit = pi + q.n // the oldest WQE in flight
	}
	*(*uint32)(unsafe.Add(q.startp, uintptr(w&mask)*4)) = pi
	// The Slot in setSlot's two stores (a Slot literal is four): the wr_id
	// and slotTail(w, 0, opcode), written out to keep claim inlinable.
	*(*[2]uint64)(unsafe.Add(q.slotp, uintptr(pi&mask)*16)) = [2]uint64{q.wrID, uint64(w)<<slotHeadShift | uint64(opcode)<<slotOpShift}
	q.nreq++
	return pi, int(pi&mask) * wqebb
}

// claimNext is claim for a run's next work request: the batch holds the
// last one, so the oldest WQE in flight, and limit, stay. (rdmaWriteSGE's
// run writes the same stores inline: through claimNext the compiler
// spilled the producer index there, three instructions a write more.)
func (q *SQ) claimNext(opcode uint8) (uint32, int) {
	pi, mask := q.curPost, q.mask
	w := q.head + q.nreq
	*(*uint32)(unsafe.Add(q.startp, uintptr(w&mask)*4)) = pi
	*(*[2]uint64)(unsafe.Add(q.slotp, uintptr(pi&mask)*16)) = [2]uint64{q.wrID, uint64(w)<<slotHeadShift | uint64(opcode)<<slotOpShift}
	q.nreq++
	return pi, int(pi&mask) * wqebb
}

// setSlot writes a Slot in two 8-byte stores: the wr_id and slotTail's
// word. A composite literal is stored as a 16-byte zero and then its
// three fields, four stores where the burst's loop is bound by its
// stores (TestSlotTail checks the layout).
func setSlot(s *Slot, wrID, tail uint64) {
	*(*uint64)(unsafe.Pointer(s)) = wrID
	*(*uint64)(unsafe.Add(unsafe.Pointer(s), 8)) = tail
}
