package sq

import (
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// The fast path of the common data work requests: on an RC QP, a builder
// whose checks pass on the checker's fast path (one compare) and whose
// first WQEBB fits max_post and the ring writes its WQE here, in straight
// line code; everything else (a DCI's address vector, a full queue, a
// broken rule) takes the general path, which checks in full and names the
// rule. Both write the same bytes (TestFastMatchesGeneral).

// quick reports whether builder fn takes the fast path.
func (q *SQ) quick(fn mlx.Func) bool {
	return !q.dci && q.chk.Ready(fn, q.wrFlags) && q.fits(1) && int32(q.limit-q.curPost) >= 1
}

// openQuick opens builder fn's work request after quick said it may, and
// starts its WQE at the producer index: the bookkeeping (as book), the
// ctrl segment's first word and bytes 8..11 (as initWQE). It returns the
// WQE's first WQEBB.
func (q *SQ) openQuick(fn mlx.Func, opcode mlx.Opcode) *[wqebb]byte {
	q.chk.Open(fn)
	pi, mask := q.curPost, q.mask
	w := q.head + q.nreq
	if w == q.tail {
		q.limit = pi + q.n // the oldest WQE in flight
	}
	// Both have mask+1 entries (New): no bounds checks.
	*(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(q.start)), uintptr(w&mask)*4)) = pi
	*(*Slot)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(q.Slots)), uintptr(pi&mask)*unsafe.Sizeof(Slot{}))) = Slot{WRID: q.wrID, WQEHead: w}
	q.nreq++
	off := int(pi&mask) * wqebb
	q.curCtrl = off
	wqe := (*[wqebb]byte)(unsafe.Add(q.ring, off))
	(*mlx.WQECtrlSeg)(wqe[0:16]).SetOpmodIdxOpcode(uint32(uint16(pi))<<8 | uint32(opcode))
	// Bytes 8..11 in one store: signature 0, stream id 0, fm_ce_se.
	*(*mlx.BE32)(unsafe.Pointer(&wqe[8])) = mlx.ToBE32(uint32(q.fcs | q.fmCache&q.keepFm))
	q.fmCache = 0
	return wqe
}

// setSGEQuick is SetSGE's fast path: a data segment that does not start a
// WQEBB (so the ring's room was checked by the builder), on a work
// request that takes it on the checker's fast path. It reports false,
// having done nothing, otherwise.
func (q *SQ) setSGEQuick(lkey uint32, addr uint64, length uint32) bool {
	if length == 0 || q.curSize&3 == 0 {
		return false
	}
	ok, whole := q.chk.TryData(mlx.FnWRSetSGE, 1)
	if !ok {
		return false
	}
	d := (*mlx.WQEDataSeg)(q.at(q.curData))
	d.SetByteCount(length)
	d.SetLkey(lkey)
	d.SetAddr(addr)
	n := q.curSize + 1
	q.curSize = n
	if whole {
		q.ctrl().SetQPNDS(q.qpn<<8 | uint32(n))
		q.curPost += uint32(n+3) / 4
	}
	return true
}
