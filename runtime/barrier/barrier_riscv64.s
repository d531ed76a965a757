#include "textflag.h"

// fence ow,ow: device output and memory writes before, before those after
// (written as words: the assembler's FENCE is the full fence iorw,iorw).
TEXT ·UDMAToDeviceBarrier(SB), NOSPLIT|NOFRAME, $0-0
	WORD	$0x0550000f // fence ow,ow
	RET

// fence ir,ir: device input and memory reads before, before those after.
TEXT ·UDMAFromDeviceBarrier(SB), NOSPLIT|NOFRAME, $0-0
	WORD	$0x0aa0000f // fence ir,ir
	RET

TEXT ·MMIOWCStart(SB), NOSPLIT|NOFRAME, $0-0
	WORD	$0x0550000f // fence ow,ow
	RET

TEXT ·MMIOFlushWrites(SB), NOSPLIT|NOFRAME, $0-0
	WORD	$0x0550000f // fence ow,ow
	RET
