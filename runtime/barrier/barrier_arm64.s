#include "textflag.h"

// dmb oshst: order stores to outer-shareable memory (DMA).
TEXT ·UDMAToDeviceBarrier(SB), NOSPLIT|NOFRAME, $0-0
	DMB	$0x2 // OSHST
	RET

// dmb oshld: order loads of outer-shareable memory.
TEXT ·UDMAFromDeviceBarrier(SB), NOSPLIT|NOFRAME, $0-0
	DMB	$0x1 // OSHLD
	RET

TEXT ·MMIOWCStart(SB), NOSPLIT|NOFRAME, $0-0
	DMB	$0x2 // OSHST
	RET

// dsb st: complete the write-combining stores.
TEXT ·MMIOFlushWrites(SB), NOSPLIT|NOFRAME, $0-0
	DSB	$0xe // ST
	RET
