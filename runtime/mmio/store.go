//go:build !s390x

package mmio

import "unsafe"

// store8: user space stores to the register itself.
const store8 = true

func aligned(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0 }

// write64s stores src to dst one aligned 64-bit word at a time.
func write64s(dst, src []byte) error {
	d, s := unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src))
	for i := uintptr(0); i < uintptr(len(src)); i += 8 {
		*(*uint64)(unsafe.Add(d, i)) = *(*uint64)(unsafe.Add(s, i))
	}
	return nil
}
