//go:build ppc64 || ppc64le

#include "textflag.h"

// sync (heavyweight) orders stores to memory with the stores to
// caching-inhibited MMIO that follow; lwsync does not cover MMIO.
TEXT ·UDMAToDeviceBarrier(SB), NOSPLIT|NOFRAME, $0-0
	SYNC
	RET

// lwsync orders the loads of DMA memory (cacheable) among themselves.
TEXT ·UDMAFromDeviceBarrier(SB), NOSPLIT|NOFRAME, $0-0
	LWSYNC
	RET

TEXT ·MMIOWCStart(SB), NOSPLIT|NOFRAME, $0-0
	SYNC
	RET

TEXT ·MMIOFlushWrites(SB), NOSPLIT|NOFRAME, $0-0
	SYNC
	RET
