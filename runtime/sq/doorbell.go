package sq

import (
	"fmt"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/barrier"
	"github.com/mlx5gen/mlx5gen/runtime/mmio"
)

// The doorbell: what Complete and the Post forms do once a batch is
// written and checked (rdma-core: post_send_db).

// ringDoorbell posts the batch's nreq work requests, written and checked,
// and leaves the gate: Complete's second half, and the Post forms'.
func (q *SQ) ringDoorbell(nreq uint32) error {
	q.head += nreq
	// The poller may see the batch's completions as soon as the doorbell
	// is rung: the head goes first.
	q.pub.head.Publish(q.head)
	// An 8-byte doorbell to a mapped register, the common case: the
	// record, the barriers and the register in one call (Doorbell8; the
	// BlueFlame choice below reads only the writer's own fields, so it
	// may come first). Otherwise the steps one by one.
	if q.db8 != nil && !q.blueFlameWanted(nreq) {
		off := q.bfOff
		barrier.Doorbell8(q.db8Args(off))
		q.rung8(off)
		return nil
	}
	barrier.UDMAToDeviceBarrier() // the WQEs before the doorbell record
	*(*mlx.BE32)(q.sndDBR) = mlx.ToBE32(q.curPost & 0xffff)
	barrier.MMIOWCStart()
	if q.blueFlameWanted(nreq) {
		err := q.blueFlame()
		q.pub.gate.Leave()
		return err
	}
	// An 8-byte doorbell through runtime/mmio (no mapped register: a
	// mapped one took Doorbell8 above): the first 8 bytes of the last
	// WQE's ctrl.
	off := q.bfOff
	if err := mmio.Write8(q.mem.BF[off:off+8], (*[8]byte)(q.at(q.curCtrl)), q.mem.Device); err != nil {
		q.Last = Doorbell{Rung: true, Offset: off}
		err = q.dbError(err)
		q.pub.gate.Leave()
		return err
	}
	barrier.MMIOFlushWrites()
	q.rung8(off)
	return nil
}

// db8Args are Doorbell8's arguments for the batch just written: the
// doorbell record and its value (the producer index), the register at
// off, and the last WQE's first 8 bytes. With rung8, what Complete and
// ringDoorbell both write inline (a call fewer per batch in Complete:
// issue 26).
func (q *SQ) db8Args(off int) (unsafe.Pointer, uint32, unsafe.Pointer, uint64) {
	return q.sndDBR, uint32(mlx.ToBE32(q.curPost & 0xffff)), unsafe.Add(q.db8, off), *(*uint64)(q.at(q.curCtrl))
}

// rung8 records the 8-byte doorbell rung at off, moves to the other
// BlueFlame buffer and leaves the gate.
func (q *SQ) rung8(off int) {
	q.Last = Doorbell{Rung: true, Offset: off, Length: 8}
	q.bfOff = off ^ q.bf.Size
	q.pub.gate.Leave()
}

// blueFlameWanted reports whether a batch of nreq work requests is
// copied to the BlueFlame register: one work request, inline data in the
// batch or PreferBF, and a WQE the register takes.
func (q *SQ) blueFlameWanted(nreq uint32) bool {
	return nreq == 1 && (q.inl || q.bf.PreferBF) && q.curSize > 1 && q.curSize <= q.bfMax
}

// blueFlame copies the batch's one WQE to the BlueFlame register in
// 64-byte chunks, following the ring's wrap (Complete's BlueFlame case).
func (q *SQ) blueFlame() error {
	bf := q.mem.BF
	q.Last = Doorbell{Rung: true, Offset: q.bfOff}
	n := (q.curSize*16 + wqebb - 1) &^ (wqebb - 1)
	src, dst := q.curCtrl, q.bfOff
	for ; n > 0; n -= wqebb {
		if err := mmio.Write(bf[dst:dst+wqebb], q.bytes(src, wqebb), q.mem.Device); err != nil {
			return q.dbError(err)
		}
		dst += wqebb
		if src += wqebb; src == q.qend {
			src = 0
		}
	}
	barrier.MMIOFlushWrites()
	q.Last.BlueFlame, q.Last.Length = true, dst-q.bfOff
	q.bfOff ^= q.bf.Size
	return nil
}

// dbError reports a doorbell register that could not be written. The
// half of the register is still switched, as libmlx5 does after every
// doorbell.
func (q *SQ) dbError(err error) error {
	barrier.MMIOFlushWrites()
	q.bfOff ^= q.bf.Size
	q.Last.Length = 0
	return fmt.Errorf("sq: the work requests are in the ring and the doorbell record, but ringing the doorbell failed: %w", err)
}
