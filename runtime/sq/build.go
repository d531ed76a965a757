package sq

import (
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// avSize is the address vector a DCI work request carries after its ctrl
// segment.
const avSize = mlx.WQEAVSize

// transport is the size of the segments between the ctrl segment and the
// rest: the address vector on a DCI.
func (q *SQ) transport() int {
	if q.dci {
		return avSize
	}
	return 0
}

// dataWR starts a send, RDMA or atomic work request: hdr bytes follow the
// ctrl segment (and the address vector on a DCI). It returns the offset
// of the first of them.
func (q *SQ) dataWR(fn mlx.Func, opcode mlx.Opcode, hdr int) (int, error) {
	if !q.chk.TryBuilder(fn, q.wrFlags) {
		if err := q.chk.Builder(fn, q.wrFlags); err != nil {
			return 0, err
		}
	}
	if err := q.budget(fn, 1); err != nil {
		return 0, err
	}
	t := q.transport()
	if err := q.room(fn, 16+t+hdr); err != nil {
		return 0, err
	}
	q.initWQE(opcode, 0, q.wrFlags)
	q.curSize = (16 + t + hdr) / 16
	r := q.wrap(q.curCtrl + 16 + t)
	q.curData = r + hdr
	return r, nil
}

// Send builds a send. ibv_wr_send; rdma-core: mlx5_send_wr_send_other.
func (q *SQ) Send() error {
	return q.post(mlx.FnWRSend, mlx.MLX5_OPCODE_SEND, 0, 0, 0)
}

// SendImm builds a send with immediate data; imm is the __be32 value as
// the API takes it (stored as given). ibv_wr_send_imm.
func (q *SQ) SendImm(imm mlx.BE32) error {
	if _, err := q.dataWR(mlx.FnWRSendImm, mlx.MLX5_OPCODE_SEND_IMM, 0); err != nil {
		return err
	}
	q.ctrl().SetImmBE(imm)
	return nil
}

// SendInv builds a send that invalidates rkey at the peer.
// ibv_wr_send_inv.
func (q *SQ) SendInv(rkey uint32) error {
	if _, err := q.dataWR(mlx.FnWRSendInv, mlx.MLX5_OPCODE_SEND_INVAL, 0); err != nil {
		return err
	}
	q.ctrl().SetImm(rkey)
	return nil
}

// setRaddr writes a remote address segment at off.
func (q *SQ) setRaddr(off int, rkey uint32, raddr uint64) {
	s := (*mlx.WQERaddrSeg)(q.at(off))
	s.SetRaddr(raddr)
	s.SetRKey(rkey)
	s.SetReserved(0)
}

// RDMAWrite builds an RDMA write to raddr under rkey. ibv_wr_rdma_write;
// rdma-core: mlx5_send_wr_rdma_write. Writes that follow each other, each
// made whole by its SetSGE (or RDMAWriteSGE) with no other call between
// them, take its fastest path, as do their SetSGE calls: a run, whose
// calls after the first check only their room and length.
func (q *SQ) RDMAWrite(rkey uint32, raddr uint64) error {
	return q.rdmaWrite(rkey, raddr)
}

// RDMAWriteImm builds an RDMA write with immediate data (imm as the
// __be32 the API takes). ibv_wr_rdma_write_imm.
func (q *SQ) RDMAWriteImm(rkey uint32, raddr uint64, imm mlx.BE32) error {
	if err := q.post(mlx.FnWRRDMAWriteImm, mlx.MLX5_OPCODE_RDMA_WRITE_IMM, mlx.WQERaddrSegSize, rkey, raddr); err != nil {
		return err
	}
	q.ctrl().SetImmBE(imm)
	return nil
}

// RDMARead builds an RDMA read from raddr under rkey. ibv_wr_rdma_read.
func (q *SQ) RDMARead(rkey uint32, raddr uint64) error {
	return q.post(mlx.FnWRRDMARead, mlx.MLX5_OPCODE_RDMA_READ, mlx.WQERaddrSegSize, rkey, raddr)
}

func (q *SQ) atomic(fn mlx.Func, opcode mlx.Opcode, rkey uint32, raddr, swapAdd uint64, compare *uint64) error {
	r, err := q.dataWR(fn, opcode, mlx.WQERaddrSegSize+mlx.WQEAtomicSegSize)
	if err != nil {
		return err
	}
	q.setRaddr(r, rkey, raddr)
	a := (*mlx.WQEAtomicSeg)(q.at(r + mlx.WQERaddrSegSize))
	a.SetSwapAdd(swapAdd)
	if compare != nil {
		a.SetCompare(*compare)
	}
	q.curData = q.wrap(q.curData) // on a DCI the atomic segment can end the ring
	return nil
}

// AtomicCmpSwp builds an 8-byte compare and swap at raddr.
// ibv_wr_atomic_cmp_swp.
func (q *SQ) AtomicCmpSwp(rkey uint32, raddr, compare, swap uint64) error {
	return q.atomic(mlx.FnWRAtomicCmpSwp, mlx.MLX5_OPCODE_ATOMIC_CS, rkey, raddr, swap, &compare)
}

// AtomicFetchAdd builds an 8-byte fetch and add at raddr. The compare
// field is left as it is, as libmlx5 leaves it. ibv_wr_atomic_fetch_add.
func (q *SQ) AtomicFetchAdd(rkey uint32, raddr, add uint64) error {
	return q.atomic(mlx.FnWRAtomicFetchAdd, mlx.MLX5_OPCODE_ATOMIC_FA, rkey, raddr, add, nil)
}

// umrHeader starts a UMR work request (local invalidate, bind MW, mkey
// configuration): imm, and the UMR ctrl segment zeroed; it returns the
// offsets of the UMR ctrl and mkey context segments.
func (q *SQ) umrHeader(wrData uint32, imm uint32) (u, m int) {
	q.initWQE(mlx.MLX5_OPCODE_UMR, wrData, q.wrFlags)
	q.ctrl().SetImm(imm)
	u = q.curCtrl + mlx.WQECtrlSegSize
	clear(q.bytes(u, mlx.WQEUMRCtrlSegSize))
	m = q.wrap(u + mlx.WQEUMRCtrlSegSize)
	return u, m
}

func (q *SQ) umrCtrl(u int) *mlx.WQEUMRCtrlSeg { return (*mlx.WQEUMRCtrlSeg)(q.at(u)) }

func (q *SQ) mkeyCtx(m int) *mlx.WQEMkeyContextSeg {
	return (*mlx.WQEMkeyContextSeg)(q.at(m))
}

// freeMkey writes the UMR of a local invalidate (or of a zero-length bind):
// the mkey is freed, and only the two fields that say so are written in
// its context.
func (q *SQ) freeMkey(u, m int, newRKey uint32) {
	uc := q.umrCtrl(u)
	uc.SetFlags(mlx.MLX5_WQE_UMR_CTRL_FLAG_INLINE | mlx.MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET | mlx.MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN)
	uc.SetMkeyMask(uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE | mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY | mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_QPN))
	mc := q.mkeyCtx(m)
	mc.SetQPNMkey(0xffffff00 | newRKey&0xff)
	mc.SetFree(0x40)
	q.curSize = 8
}

