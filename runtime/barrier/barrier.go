// Package barrier holds the memory barriers the send and completion paths
// need around DMA memory and the doorbell register, named after rdma-core's
// util/udma_barrier.h and with the instructions it uses on each
// architecture, so that the code reads like libmlx5's. Go's memory model
// covers goroutines, not a device reading memory by DMA or write-combining
// MMIO, so the fences Go cannot express are tiny assembly stubs:
//
//	GOARCH          UDMAToDevice  UDMAFromDevice  MMIOWCStart, MMIOFlushWrites
//	amd64           compiler      lfence          sfence
//	arm64           dmb oshst     dmb oshld       dmb oshst, dsb st
//	ppc64, ppc64le  sync          lwsync          sync
//	riscv64         fence ow,ow   fence ir,ir     fence ow,ow
//	loong64         dbar 0        dbar 0          dbar 0
//	s390x           compiler      compiler        compiler (the register is written by a system call: runtime/mmio)
//
// ("compiler": the call itself, which the Go compiler does not reorder
// memory accesses across.) On any other GOARCH, Check returns an error and
// the barriers panic: there is no silent stand-in. Doorbell8 is
// post_send_db's 8-byte doorbell (the record and the register's store
// with the three barriers around them) in one call: one assembly
// function on amd64, the barriers' calls elsewhere.
package barrier

import (
	"fmt"
	"runtime"
)

// Supported lists the architectures this package has barriers for.
const Supported = "amd64, arm64, loong64, ppc64, ppc64le, riscv64, s390x"

// Check reports whether this architecture has the barriers. Writers of
// device queues (runtime/sq) refuse to start without them.
func Check() error {
	if !supported {
		return fmt.Errorf("barrier: no DMA barriers for GOARCH=%s (mlx5gen has them for %s)", runtime.GOARCH, Supported)
	}
	return nil
}
