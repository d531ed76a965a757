// Package mmio writes to a device's doorbell register (the UAR page of a
// queue pair: the 8-byte doorbell and the BlueFlame buffers) as libmlx5's
// mmio_write64_be and mmio_memcpy_x64 do: in 64-bit stores, never in the
// byte or vector moves Go's copy may use. On s390x, where user space
// cannot store to PCI memory, it is the s390_pci_mmio_write system call,
// as in rdma-core's util/mmio.h.
//
// Plain memory that stands in for a register (qmem.Plain: tests, the
// simulator) is written with copy on every architecture. Under the race
// detector the doorbell's first word (and a doorbell record, Record32)
// is stored atomically there, last: the simulated device reads it
// atomically before the ring, so that the race detector sees the
// hand-off a device's DMA makes between a writer on one goroutine and
// the simulated device stepping on another.
package mmio

import (
	"fmt"
	"unsafe"
)

// Write copies src to the register at dst. device says dst is a device
// mapping; then both must be 8-byte aligned and of the same length, a
// multiple of 8. It does not allocate unless it fails.
func Write(dst, src []byte, device bool) error {
	if !device {
		if raceEnabled && len(src) >= 8 && len(dst) >= 8 && aligned(dst) {
			copy(dst[8:], src[8:])
			publish8(dst, src) // the first word last, as a release
			return nil
		}
		copy(dst, src)
		return nil
	}
	if len(dst) != len(src) || len(src)%8 != 0 || !aligned(dst) || !aligned(src) {
		return fmt.Errorf("mmio: a %d-byte write to a %d-byte register window must be whole aligned 64-bit words", len(src), len(dst))
	}
	if len(src) == 0 {
		return nil
	}
	return write64s(dst, src)
}

// Direct8 reports whether Write8 to an 8-byte window of reg at a
// multiple of 8 is one plain 64-bit store of an aligned source word, so
// that a writer may make that store itself, inlined, without the call
// and its checks (runtime/sq's Complete does): the architecture stores to
// the register from user space, reg is aligned, and no race-detector
// hand-off is needed (on plain memory under -race Write8 publishes the
// word atomically instead).
func Direct8(reg []byte, device bool) bool {
	return store8 && len(reg) >= 8 && aligned(reg) && !(raceEnabled && !device)
}

// Write8 is Write of one 64-bit word, the 8-byte doorbell, as
// mmio_write64_be: a single store where the architecture allows one (a
// whole word, aligned), else what Write does, errors included.
func Write8(dst []byte, src *[8]byte, device bool) error {
	if len(dst) != 8 || !aligned(dst) || !aligned(src[:]) || !store8 {
		return Write(dst, src[:], device)
	}
	if raceEnabled && !device {
		publish8(dst, src[:])
		return nil
	}
	*(*uint64)(unsafe.Pointer(unsafe.SliceData(dst))) = *(*uint64)(unsafe.Pointer(src))
	return nil
}
