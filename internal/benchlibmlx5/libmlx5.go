//go:build libmlx5

package benchlibmlx5

/*
#include <stdlib.h>
#include "harness.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// Lib is libmlx5's queue pair on Go-owned queue memory (mapped outside the
// Go heap by qmem, so C may keep pointers into it).
type Lib struct {
	h   *C.struct_lm5
	Mem *qmem.Memory
}

// NewLib sets up libmlx5's QP on fresh memory; lock says whether
// libmlx5's SQ spinlock is taken (need_lock), as without
// MLX5_SINGLE_THREADED.
func NewLib(lock bool) (*Lib, error) {
	mem, err := NewMem()
	if err != nil {
		return nil, err
	}
	g := C.struct_lm5_geom{ring: mem.SQBase(), dbr: unsafe.Pointer(&mem.DBR[0]), bf: unsafe.Pointer(&mem.BF[0]),
		wqebbs: WQEBBs, bf_size: BFSize, uuarn: UUARN, qpn: QPN, max_post: MaxPost, max_gs: MaxGS,
		max_inline: MaxInline, send_ops: SendOps, mlx5_ops: MlxOps}
	if lock {
		g.sq_lock = 1
	}
	var msg [256]C.char
	h := C.lm5_new(&g, &msg[0], C.size_t(len(msg)))
	if h == nil {
		mem.Close()
		return nil, fmt.Errorf("libmlx5 harness: %s", C.GoString(&msg[0]))
	}
	return &Lib{h: h, Mem: mem}, nil
}

// Close frees the QP and its memory.
func (l *Lib) Close() {
	C.lm5_free(l.h)
	l.Mem.Close()
}

// Side is what the QP wrote so far.
func (l *Lib) Side() Side {
	return Side{Mem: l.Mem, CurPost: uint32(C.lm5_cur_post(l.h)), BFOff: int(C.lm5_bf_offset(l.h))}
}

var writes = C.struct_lm5_write{raddr: Raddr, addr: Addr, rkey: RKey, lkey: LKey, len: Len}

func errnoErr(what string, rc C.int) error {
	if rc != 0 {
		return fmt.Errorf("libmlx5 %s: %w", what, syscall.Errno(rc))
	}
	return nil
}

// PostWrites is the twin of PostWrites: ibv_wr_start, then
// ibv_wr_rdma_write + ibv_wr_set_sge per work request, ibv_wr_complete.
// The writes continue from where the last call stopped.
func (l *Lib) PostWrites(n, batch int) error {
	return errnoErr("ibv_wr_complete", C.lm5_post_writes(l.h, &writes, C.uint64_t(n), C.uint32_t(batch)))
}

// PostSendChain posts the same writes with ibv_post_send, a chain of
// batch work requests per call.
func (l *Lib) PostSendChain(n, batch int) error {
	return errnoErr("ibv_post_send", C.lm5_post_send_chain(l.h, &writes, C.uint64_t(n), C.uint32_t(batch)))
}

// LibMkey is a signature mkey as mlx5dv_create_mkey leaves it.
type LibMkey struct{ m *C.struct_lm5_mkey }

// NewLibMkey is the twin of NewMkeyConf's mkey.
func NewLibMkey() (*LibMkey, error) {
	m := C.lm5_mkey_new(MkeyLKey, MkeyEntries, MemPSV, WirePSV)
	if m == nil {
		return nil, fmt.Errorf("libmlx5 harness: out of memory")
	}
	return &LibMkey{m}, nil
}

// Free frees the mkey.
func (m *LibMkey) Free() { C.lm5_mkey_free(m.m) }

var sigConf = C.struct_lm5_sig{access: C.uint32_t(MkeyAccess), lkey: LKey, len: Len, nsge: MkeyEntries, addr: Addr,
	ref_tag: DIFRefTag, bg: DIFBG, app_tag: DIFAppTag, dif_flags: C.uint16_t(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP),
	bg_type: C.uint8_t(mlx.MLX5DV_SIG_T10DIF_CRC), block_size: C.uint8_t(mlx.MLX5DV_BLOCK_SIZE_512), check_mask: SigCheckMask}

// Configure is the twin of MkeyConf.Configure: mlx5dv_wr_mkey_configure,
// then the access, list layout and signature setters.
func (l *Lib) Configure(m *LibMkey, batches, per int) error {
	return errnoErr("ibv_wr_complete", C.lm5_mkey_configure(l.h, m.m, &sigConf, C.uint64_t(batches), C.uint32_t(per)))
}
