#include "textflag.h"

// x86 keeps stores in order, so ordering stores to DMA memory needs only
// a compiler barrier, which calling an assembly function is.
TEXT ·UDMAToDeviceBarrier(SB), NOSPLIT|NOFRAME, $0-0
	RET

// Loads may pass earlier loads of DMA memory written by the device.
TEXT ·UDMAFromDeviceBarrier(SB), NOSPLIT|NOFRAME, $0-0
	LFENCE
	RET

// Write-combining stores are not ordered with earlier stores: fence.
TEXT ·MMIOWCStart(SB), NOSPLIT|NOFRAME, $0-0
	SFENCE
	RET

TEXT ·MMIOFlushWrites(SB), NOSPLIT|NOFRAME, $0-0
	SFENCE
	RET
