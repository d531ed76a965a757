//go:build !amd64 && !arm64

package barrier

import "sync/atomic"

var fence atomic.Uint32

// On other architectures an atomic read-modify-write stands in for the
// fences: it orders memory in Go's model, which is as much as this
// fallback can promise.

func UDMAToDeviceBarrier() { fence.Add(1) }
func MMIOWCStart()         { fence.Add(1) }
func MMIOFlushWrites()     { fence.Add(1) }