// LocalInv builds a local invalidate of rkey. ibv_wr_local_inv;
// rdma-core: mlx5_send_wr_local_inv.
func (q *SQ) LocalInv(rkey uint32) error {
	fn := mlx.FnWRLocalInv
	if err := q.chk.Builder(fn, q.wrFlags); err != nil {
		return err
	}
	if err := q.budget(fn, 1); err != nil {
		return err
	}
	if err := q.room(fn, 128); err != nil {
		return err
	}
	u, m := q.umrHeader(wrDataLocalInv, rkey)
	q.freeMkey(u, m, 0)
	q.fmCache = smallFence
	q.finalize()
	return nil
}

// BindMW binds the type 2 memory window mw to info's range of an MR under
// the new rkey (a zero length unbinds it). ibv_wr_bind_mw; rdma-core:
// mlx5_send_wr_bind_mw.
func (q *SQ) BindMW(mw *MW, rkey uint32, info *MWBindInfo) error {
	fn := mlx.FnWRBindMW
	if err := q.chk.Builder(fn, q.wrFlags); err != nil {
		return err
	}
	if err := q.budget(fn, 1); err != nil {
		return err
	}
	var e mlx.RuleError
	if !mlx.ValidateArgsWRBindMWInto(&e, unsafe.Pointer(mw), unsafe.Pointer(info)) {
		return q.chk.LatchRule(fn, &e)
	}
	cinfo := mlx.MWBindInfo{Addr: info.Addr, Length: info.Length, MWAccessFlags: info.AccessFlags}
	if !cinfo.ValidateInto(&e) {
		return q.chk.LatchRule(fn, &e)
	}
	size := 128
	if info.Length > 0 {
		size = 192
	}
	if err := q.room(fn, size); err != nil {
		return err
	}
	u, m := q.umrHeader(wrDataBindMW, mw.RKey)
	if info.Length == 0 {
		q.freeMkey(u, m, rkey)
	} else {
		uc := q.umrCtrl(u)
		uc.SetFlags(mlx.MLX5_WQE_UMR_CTRL_FLAG_INLINE | mlx.MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET | mlx.MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE)
		uc.SetKLMOctowords(4)
		uc.SetMkeyMask(uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE|mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY|
			mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_QPN|mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN|
			mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_START_ADDR) | accessMask)
		mc := q.mkeyCtx(m)
		mc.SetQPNMkey(rkey&0xff | q.qpn<<8)
		mc.SetAccessFlags(mkeyAccess(uint32(info.AccessFlags)))
		mc.SetFree(0)
		start := info.Addr
		if info.AccessFlags&mlx.IBV_ACCESS_ZERO_BASED != 0 {
			start = 0
		}
		mc.SetStartAddr(start)
		mc.SetLen(info.Length)
		k := q.wrap(m + mlx.WQEMkeyContextSegSize)
		klm := (*mlx.WQEUMRKLMSeg)(q.at(k))
		klm.SetByteCount(uint32(info.Length))
		klm.SetMkey(info.LKey)
		klm.SetAddress(info.Addr)
		clear(q.bytes(k+mlx.WQEUMRKLMSegSize, wqebb-mlx.WQEUMRKLMSegSize))
		q.curSize = 12
	}
	q.fmCache = smallFence
	q.finalize()
	return nil
}

