package sq

import (
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// The floor of the per-call API in Go (issue 26 point 3): floorSQ writes
// the bytes and the bookkeeping the per-call fast path writes (ctrl,
// remote address and data segments; start, slot, counters), with no check
// at all, through two methods as the per-call API has. Benchmarked beside
// the writer, it says how much of the per-call cost is the checks and how
// much the shape of two calls per work request: what remains if every
// check were hoisted out of the calls.
type floorSQ struct {
	ring          unsafe.Pointer
	start         []uint32
	slots         []Slot
	dbr           *uint32
	mask, qpn     uint32
	curPost, nreq uint32
	head          uint32
	curCtrl       int
	curData       int
	wrID          uint64
}

//go:noinline
func (f *floorSQ) write(rkey uint32, raddr uint64) {
	f.writeInline(rkey, raddr)
}

func (f *floorSQ) writeInline(rkey uint32, raddr uint64) {
	pi := f.curPost
	w := f.head + f.nreq
	*(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(f.start)), uintptr(w&f.mask)*4)) = pi
	setSlot((*Slot)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(f.slots)), uintptr(pi&f.mask)*16)), f.wrID, slotTail(w, 0, uint8(mlx.MLX5_OPCODE_RDMA_WRITE)))
	f.nreq++
	off := int(pi&f.mask) * wqebb
	wqe := unsafe.Add(f.ring, off)
	be32(wqe, uint32(uint16(pi))<<8|uint32(mlx.MLX5_OPCODE_RDMA_WRITE))
	be32(unsafe.Add(wqe, 8), 0)
	be64(unsafe.Add(wqe, 16), raddr)
	be64(unsafe.Add(wqe, 24), uint64(rkey)<<32)
	f.curCtrl, f.curData = off, off+32
}

//go:noinline
func (f *floorSQ) sge(lkey uint32, addr uint64, length uint32) {
	f.sgeInline(lkey, addr, length)
}

func (f *floorSQ) sgeInline(lkey uint32, addr uint64, length uint32) {
	d := unsafe.Add(f.ring, f.curData)
	be64(d, uint64(length)<<32|uint64(lkey))
	be64(unsafe.Add(d, 8), addr)
	be32(unsafe.Add(f.ring, f.curCtrl+4), f.qpn<<8|3)
	f.curPost++
}

// complete is a batch's end: the counters and the doorbell record.
func (f *floorSQ) complete() {
	f.head += f.nreq
	f.nreq = 0
	be32(unsafe.Pointer(f.dbr), f.curPost&0xffff)
}

// BenchmarkPerCallFloor: Writer is runtime/sq's per-call API (RDMAWrite +
// SetSGE, 32 per Start/Complete, the completions returned after each
// batch, as internal/benchlibmlx5 posts them); Floor the same stores
// through floorSQ's two calls per work request, no check; FloorInlined
// the same with both calls inlined into the loop. ns/op is per work
// request.
func BenchmarkPerCallFloor(b *testing.B) {
	const batch, wqebbs = 32, 256
	const lkey, rkey, length = 0x55667788, 0x11223344, 4096
	newFloor := func(mem *qmem.Memory) *floorSQ {
		return &floorSQ{ring: mem.SQBase(), start: make([]uint32, wqebbs), slots: make([]Slot, wqebbs),
			dbr: (*uint32)(unsafe.Pointer(&mem.DBR[4])), mask: wqebbs - 1, qpn: 0x1234}
	}
	b.Run("Writer", func(b *testing.B) {
		mem, err := qmem.Plain(wqebbs, 0, 256)
		if err != nil {
			b.Fatal(err)
		}
		q, err := New(Config{Mem: mem, QPN: 0x1234, QP: QP{Type: mlx.QPRC, SendOps: 0x3ff, MaxSendSGE: 8, MaxPost: wqebbs / 4}})
		if err != nil {
			b.Fatal(err)
		}
		a := uint64(0x10000)
		for done := 0; done < b.N; done += batch {
			if err := q.Start(); err != nil {
				b.Fatal(err)
			}
			for range batch {
				q.RDMAWrite(rkey, a+0x1000)
				q.SetSGE(lkey, a, length)
				a += length
			}
			if err := q.Complete(); err != nil {
				b.Fatal(err)
			}
			if err := q.Completed(q.Outstanding()); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, inl := range []bool{false, true} {
		name := map[bool]string{false: "Floor", true: "FloorInlined"}[inl]
		b.Run(name, func(b *testing.B) {
			mem, err := qmem.Plain(wqebbs, 0, 256)
			if err != nil {
				b.Fatal(err)
			}
			f := newFloor(mem)
			a := uint64(0x10000)
			for done := 0; done < b.N; done += batch {
				for range batch {
					if inl {
						f.writeInline(rkey, a+0x1000)
						f.sgeInline(lkey, a, length)
					} else {
						f.write(rkey, a+0x1000)
						f.sge(lkey, a, length)
					}
					a += length
				}
				f.complete()
			}
		})
	}
}
