package sq

import (
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// RDMAWriteReq is one RDMA write of a burst: Length bytes at Addr (under
// Lkey) to Raddr (under Rkey), reported with WRID.
type RDMAWriteReq struct {
	WRID   uint64
	Raddr  uint64
	Addr   uint64
	Rkey   uint32
	Lkey   uint32
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
	n := len(reqs)
	if q.dci || !q.burstRoom(n) || !q.chk.Burst(mlx.FnWRRDMAWrite, mlx.FnWRSetSGE, q.wrFlags, n) {
		return q.rdmaWriteChecked(reqs)
	}
	flags := q.wrFlags
	fcs := q.sig
	if flags&uint32(mlx.IBV_SEND_SIGNALED) != 0 {
		fcs |= ce
	}
	if flags&uint32(mlx.IBV_SEND_SOLICITED) != 0 {
		fcs |= se
	}
	first := fcs | q.fmCache // the cached fence goes to the first WQE only
	if flags&uint32(mlx.IBV_SEND_FENCE) != 0 {
		fcs |= fence
		first = fcs
	}
	q.fmCache = 0
	word2, word2First := mlx.ToBE32(uint32(fcs)), mlx.ToBE32(uint32(first))
	qpnDs3, qpnDs2 := mlx.ToBE32(q.qpn<<8|3), mlx.ToBE32(q.qpn<<8|2)
	ring, mask, pi, w := q.ring, q.mask, q.curPost, q.head+q.nreq
	// Both have mask+1 entries (New): index them without bounds checks.
	slots, start := unsafe.Pointer(unsafe.SliceData(q.Slots)), unsafe.Pointer(unsafe.SliceData(q.start))
	for i := range reqs {
		r := &reqs[i]
		slot := pi & mask
		wqe := (*[wqebb]byte)(unsafe.Add(ring, uintptr(slot)*wqebb))
		c := (*mlx.WQECtrlSeg)(wqe[0:16])
		c.SetOpmodIdxOpcode(uint32(uint16(pi))<<8 | uint32(mlx.MLX5_OPCODE_RDMA_WRITE))
		c.SetQPNDSBE(qpnDs3)
		*(*mlx.BE32)(unsafe.Pointer(&wqe[8])) = word2
		rs := (*mlx.WQERaddrSeg)(wqe[16:32])
		rs.SetRaddr(r.Raddr)
		rs.SetRkey(r.Rkey)
		rs.SetReservedBE(0)
		if r.Length != 0 {
			d := (*mlx.WQEDataSeg)(wqe[32:48])
			d.SetByteCount(r.Length)
			d.SetLkey(r.Lkey)
			d.SetAddr(r.Addr)
		} else {
			c.SetQPNDSBE(qpnDs2) // an empty SGE adds no data segment
		}
		*(*Slot)(unsafe.Add(slots, uintptr(slot)*unsafe.Sizeof(Slot{}))) = Slot{WRID: r.WRID, WQEHead: w}
		*(*uint32)(unsafe.Add(start, uintptr(w&mask)*4)) = pi
		if w == q.tail {
			q.limit = pi + q.n
		}
		pi++
		w++
	}
	*(*mlx.BE32)(unsafe.Add(ring, uintptr(q.curPost&mask)*wqebb+8)) = word2First
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

// burstRoom reports whether n one-WQEBB WQEs fit the ring and max_post.
func (q *SQ) burstRoom(n int) bool {
	return n <= int(int32(q.limit-q.curPost)) && q.fits(n)
}

// rdmaWriteChecked is RDMAWriteBurst's general case: the checks of every
// RDMAWrite and SetSGE call first, then the room for all the WQEs, then
// the WQEs as those calls write them.
func (q *SQ) rdmaWriteChecked(reqs []RDMAWriteReq) error {
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
		q.setRaddr(off, r.Rkey, r.Raddr)
		if r.Length != 0 {
			d := (*mlx.WQEDataSeg)(q.at(q.curData))
			d.SetByteCount(r.Length)
			d.SetLkey(r.Lkey)
			d.SetAddr(r.Addr)
			q.curSize++
		}
		q.done(whole) // the checks passed for every request: each is as whole as the last
	}
	return nil
}
