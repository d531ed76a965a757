//go:build linux && !race

package gate

import (
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// membarrier(2) commands (linux/membarrier.h).
const (
	mbPrivateExpedited         = 1 << 3
	mbRegisterPrivateExpedited = 1 << 4
)

// asym is 1 when the process is registered for private expedited
// membarriers (at init: one system call), 2 when it cannot be.
var asym atomic.Uint32

func init() {
	s := uint32(2)
	if _, _, e := unix.Syscall(unix.SYS_MEMBARRIER, mbRegisterPrivateExpedited, 0, 0); e == 0 {
		s = 1
	}
	asym.Store(s)
}

// asymmetric reports whether the closer's membarrier orders the owner's
// plain stores.
func asymmetric() bool { return asym.Load() == 1 }

// heavyBarrier makes every running thread of the process execute a full
// memory barrier, when Enter relies on it. Registered, the call cannot
// fail (membarrier(2)); if it ever did, the gates stop relying on it and
// a scheduler round stands in for it, so that an owner whose plain store
// was still buffered has executed past it.
func heavyBarrier() {
	if !asymmetric() {
		return
	}
	if _, _, e := unix.Syscall(unix.SYS_MEMBARRIER, mbPrivateExpedited, 0, 0); e != 0 {
		asym.Store(2)
		for range 64 {
			runtime.Gosched()
		}
	}
}
