package barrier

import "unsafe"

// Doorbell8 rings a doorbell with an 8-byte register write: it stores v
// (the doorbell record, in the device's byte order) at rec and then w
// (the last WQE's first 8 bytes, as stored) at reg, with the barriers
// rdma-core's post_send_db puts around them: UDMAToDeviceBarrier before
// the record, MMIOWCStart between, MMIOFlushWrites after. One call where
// the three barriers were three (on amd64 one assembly function; a
// doorbell each pays it per work request).
func Doorbell8(rec unsafe.Pointer, v uint32, reg unsafe.Pointer, w uint64)
