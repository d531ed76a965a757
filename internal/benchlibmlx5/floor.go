package benchlibmlx5

import (
	"encoding/binary"
	"errors"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/barrier"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// Floor is the floor of the doorbell-each row in Go (issue 26): it writes
// what runtime/sq's Start, RDMAWrite, SetSGE and Complete write for an
// unsignaled RDMA write with one SGE and a doorbell each (the WQE, the
// start and slot bookkeeping, the doorbell record and the 8-byte
// doorbell, with post_send_db's fences), through four methods that check
// nothing, hold no gate and publish nothing to a poller. Beside libmlx5
// without its lock it says what the shape of four Go calls a work request
// costs before a single rule is checked (docs/performance.md, "Issue 26:
// the floors of the rows short of their targets"). Only the path
// PostFloor takes is written: one SGE, a doorbell each, never a wrap
// inside a WQE (a write of one WQEBB cannot wrap); Complete rings an
// 8-byte doorbell for one work request only (batch 1: the doorbell each).
type Floor struct {
	mem           *qmem.Memory
	ring          unsafe.Pointer
	start         *[WQEBBs]uint32
	slots         *[WQEBBs][2]uint64
	dbr, reg      unsafe.Pointer
	curPost, nreq uint32
	head, tail    uint32
	curCtrl       int
	bfOff         int
	wrID          uint64
	closed        bool
}

var errFloorClosed = errors.New("benchlibmlx5: the floor is closed")

// NewFloor is a Floor on mem (NewMem's geometry).
func NewFloor(mem *qmem.Memory) *Floor {
	return &Floor{mem: mem, ring: mem.SQBase(), start: new([WQEBBs]uint32), slots: new([WQEBBs][2]uint64),
		dbr: unsafe.Pointer(&mem.DBR[4]), reg: unsafe.Pointer(unsafe.SliceData(mem.BF))}
}

// Side is what the floor left, for Same.
func (f *Floor) Side() Side { return Side{Mem: f.mem, CurPost: f.curPost, BFOff: f.bfOff} }

// Start opens a batch: the one test a closed queue needs.
//
//go:noinline
func (f *Floor) Start() error {
	if f.closed {
		return errFloorClosed
	}
	return nil
}

// RDMAWrite writes an RDMA write's ctrl and remote address segments and
// its bookkeeping, as runtime/sq's fast path does.
//
//go:noinline
func (f *Floor) RDMAWrite(rkey uint32, raddr uint64) error {
	const op = uint32(mlx.MLX5_OPCODE_RDMA_WRITE)
	pi := f.curPost
	w := f.head + f.nreq
	f.start[w%WQEBBs] = pi
	f.slots[pi%WQEBBs] = [2]uint64{f.wrID, uint64(w)<<32 | uint64(op)<<24}
	f.nreq++
	off := int(pi%WQEBBs) * 64
	wqe := (*[32]byte)(unsafe.Add(f.ring, off))
	binary.BigEndian.PutUint32(wqe[0:], uint32(uint16(pi))<<8|op)
	binary.BigEndian.PutUint32(wqe[8:], 0) // unsignaled, no fence
	binary.BigEndian.PutUint64(wqe[16:], raddr)
	binary.BigEndian.PutUint64(wqe[24:], uint64(rkey)<<32)
	f.curCtrl = off
	return nil
}

// SetSGE writes the data segment and the ctrl segment's QPN and size.
//
//go:noinline
func (f *Floor) SetSGE(lkey uint32, addr uint64, length uint32) error {
	c := (*[64]byte)(unsafe.Add(f.ring, f.curCtrl))
	binary.BigEndian.PutUint64(c[32:], uint64(length)<<32|uint64(lkey))
	binary.BigEndian.PutUint64(c[40:], addr)
	binary.BigEndian.PutUint32(c[4:], QPN<<8|3)
	f.curPost++
	return nil
}

// Complete rings the doorbell: the record, then the WQE's first 8 bytes
// at the register's current half.
//
//go:noinline
func (f *Floor) Complete() error {
	f.head += f.nreq
	f.nreq = 0
	barrier.Doorbell8(f.dbr, uint32(mlx.ToBE32(f.curPost&0xffff)), unsafe.Add(f.reg, f.bfOff), *(*uint64)(unsafe.Add(f.ring, f.curCtrl)))
	f.bfOff ^= BFSize
	return nil
}

// PostFloor posts n writes batch per Start/Complete through f, in
// PostWrites' loop (and the C loop's), the completions returned after each
// batch as the C loop returns them (the tail set to the head).
func PostFloor(f *Floor, n, batch int) error {
	a := uint64(Addr)
	delta := uint64(Raddr) - a // wraps, as in C
	for done := 0; done < n; {
		if err := f.Start(); err != nil {
			return err
		}
		k := min(batch, n-done)
		for range k {
			f.RDMAWrite(RKey, a+delta)
			f.SetSGE(LKey, a, Len)
			a += Len
		}
		if err := f.Complete(); err != nil {
			return err
		}
		f.tail = f.head
		done += k
	}
	return nil
}
