#include "textflag.h"

// dbar 0: the full barrier, for every ordering rdma-core needs on
// LoongArch.
TEXT ·UDMAToDeviceBarrier(SB), NOSPLIT|NOFRAME, $0-0
	DBAR	$0
	RET

TEXT ·UDMAFromDeviceBarrier(SB), NOSPLIT|NOFRAME, $0-0
	DBAR	$0
	RET

TEXT ·MMIOWCStart(SB), NOSPLIT|NOFRAME, $0-0
	DBAR	$0
	RET

TEXT ·MMIOFlushWrites(SB), NOSPLIT|NOFRAME, $0-0
	DBAR	$0
	RET
