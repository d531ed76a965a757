//go:build isal && cgo

package isaltest

// #cgo LDFLAGS: -lisal
// #include <isa-l/crc.h>
import "C"

import "unsafe"

func ptr(p []byte) *C.uchar {
	if len(p) == 0 {
		return nil
	}
	return (*C.uchar)(unsafe.Pointer(&p[0]))
}

// CRC16T10DIF is ISA-L's crc16_t10dif(init, buf, len).
func CRC16T10DIF(init uint16, p []byte) uint16 {
	return uint16(C.crc16_t10dif(C.uint16_t(init), ptr(p), C.uint64_t(len(p))))
}

// CRC32ISCSI is ISA-L's crc32_iscsi(buf, len, init): the CRC-32C register
// after p, without the final inversion.
func CRC32ISCSI(init uint32, p []byte) uint32 {
	return uint32(C.crc32_iscsi(ptr(p), C.int(len(p)), C.uint(init)))
}

// CRC32GzipRefl is ISA-L's crc32_gzip_refl(init, buf, len): the CRC-32 of
// gzip, which complements the register on entry and exit.
func CRC32GzipRefl(init uint32, p []byte) uint32 {
	return uint32(C.crc32_gzip_refl(C.uint32_t(init), ptr(p), C.uint64_t(len(p))))
}
