package sq

import (
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// The one-call forms: a builder and ibv_wr_set_sge in one method, for
// the common work requests. Each writes what the two calls would (with the
// current wr_id and wr_flags), and is checked against the same rules, the
// builder's first; unlike the two calls, a rejected one writes nothing
// (the batch fails as the failing call would fail it).

// The builders with a one-call form, as bits of SQ.oneOK.
const (
	oneWrite = 1 << iota
	oneRead
	oneSend
)

// setOneOK computes oneOK for the current wr_flags: the builders with a
// one-call form whose work requests an SGE makes whole on this QP and
// that the QP offers with these flags. The one-call forms' fast paths
// test one bit where they tested the builder's bit and its flags (the
// checker's Ready) per call.
func (q *SQ) setOneOK() {
	q.oneOK = 0
	for _, b := range []struct {
		fn  mlx.Func
		bit uint8
	}{{mlx.FnWRRDMAWrite, oneWrite}, {mlx.FnWRRDMARead, oneRead}, {mlx.FnWRSend, oneSend}} {
		if q.chk.Whole(b.fn, mlx.FnWRSetSGE) && q.chk.FlagsOK(b.fn, q.wrFlags) {
			q.oneOK |= b.bit
		}
	}
}

// RDMAWriteSGE builds an RDMA write of length bytes at addr (under lkey)
// to raddr (under rkey): RDMAWrite then SetSGE in one call
// (ibv_wr_rdma_write, ibv_wr_set_sge). Calls that follow each other in
// a batch with no other call of the writer between them (SetWRID and the
// poller's calls aside) take its fastest path: each after the first
// checks only its length and the room. So do RDMAReadSGE's and
// SendSGE's.
func (q *SQ) RDMAWriteSGE(rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32) error {
	return q.rdmaWriteSGE(rkey, raddr, lkey, addr, length)
}

// PostRDMAWriteSGE posts one RDMA write of length bytes at addr (under
// lkey) to raddr (under rkey) with a doorbell of its own: Start,
// RDMAWriteSGE and Complete in one call (ibv_wr_start, ibv_wr_rdma_write,
// ibv_wr_set_sge, ibv_wr_complete), for a program that rings each work
// request as it comes (the latency path). It returns what those
// three calls would (ErrClosed, a batch already open, a broken rule, the
// doorbell's error) and, like them, posts nothing when a rule is broken;
// it writes nothing then either, since all its checks, Complete's too,
// come before its first store (the calls leave what their accepted calls
// wrote past the producer index). Its common case changes nothing in the
// checker's state: a batch of one whole work request leaves the chain as
// it found it.
func (q *SQ) PostRDMAWriteSGE(rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32) error {
	return q.postRDMAWriteSGE(rkey, raddr, lkey, addr, length)
}

// PostRDMAReadSGE is PostRDMAWriteSGE for an RDMA read (RDMAReadSGE):
// ibv_wr_start, ibv_wr_rdma_read, ibv_wr_set_sge, ibv_wr_complete.
func (q *SQ) PostRDMAReadSGE(rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32) error {
	return q.postSGE(mlx.FnWRRDMARead, mlx.MLX5_OPCODE_RDMA_READ, oneRead, mlx.WQERaddrSegSize, rkey, raddr, lkey, addr, length, true)
}

// PostSendSGE is PostRDMAWriteSGE for a send (SendSGE): ibv_wr_start,
// ibv_wr_send, ibv_wr_set_sge, ibv_wr_complete.
func (q *SQ) PostSendSGE(lkey uint32, addr uint64, length uint32) error {
	return q.postSGE(mlx.FnWRSend, mlx.MLX5_OPCODE_SEND, oneSend, 0, 0, 0, lkey, addr, length, true)
}

// postOne is the general case of the Post forms: the three calls, but
// with every check made before the first store, so that a batch that
// fails writes nothing: the one-call form's checks, and Complete's (a
// work request the builder and one SGE leave incomplete, such as a DCI's
// without its address, is not written at all). A failed batch is
// completed as the calls would complete it: rolled back, Last cleared.
//
//go:noinline
func (q *SQ) postOne(fn mlx.Func, opcode mlx.Opcode, bit uint8, hdr int, rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32) error {
	if int32(q.fastEnd-q.curPost) < 1 && q.refresh() && int32(q.fastEnd-q.curPost) >= 1 {
		// The fast path again, with the room the poller returned.
		return q.postSGE(fn, opcode, bit, hdr, rkey, raddr, lkey, addr, length, true)
	}
	if err := q.Start(); err != nil {
		return err
	}
	if whole, err := q.oneCheck(fn, hdr, length); err == nil && whole {
		q.oneWrite(opcode, hdr, true, rkey, raddr, lkey, addr, length)
	}
	return q.Complete() // the latched error, Complete's own, or the posted batch
}

// rdmaWriteSGE is postSGE for an RDMA write with the builder's constants
// folded in (the checker's table entries at constant offsets, the WQE's
// size and segment offsets constants): the commonest one-call form.
//
// A write that follows another with nothing between them (the checker's
// InRun: its state word is the one this function left, which any other
// transition of the chain or new wr_flags change) is a run's next:
// the builder's bit and flags, the checker's state and the writer's own
// (the fence cache consumed, the size of the current WQE, the batch not
// empty, so that limit is set) are those the last one found or left, so
// it tests only its length and room, counts itself in the checker and
// stores what differs: its WQE, its start, slot and count, the producer
// index and where the WQE is. The first of a run records the rest.
func (q *SQ) rdmaWriteSGE(rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32) error {
	const fn, opcode, hdr = mlx.FnWRRDMAWrite, mlx.MLX5_OPCODE_RDMA_WRITE, mlx.WQERaddrSegSize
	const ds = 2 + hdr/16
	if q.chk.InRun(fn) && length-1 < q.chk.SGELimit() && int32(q.fastEnd-q.curPost) >= 1 {
		q.chk.CountRun()
		pi, mask := q.curPost, q.mask
		w := q.head + q.nreq
		*(*uint32)(unsafe.Add(q.startp, uintptr(w&mask)*4)) = pi
		*(*[2]uint64)(unsafe.Add(q.slotp, uintptr(pi&mask)*16)) = [2]uint64{q.wrID, uint64(w)<<slotHeadShift | uint64(opcode)<<slotOpShift}
		q.nreq++
		off := int(pi&mask) * wqebb
		wqe := unsafe.Add(q.ring, off)
		be64(wqe, uint64(uint32(uint16(pi))<<8|uint32(opcode))<<32|q.qpnDs3)
		*(*mlx.BE32)(unsafe.Add(wqe, 8)) = q.fcsWord
		be64(unsafe.Add(wqe, 16), raddr)
		be64(unsafe.Add(wqe, 24), uint64(rkey)<<32) // rkey, reserved 0
		be64(unsafe.Add(wqe, 32), uint64(length)<<32|uint64(lkey))
		be64(unsafe.Add(wqe, 40), addr)
		// (curData stays: after a whole work request no setter may
		// follow, and every builder sets it before its setters read it.)
		q.curCtrl = off
		q.curPost = pi + 1
		return nil
	}
	if q.oneOK&oneWrite == 0 || length-1 >= q.chk.SGELimit() || int32(q.fastEnd-q.curPost) < 1 && !q.refreshed() || !q.chk.Free() {
		return q.postSGESlow(fn, opcode, oneWrite, hdr, rkey, raddr, lkey, addr, length)
	}
	q.chk.OpenRun(fn)
	pi, off := q.claim(uint8(opcode))
	wqe := unsafe.Add(q.ring, off)
	be64(wqe, uint64(uint32(uint16(pi))<<8|uint32(opcode))<<32|q.qpnDs3)
	be32(unsafe.Add(wqe, 8), uint32(q.fcs|q.fmCache&q.keepFm))
	q.fmCache = 0
	be64(unsafe.Add(wqe, 16), raddr)
	be64(unsafe.Add(wqe, 24), uint64(rkey)<<32) // rkey, reserved 0
	be64(unsafe.Add(wqe, 32), uint64(length)<<32|uint64(lkey))
	be64(unsafe.Add(wqe, 40), addr)
	q.curCtrl, q.curSize, q.curData = off, ds, off+16+hdr
	q.curPost = pi + 1
	return nil
}

// postRDMAWriteSGE is postSGE's Post form for an RDMA write with the
// builder's constants folded in, as rdmaWriteSGE is its one-call form
// (PostRDMAWriteSGE, the latency path: the shared form took two of its
// eleven arguments on the stack and tested the post flag, the header
// size and the builder's table index at run time; this one is 28%
// faster in internal/benchlibmlx5's test binary, 9% in gen/verify's).
// Its stores repeat rdmaWriteSGE's on purpose: a helper shared
// by the two does not inline (cost 249 against 80), one body with a
// post argument cost the one-call form 7%, and one with the builder as
// arguments cost this form 16% (docs/performance.md).
func (q *SQ) postRDMAWriteSGE(rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32) error {
	const fn, opcode, hdr = mlx.FnWRRDMAWrite, mlx.MLX5_OPCODE_RDMA_WRITE, mlx.WQERaddrSegSize
	if q.oneOK&oneWrite == 0 || length-1 >= q.chk.SGELimit() || int32(q.fastEnd-q.curPost) < 1 ||
		q.chk.IsOpen() || !q.pub.gate.EnterFast() {
		return q.postOne(fn, opcode, oneWrite, hdr, rkey, raddr, lkey, addr, length)
	}
	q.inl = false
	pi, off := q.claim(uint8(opcode))
	wqe := unsafe.Add(q.ring, off)
	const ds = 2 + hdr/16
	be64(wqe, uint64(uint32(uint16(pi))<<8|uint32(opcode))<<32|q.qpnDs3)
	be32(unsafe.Add(wqe, 8), uint32(q.fcs|q.fmCache&q.keepFm))
	q.fmCache = 0
	be64(unsafe.Add(wqe, 16), raddr)
	be64(unsafe.Add(wqe, 24), uint64(rkey)<<32) // rkey, reserved 0
	be64(unsafe.Add(wqe, 32), uint64(length)<<32|uint64(lkey))
	be64(unsafe.Add(wqe, 40), addr)
	q.curCtrl, q.curSize, q.curData = off, ds, off+16+hdr
	q.curPost = pi + 1
	q.nreq = 0 // the batch is this one work request (none was open)
	return q.ringDoorbell(1)
}

// RDMAReadSGE builds an RDMA read of length bytes from raddr (under rkey)
// into addr (under lkey): RDMARead then SetSGE in one call
// (ibv_wr_rdma_read, ibv_wr_set_sge).
func (q *SQ) RDMAReadSGE(rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32) error {
	return q.postSGE(mlx.FnWRRDMARead, mlx.MLX5_OPCODE_RDMA_READ, oneRead, mlx.WQERaddrSegSize, rkey, raddr, lkey, addr, length, false)
}

// SendSGE builds a send of length bytes at addr (under lkey): Send then
// SetSGE in one call (ibv_wr_send, ibv_wr_set_sge).
func (q *SQ) SendSGE(lkey uint32, addr uint64, length uint32) error {
	return q.postSGE(mlx.FnWRSend, mlx.MLX5_OPCODE_SEND, oneSend, 0, 0, 0, lkey, addr, length, false)
}

// postSGE writes a one-call work request: on the fast path (an RC QP, the
// checks on the checker's fast path, room for a WQEBB, a non-empty SGE)
// the whole WQE in one go, else through postSGESlow. A length of 0, or
// one the length rules refuse, fails the one compare with SGELimit. With
// post, it is a batch of its own (the Post forms): Start's checks are the
// checker's (no batch open; oneOK holds the builder's flags) and the
// gate's, and it rings the doorbell. Without post, a work request that
// follows one of the same builder with nothing between them is a run's
// next, as in rdmaWriteSGE: it stores only what differs from the last.
func (q *SQ) postSGE(fn mlx.Func, opcode mlx.Opcode, bit uint8, hdr int, rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32, post bool) error {
	next := false // a run's next: the state is the last work request's
	if post {
		// The Post forms' common case: the one-call form's tests (the
		// builder's bit, the length, room for a WQEBB), Start's and the
		// builder's (no batch open, the flags in oneOK), and the gate's,
		// last, since entering commits the batch.
		if q.oneOK&bit == 0 || length-1 >= q.chk.SGELimit() || int32(q.fastEnd-q.curPost) < 1 ||
			q.chk.IsOpen() || !q.pub.gate.EnterFast() {
			return q.postOne(fn, opcode, bit, hdr, rkey, raddr, lkey, addr, length)
		}
		q.inl = false
	} else if q.chk.InRun(fn) && length-1 < q.chk.SGELimit() && int32(q.fastEnd-q.curPost) >= 1 {
		q.chk.CountRun()
		next = true
	} else {
		if q.oneOK&bit == 0 || length-1 >= q.chk.SGELimit() || int32(q.fastEnd-q.curPost) < 1 && !q.refreshed() || !q.chk.Free() {
			return q.postSGESlow(fn, opcode, bit, hdr, rkey, raddr, lkey, addr, length)
		}
		q.chk.OpenRun(fn)
	}
	pi, mask := q.curPost, q.mask
	w := q.head + q.nreq
	ds := 2 + hdr/16
	fcs := q.fcs
	if !next {
		if w == q.tail {
			q.limit = pi + q.n // the oldest WQE in flight
		}
		fcs |= q.fmCache & q.keepFm
		q.fmCache = 0
		q.curSize = ds
	}
	*(*uint32)(unsafe.Add(q.startp, uintptr(w&mask)*4)) = pi
	*(*[2]uint64)(unsafe.Add(q.slotp, uintptr(pi&mask)*16)) = [2]uint64{q.wrID, uint64(w)<<slotHeadShift | uint64(opcode)<<slotOpShift}
	q.nreq++
	off := int(pi&mask) * wqebb
	wqe := unsafe.Add(q.ring, off)
	// The ctrl segment: opcode and index, then qpn and ds, in one store;
	// signature 0, stream id 0 and fm_ce_se in another.
	be64(wqe, uint64(uint32(uint16(pi))<<8|uint32(opcode))<<32|uint64(q.qpn<<8|uint32(ds)))
	be32(unsafe.Add(wqe, 8), uint32(fcs))
	d := unsafe.Add(wqe, 16)
	if hdr != 0 {
		be64(d, raddr)
		be64(unsafe.Add(d, 8), uint64(rkey)<<32) // rkey, reserved 0
		d = unsafe.Add(d, 16)
	}
	be64(d, uint64(length)<<32|uint64(lkey)) // byte_count, lkey
	be64(unsafe.Add(d, 8), addr)
	q.curCtrl, q.curData = off, off+16+hdr
	q.curPost = pi + 1
	return q.posted(post)
}

// postSGESlow is postSGE's general path (bit: the builder's one-call
// bit; 0 never tries the fast path again): the builder's checks, its room,
// the setter's checks and the room of the whole WQE, then the WQE as the
// two calls write it.
//
//go:noinline
func (q *SQ) postSGESlow(fn mlx.Func, opcode mlx.Opcode, bit uint8, hdr int, rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32) error {
	if bit != 0 && q.oneOK&bit != 0 && length-1 < q.chk.SGELimit() && q.requick(fn) {
		return q.postSGE(fn, opcode, bit, hdr, rkey, raddr, lkey, addr, length, false)
	}
	whole, err := q.oneCheck(fn, hdr, length)
	if err != nil {
		return err
	}
	q.oneWrite(opcode, hdr, whole, rkey, raddr, lkey, addr, length)
	return nil
}

// oneCheck makes the checks of a one-call form's builder and SGE, in the
// calls' order and before any store: the builder's, its room, the
// setter's and the room of the whole WQE. whole: the setter made the work
// request whole.
func (q *SQ) oneCheck(fn mlx.Func, hdr int, length uint32) (whole bool, err error) {
	set := mlx.FnWRSetSGE
	if err := q.chk.Builder(fn, q.wrFlags); err != nil {
		return false, err
	}
	if err := q.budget(fn, 1); err != nil {
		return false, err
	}
	size := 16 + q.transport() + hdr
	if err := q.room(fn, size); err != nil {
		return false, err
	}
	if whole, err = q.chk.Data(set, 1, 0); err != nil {
		return false, err
	}
	if err := q.chk.SGE(set, length); err != nil {
		return false, err
	}
	if length != 0 {
		size += mlx.WQEDataSegSize
	}
	return whole, q.room(set, size)
}

// oneWrite writes the WQE of a one-call form that oneCheck accepted, as
// the builder and SetSGE write it.
func (q *SQ) oneWrite(opcode mlx.Opcode, hdr int, whole bool, rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32) {
	t := q.transport()
	q.initWQE(opcode, 0, q.wrFlags)
	q.curSize = (16 + t + hdr) / 16
	r := q.wrap(q.curCtrl + 16 + t)
	q.curData = r + hdr
	if hdr != 0 {
		q.setRaddr(r, rkey, raddr)
	}
	if length != 0 {
		d := (*mlx.WQEDataSeg)(q.at(q.curData))
		d.SetByteCount(length)
		d.SetLKey(lkey)
		d.SetAddr(addr)
		q.curSize++
	}
	q.done(whole)
}
