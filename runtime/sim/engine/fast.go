package engine

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// fastWrite executes the common case of a stream of RDMA writes without
// the general machinery: an RC QP in order (nothing in flight, no
// completion waiting), an RDMA WRITE of one data segment between two MRs
// the checks allow. It reports whether it did; anything else (an error
// included) is left to run, which reaches the same result the long way.
func (q *QP) fastWrite(w []byte, ctrl *mlx.WQECtrlSeg) bool {
	const size = mlx.WQECtrlSegSize + mlx.WQERaddrSegSize + mlx.WQEDataSegSize
	p := q.peer
	if len(w) != size || ctrl.Opcode() != mlx.MLX5_OPCODE_RDMA_WRITE || q.typ != RC || q.sq.nflight != 0 ||
		!q.comps.empty() || p == nil || !p.receiving() || !p.accepts(q) || p.access&mlx.IBV_ACCESS_REMOTE_WRITE == 0 {
		return false
	}
	ra := (*mlx.WQERaddrSeg)(w[mlx.WQECtrlSegSize : mlx.WQECtrlSegSize+mlx.WQERaddrSegSize])
	ds := (*mlx.WQEDataSeg)(w[mlx.WQECtrlSegSize+mlx.WQERaddrSegSize : size])
	n, lkey, rkey := ds.ByteCount(), ds.LKey(), ra.RKey()
	if n&mlx.MLX5_INLINE_SEG != 0 || n == 0 || n > q.dev.caps.MaxMsgSize || isMkey(lkey) || isMkey(rkey) {
		return false
	}
	x := &q.dev.fab.x
	src, f := q.dev.keys.Bytes(lkey, q.pd, ds.Addr(), uint64(n), 0, false, &x.fault)
	if f != nil {
		return false
	}
	dst, f := p.dev.keys.Bytes(rkey, p.pd, ra.Raddr(), uint64(n), mlx.IBV_ACCESS_REMOTE_WRITE, true, &x.fault)
	if f != nil {
		return false
	}
	copy(dst, src)
	if ctrl.FmCeSe()&mlx.MLX5_WQE_CTRL_CQ_UPDATE != 0 {
		c := comp{op: mlx.MLX5_OPCODE_RDMA_WRITE, ctr: uint16(q.sq.ci), signaled: true, ready: true}
		q.writeComp(&c)
	}
	return true
}
