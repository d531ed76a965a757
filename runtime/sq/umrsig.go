package sq

import (
	"encoding/binary"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
)

// umrFinalizeSig is umrFinalize for TrySigBlock's answer (a signature
// BSF, SET_PSVs, no crypto BSF, no SIG_ERR or BSF disable) whose
// generation the cache holds, where nothing wraps: the UMR but its
// translation in whole words as umrFinalize writes it, the cached BSF
// with the mkey's PSV indexes, and the SET_PSVs, without umrFinalize's
// tests of the cases this answer excludes.
func (q *SQ) umrFinalizeSig(u *wrcheck.UMR) {
	mk, g := u.Mkey, &q.sigImg
	p := q.at(q.curCtrl)
	ds := q.curSize + mlx.BSFSize/16
	mask := q.umr.mask | uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_BSF_ENABLE)
	c := (*[umrFixed]byte)(p)
	put2(&c[0], uint32(uint16(q.curPost))<<8|uint32(mlx.MLX5_OPCODE_UMR), q.qpn<<8|uint32(ds))
	put2(&c[8], uint32(q.umr.fcs&^ce), mk.LKey) // the last SET_PSV reports the completion, not the UMR
	put2(&c[16], uint32(mlx.MLX5_WQE_UMR_CTRL_FLAG_INLINE)<<24, uint32(q.umr.klm)<<16|mlx.BSFSize/16)
	binary.BigEndian.PutUint64(c[24:32], mask)
	*(*[32]byte)(c[32:64]) = [32]byte{}
	put2(&c[64], uint32(q.umr.access)<<8, 0xffffff00|mk.LKey&0xff)
	put2(&c[72], 0, 1<<30) // flags_pd: the BSF enabled
	binary.BigEndian.PutUint64(c[80:88], 0)
	binary.BigEndian.PutUint64(c[88:96], q.umr.length)
	*(*[32]byte)(c[96:128]) = [32]byte{}
	g.writeBSF((*mlx.BSF)(unsafe.Add(p, umrFixed+u.Xlat)), mk)
	q.curSize = ds
	q.curPost += uint32(ds+3) / 4
	if g.mem {
		flags := q.wrFlags
		if g.wire {
			flags &^= uint32(mlx.IBV_SEND_SIGNALED)
		}
		q.psvWQE(mk.MemPSV, g.memTS, q.fenceCEFlags(flags))
		q.fmCache = smallFence
	}
	if g.wire {
		q.psvWQE(mk.WirePSV, g.wireTS, q.fcs|q.fmCache&q.keepFm) // fenceCEFlags(q.wrFlags)
		q.fmCache = smallFence
	}
}
