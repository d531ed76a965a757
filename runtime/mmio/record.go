package mmio

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"
)

// Record32 stores v big-endian into a doorbell record (a send or receive
// counter, a CQ's consumer index or arm word) as one 32-bit store, as
// libmlx5's `*db = htobe32(v)` is: the device reads the record at any
// moment, and must see the old value or the new one, never bytes of each.
// encoding/binary's PutUint32 does not promise that: on riscv64 and
// loong64 it is four byte stores, and a device reading between them sees
// a counter off by a multiple of 256 (TestRecord32Whole). The store is
// atomic under the race detector, so that a simulated device loading it
// with LoadRecord32 on another goroutine sees the ring writes before it.
// An unaligned record (no device has one) is written byte by byte.
func Record32(dst *[4]byte, v uint32) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	w := binary.NativeEndian.Uint32(b[:]) // v's bytes in the device's order, as one word
	p := unsafe.Pointer(dst)
	switch {
	case uintptr(p)%4 != 0:
		*dst = b
	case raceEnabled:
		atomic.StoreUint32((*uint32)(p), w)
	default:
		*(*uint32)(p) = w
	}
}

// LoadRecord32 reads a big-endian doorbell record as a device would: one
// 32-bit load (atomic) where the record is aligned (the simulated
// device's side of Record32).
func LoadRecord32(src *[4]byte) uint32 {
	if uintptr(unsafe.Pointer(src))%4 != 0 {
		return binary.BigEndian.Uint32(src[:])
	}
	w := atomic.LoadUint32((*uint32)(unsafe.Pointer(src)))
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], w)
	return binary.BigEndian.Uint32(b[:])
}

// publish8 stores the 8 bytes of src at dst (8-byte aligned) atomically.
func publish8(dst, src []byte) {
	atomic.StoreUint64((*uint64)(unsafe.Pointer(unsafe.SliceData(dst))), binary.NativeEndian.Uint64(src))
}
