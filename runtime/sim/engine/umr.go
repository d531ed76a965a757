package engine

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// umr executes a UMR WQE: on a memory window, a bind or an invalidate
// (ibv_wr_bind_mw, ibv_wr_local_inv); on an indirect mkey, whatever the
// mkey table makes of it (mlx5dv_wr_mkey_configure and its setters,
// mlx5dv_wr_mr_list / _interleaved, a local invalidate), whose PD must be
// the QP's.
func (q *QP) umr(w []byte, ctrl *mlx.WQECtrlSeg) status {
	const fixed = mlx.WQECtrlSegSize + mlx.WQEUMRCtrlSegSize
	if len(w) < fixed+mlx.WQEMkeyContextSegSize {
		return malformed("a UMR WQE without its mkey context")
	}
	key := ctrl.Imm()
	uc := (*mlx.WQEUMRCtrlSeg)(w[mlx.WQECtrlSegSize:fixed])
	mc := (*mlx.WQEMkeyContextSeg)(w[fixed : fixed+mlx.WQEMkeyContextSegSize])
	free := uc.MkeyMask()&uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE) != 0 && mc.Free() != 0
	d := q.dev
	switch {
	case d.keys.IsMW(key):
		return q.bindMW(w, key, uc, mc, free)
	case !isMkey(key):
		return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, "UMR of a key that is neither a memory window nor an indirect mkey")
	default: // a configuration or a local invalidate of the mkey
		if pd, ok := d.mkeys.PD(key); ok && pd != q.pd {
			return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, "UMR of an mkey of another protection domain")
		}
		if err := d.mkeys.ExecUMR(w); err != nil {
			return mkeyFault(err)
		}
	}
	return ok
}

// bindMW binds (or, with the mkey freed, unbinds or invalidates) a
// memory window. [ledger: mw-type2]
func (q *QP) bindMW(w []byte, key uint32, uc *mlx.WQEUMRCtrlSeg, mc *mlx.WQEMkeyContextSeg, free bool) status {
	x := &q.dev.fab.x
	tag := uint8(mc.QPNMkey())
	if free {
		if f := q.dev.keys.Invalidate(key, q.pd, tag, &x.fault); f != nil {
			return fail(mlx.MLX5_CQE_SYNDROME_MW_BIND_ERR, f.Why)
		}
		return ok
	}
	klmOff := mlx.WQECtrlSegSize + mlx.WQEUMRCtrlSegSize + mlx.WQEMkeyContextSegSize
	if len(w) < klmOff+mlx.WQEUMRKLMSegSize || uc.KLMOctowords() == 0 {
		return malformed("a memory window bind without its KLM")
	}
	klm := (*mlx.WQEUMRKLMSeg)(w[klmOff : klmOff+mlx.WQEUMRKLMSegSize])
	acc := mlx.AccessFlags(0)
	ma := mc.AccessFlags()
	for _, m := range [...]struct {
		c mlx.WQEMkeyContextAccessFlags
		a mlx.AccessFlags
	}{
		{mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE, mlx.IBV_ACCESS_LOCAL_WRITE},
		{mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE, mlx.IBV_ACCESS_REMOTE_WRITE},
		{mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ, mlx.IBV_ACCESS_REMOTE_READ},
		{mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC, mlx.IBV_ACCESS_REMOTE_ATOMIC},
	} {
		if ma&m.c != 0 {
			acc |= m.a
		}
	}
	if mc.StartAddr() == 0 && klm.Address() != 0 {
		acc |= mlx.IBV_ACCESS_ZERO_BASED
	}
	if _, f := q.dev.keys.BindMW(key, tag, q.pd, klm.Mkey(), klm.Address(), uint64(klm.ByteCount()), acc, &x.fault); f != nil {
		return fail(mlx.MLX5_CQE_SYNDROME_MW_BIND_ERR, f.Why)
	}
	return ok
}

// memcpy executes an MMO DMA copy (mlx5dv_wr_memcpy): a metadata segment,
// the source and the destination data segments; a byte count of 0 is
// 2 GiB, and the device copies at most Caps.MaxMemcpy bytes. [ledger: memcpy-limit]
func (q *QP) memcpy(w []byte, off int, ctrl *mlx.WQECtrlSeg, c *comp) status {
	if ctrl.Opmod() != 1 { // MLX5_OPC_MOD_MMO_DMA
		return malformed("an MMO WQE with an opmod other than DMA")
	}
	off += mlx.MMOMetadataSegSize
	if len(w) < off+2*mlx.WQEDataSegSize {
		return malformed("an MMO WQE without its two data segments")
	}
	src := (*mlx.WQEDataSeg)(w[off : off+mlx.WQEDataSegSize])
	dst := (*mlx.WQEDataSeg)(w[off+mlx.WQEDataSegSize : off+2*mlx.WQEDataSegSize])
	n := uint64(src.ByteCount())
	if n == 0 {
		n = 1 << 31
	}
	if n > q.dev.caps.MaxMemcpy || dst.ByteCount() != src.ByteCount() {
		return fail(mlx.MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, "memcpy longer than the device's max_wr_memcpy_length")
	}
	x := &q.dev.fab.x
	x.sigCQ, x.sigQPN = q.scq, q.qpn
	if st := x.span(&x.src, q.dev, q.pd, src.LKey(), src.Addr(), n, 0, false, true); st.synd != 0 {
		return st
	}
	x.dst.limit = x.src.total
	if st := x.span(&x.dst, q.dev, q.pd, dst.LKey(), dst.Addr(), n, mlx.IBV_ACCESS_LOCAL_WRITE, false, false); st.synd != 0 {
		return st
	}
	copySGL(&x.dst, &x.src)
	if st := x.scatter(&x.dst, q.dev); st.synd != 0 {
		return st
	}
	x.sigErrors()
	return ok
}