// Memcpy builds a DMA copy of length bytes (at most the device's
// max_wr_memcpy_length) from src to dest. mlx5dv_wr_memcpy; rdma-core:
// mlx5_send_wr_memcpy.
func (q *SQ) Memcpy(destLKey uint32, destAddr uint64, srcLKey uint32, srcAddr uint64, length uint64) error {
	fn := mlx.FnWRMemcpy
	if err := q.chk.Memcpy(fn, q.wrFlags, length); err != nil {
		return err
	}
	if err := q.budget(fn, 1); err != nil {
		return err
	}
	if err := q.room(fn, wqebb); err != nil {
		return err
	}
	// The device reads a byte count of 0 as 2 GiB.
	bc := uint32(length)
	if length == 1<<31 {
		bc = 0
	}
	q.initWQE(mlx.MLX5_OPCODE_MMO, wrDataMemcpy, q.wrFlags)
	c := q.ctrl()
	c.SetOpmod(opModMMODMA)
	md := (*mlx.MMOMetadataSeg)(q.at(q.curCtrl + 16))
	md.SetMMOControl310(0)
	md.SetLocalKey(q.pd.OpaqueLKey)
	md.SetLocalAddress(q.pd.OpaqueAddr)
	src := (*mlx.WQEDataSeg)(q.at(q.curCtrl + 32))
	src.SetByteCount(bc)
	src.SetLKey(srcLKey)
	src.SetAddr(srcAddr)
	dst := (*mlx.WQEDataSeg)(q.at(q.curCtrl + 48))
	dst.SetByteCount(bc)
	dst.SetLKey(destLKey)
	dst.SetAddr(destAddr)
	q.curSize = 4
	q.finalize()
	return nil
}

// RawWQE posts a WQE the caller built: ds 16-byte units, its size taken
// from the control segment. Only the WQE index is replaced; wr_flags do
// not apply. mlx5dv_wr_raw_wqe; rdma-core: mlx5_wr_raw_wqe.
func (q *SQ) RawWQE(wqe []byte) error {
	fn := mlx.FnWRRawWQE
	if err := q.chk.RawWQE(fn, q.wrFlags, wqe); err != nil {
		return err
	}
	if err := q.budget(fn, 1); err != nil {
		return err
	}
	ds := int(wqe[7] & 0x3f)
	if err := q.room(fn, ds*16); err != nil {
		return err
	}
	slot := q.curPost & q.mask
	q.book(slot, wrDataRaw, wqe[3]) // the opcode: byte 3 of opmod_idx_opcode
	q.fmCache = 0
	q.curCtrl = int(slot) * wqebb
	q.copyWrap(q.curCtrl, wqe[:ds*16])
	c := q.ctrl()
	first := *(*uint32)(unsafe.Pointer(&wqe[0]))
	c.SetOpmodIdxOpcode(mlx.BE32(first).Value()&0xff0000ff | uint32(uint16(q.curPost))<<8)
	q.curSize = ds
	q.curPost += uint32(ds+3) / 4
	return nil
}
