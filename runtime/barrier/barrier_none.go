//go:build !(amd64 || arm64 || loong64 || ppc64 || ppc64le || riscv64 || s390x)

package barrier

const supported = false

// The barriers exist so that code using them builds everywhere; Check
// tells callers not to use them here.

func UDMAToDeviceBarrier()   { panic(Check()) }
func UDMAFromDeviceBarrier() { panic(Check()) }
func MMIOWCStart()           { panic(Check()) }
func MMIOFlushWrites()       { panic(Check()) }
