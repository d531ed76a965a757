//go:build !(amd64 || arm64 || ppc64le || s390x)

package sq

// lkeyLength is a request's Length and LKey as a data segment's first 8
// bytes hold them (byte_count, then lkey): Length<<32 | LKey, for a
// big-endian store. Two loads: an 8-byte load at the 4-byte boundary
// where LKey lies may trap, or be emulated, on other machines.
func lkeyLength(r *RDMAWriteReq) uint64 { return uint64(r.Length)<<32 | uint64(r.LKey) }
