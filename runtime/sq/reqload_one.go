//go:build amd64 || arm64 || ppc64le || s390x

package sq

import (
	"math/bits"
	"unsafe"
)

// lkeyLength is a request's Length and LKey as a data segment's first 8
// bytes hold them (byte_count, then lkey): Length<<32 | LKey, for a
// big-endian store. The two fields are adjacent, so on the machines
// rdma-core ships for, whose loads need no alignment, it is one 8-byte
// load (at a 4-byte boundary), its halves swapped on a big-endian one.
func lkeyLength(r *RDMAWriteReq) uint64 {
	v := *(*uint64)(unsafe.Add(unsafe.Pointer(r), unsafe.Offsetof(r.LKey)))
	if slotHeadShift != 0 { // big-endian: LKey is the high half
		v = bits.RotateLeft64(v, 32)
	}
	return v
}
