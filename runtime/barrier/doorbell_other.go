//go:build !amd64

package barrier

import "unsafe"

// Doorbell8 rings a doorbell with an 8-byte register write: it stores v
// (the doorbell record, in the device's byte order) at rec and then w
// (the last WQE's first 8 bytes, as stored) at reg, with the barriers
// rdma-core's post_send_db puts around them: UDMAToDeviceBarrier before
// the record, MMIOWCStart between, MMIOFlushWrites after.
func Doorbell8(rec unsafe.Pointer, v uint32, reg unsafe.Pointer, w uint64) {
	UDMAToDeviceBarrier()
	*(*uint32)(rec) = v
	MMIOWCStart()
	*(*uint64)(reg) = w
	MMIOFlushWrites()
}
