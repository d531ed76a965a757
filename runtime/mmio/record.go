package mmio

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"
)

// Record32 stores v big-endian into a doorbell record (the receive
// counter of a receive queue or SRQ, which no register write follows):
// a plain store, atomic under the race detector when the record is
// aligned, so that a simulated device loading it with LoadRecord32 on
// another goroutine sees the ring writes before it.
func Record32(dst *[4]byte, v uint32) {
	if raceEnabled && uintptr(unsafe.Pointer(dst))%4 == 0 {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], v)
		atomic.StoreUint32((*uint32)(unsafe.Pointer(dst)), *(*uint32)(unsafe.Pointer(&b)))
		return
	}
	binary.BigEndian.PutUint32(dst[:], v)
}

// LoadRecord32 reads a big-endian doorbell record as a device would: an
// atomic load where the record is aligned (the simulated device's side
// of Record32).
func LoadRecord32(src *[4]byte) uint32 {
	if uintptr(unsafe.Pointer(src))%4 != 0 {
		return binary.BigEndian.Uint32(src[:])
	}
	w := atomic.LoadUint32((*uint32)(unsafe.Pointer(src)))
	return binary.BigEndian.Uint32((*[4]byte)(unsafe.Pointer(&w))[:])
}

// publish8 stores the 8 bytes of src at dst (8-byte aligned) atomically.
func publish8(dst, src []byte) {
	atomic.StoreUint64((*uint64)(unsafe.Pointer(unsafe.SliceData(dst))), binary.NativeEndian.Uint64(src))
}
