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


// Doorbell8: the record, then mmio_wc_start's sfence, the register's 8
// bytes, mmio_flush_writes' sfence. Calling it is the compiler barrier
// UDMAToDeviceBarrier is.
TEXT ·Doorbell8(SB), NOSPLIT|NOFRAME, $0-32
	MOVQ rec+0(FP), AX
	MOVL v+8(FP), BX
	MOVQ reg+16(FP), CX
	MOVQ w+24(FP), DX
	MOVL BX, (AX)
	SFENCE
	MOVQ DX, (CX)
	SFENCE
	RET
