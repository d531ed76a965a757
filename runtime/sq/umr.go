package sq

import (
	"encoding/binary"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
)

// The mkey mask bits of a UMR's access flags.
const accessMask = uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE | mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |
	mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE | mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC)

// umrFixed is a UMR's ctrl, UMR ctrl and mkey context segments.
const umrFixed = 2 * wqebb

// mkeyAccess maps ibv_access_flags to an mkey context's access byte.
func mkeyAccess(acc uint32) mlx.WQEMkeyContextAccessFlags {
	var f mlx.WQEMkeyContextAccessFlags
	if acc&uint32(mlx.IBV_ACCESS_LOCAL_WRITE) != 0 {
		f |= mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE
	}
	if acc&uint32(mlx.IBV_ACCESS_REMOTE_WRITE) != 0 {
		f |= mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE
	}
	if acc&uint32(mlx.IBV_ACCESS_REMOTE_READ) != 0 {
		f |= mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ
	}
	if acc&uint32(mlx.IBV_ACCESS_REMOTE_ATOMIC) != 0 {
		f |= mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC
	}
	return f
}

func align64(n int) int { return (n + wqebb - 1) &^ (wqebb - 1) }

// umrRoom checks that the UMR being built fits. While the configuration
// waits for setters (u nil), the ring must hold its fixed part and the
// layout bytes being added. Once this call finished it, max_post must hold
// its work requests (header: this call began it; else its UMR is already
// counted) and the ring its fixed part, translation, BSFs and SET_PSVs.
func (q *SQ) umrRoom(fn mlx.Func, layout int, header bool, u *wrcheck.UMR) error {
	if u == nil {
		if layout == 0 && !header {
			return nil // nothing added to what the configuration checked
		}
		return q.room(fn, umrFixed+layout)
	}
	wrs := u.WRs
	if !header {
		wrs-- // the UMR was counted when the configuration began
	}
	if q.fits(wrs) && q.roomFor(umrNeed(u)) {
		return nil // the common case, without the calls that name the rule
	}
	if err := q.budget(fn, wrs); err != nil {
		return err
	}
	return q.umrRing(fn, u)
}

// umrNeed is the ring's bytes a finished configuration takes: its UMR's
// fixed part, translation and BSFs, and its SET_PSVs.
func umrNeed(u *wrcheck.UMR) int {
	need := umrFixed + u.Xlat + (u.WRs-1)*wqebb
	if u.SigBSF {
		need += wqebb
	}
	if u.CryptoBSF {
		need += wqebb
	}
	return need
}

// umrFits is umrRoom's common case for a setter that finished the
// configuration (header false, no layout added), inlinable: max_post
// holds its SET_PSVs (its UMR was counted when it began) and the ring
// its bytes. umrRoom names the rule when it does not hold.
func (q *SQ) umrFits(u *wrcheck.UMR) bool {
	return q.fits(u.WRs-1) && q.roomFor(umrNeed(u))
}

// umrRing checks that the ring holds the UMR of a finished configuration.
func (q *SQ) umrRing(fn mlx.Func, u *wrcheck.UMR) error {
	return q.room(fn, umrNeed(u))
}

// umrBegin checks that an mkey configuration's builder fn fits: its UMR
// within max_post and, with u (nil: not finished), what umrRoom checks.
func (q *SQ) umrBegin(fn mlx.Func, layout int, u *wrcheck.UMR) error {
	if u == nil && q.fits(1) && q.roomFor(umrFixed+layout) {
		return nil // the common case, inlined
	}
	if err := q.budget(fn, 1); err != nil {
		return err
	}
	return q.umrRoom(fn, layout, true, u)
}

// roomFor is room's test, inlinable: size bytes fit at the producer
// index. room names the rule when it fails.
// size is never negative: the WQEBBs are an unsigned shift, not a signed
// division (which rounds towards zero in four more instructions).
func (q *SQ) roomFor(size int) bool {
	return int(int32(q.limit-q.curPost)) >= int(uint(size+wqebb-1)/wqebb)
}

// finishIfDone writes the rest of the UMR when the checks finished the
// configuration in this call.
func (q *SQ) finishIfDone(u *wrcheck.UMR) {
	if u != nil {
		q.umrFinalize(u)
	}
}

// MkeyConfigure starts configuring the indirect mkey m with numSetters
// setters to follow (0: configure it as it is now; a uint8 as the C
// uint8_t, so no count wraps). wr_flags must have IBV_SEND_INLINE.
// mlx5dv_wr_mkey_configure; rdma-core: mlx5_send_wr_mkey_configure.
func (q *SQ) MkeyConfigure(m *Mkey, numSetters uint8, attr *mlx.MkeyConfAttr) error {
	mk := m.check() // the same memory, as the checker declares it
	if q.chk.MkeyConfigureOK(q.wrFlags, mk, numSetters, attr) && q.fits(1) && q.roomFor(umrFixed) {
		// The common case (the checker's, and umrBegin's), one call into
		// the checker where MkeyConfigure is two.
		q.chk.OpenMkey(mk, numSetters)
		q.umrStart(mk)
		return nil
	}
	return q.mkeyConfigure(mk, numSetters, attr)
}

// mkeyConfigure is MkeyConfigure's general case: the checks one by one,
// which name the rule, then the room.
func (q *SQ) mkeyConfigure(mk *wrcheck.Mkey, numSetters uint8, attr *mlx.MkeyConfAttr) error {
	fn := mlx.FnWRMkeyConfigure
	u, err := q.chk.MkeyConfigure(fn, q.wrFlags, mk, numSetters, attr)
	if err != nil {
		return err
	}
	if u != nil || !q.fits(1) || !q.roomFor(umrFixed) { // else umrBegin's common case, inlined
		if err := q.umrBegin(fn, 0, u); err != nil {
			return err
		}
	}
	q.umrStart(mk)
	q.finishIfDone(u)
	return nil
}

// umrSegs is what the setters of an open mkey configuration gave its UMR
// ctrl and mkey context segments; umrFinalize writes both segments once,
// whole, when the configuration finishes (the setters only record here:
// no read-modify-write of the ring's big-endian fields per call).
type umrSegs struct {
	mask   uint64
	length uint64
	klm    uint16
	access mlx.WQEMkeyContextAccessFlags
	fcs    uint8 // the ctrl segment's fm_ce_se, from wr_flags when it began
}

// umrStart books an mkey configuration's UMR (initWQE's bookkeeping and
// fence); its segments are written when it finishes (umrFinalize).
func (q *SQ) umrStart(mk *wrcheck.Mkey) {
	slot := q.curPost & q.mask
	q.book(slot, wrDataUMR, uint8(mlx.MLX5_OPCODE_UMR))
	q.curCtrl = int(slot) * wqebb
	// fenceCEFlags(q.wrFlags) from SetWRFlags' part (fmCache is replaced
	// below): a dozen instructions fewer.
	q.umr = umrSegs{mask: uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE | mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY), fcs: q.fcs | q.fmCache&q.keepFm}
	q.curSize = umrFixed / 16
	m := q.wrap(q.curCtrl + mlx.WQECtrlSegSize + mlx.WQEUMRCtrlSegSize)
	q.curData = q.wrap(m + mlx.WQEMkeyContextSegSize)
	q.fmCache = smallFence
	q.inl = true
}

// SetMkeyAccessFlags sets the configured mkey's access flags.
// mlx5dv_wr_set_mkey_access_flags.
func (q *SQ) SetMkeyAccessFlags(acc mlx.AccessFlags) error {
	if q.chk.TryMkeyAccess(uint32(acc)) { // the checker's common case, inlined
		q.access(uint32(acc))
		return nil
	}
	fn := mlx.FnWRSetMkeyAccessFlags
	u, err := q.chk.MkeyAccess(fn, uint32(acc))
	if err != nil {
		return err
	}
	if u != nil && !q.umrFits(u) { // else it fits, or nothing was added to what the configuration checked
		if err := q.umrRoom(fn, 0, false, u); err != nil {
			return err
		}
	}
	q.access(uint32(acc))
	q.finishIfDone(u)
	return nil
}

// access records validated access flags (the four of accessByte's
// index: the rules refuse any other).
func (q *SQ) access(acc uint32) {
	q.umr.mask |= accessMask
	q.umr.access = accessByte[acc&0xf]
}

// accessByte is mkeyAccess of the four flags an mkey configuration takes
// (IBV_ACCESS_LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC: bits
// 0 to 3): one load instead of four tests.
var accessByte = func() (t [16]mlx.WQEMkeyContextAccessFlags) {
	for i := range t {
		t[i] = mkeyAccess(uint32(i))
	}
	return t
}()

// interleavedLength is the length an interleaved layout covers (wrapping
// at 2^64 as libmlx5's does) and the bytes of one repetition.
func interleavedLength(repeat uint32, data []mlx.MRInterleaved) (total, once uint64) {
	for i := range data {
		once += uint64(data[i].BytesCount)
	}
	return once * uint64(repeat), once
}

// SetMkeyLayoutList sets the configured mkey's layout to a list of
// memory regions, one after the other. mlx5dv_wr_set_mkey_layout_list.
func (q *SQ) SetMkeyLayoutList(sges []mlx.SGE) error {
	fn := mlx.FnWRSetMkeyLayoutList
	// ListLayout through its branch-free sum: only a list with an entry
	// over MaxKLMLength (refused) needs the index of the first such entry.
	length, hi := wrcheck.ListSum(sges)
	if hi <= wrcheck.MaxKLMLength && q.roomFor(umrFixed+align64(16*len(sges))) && q.chk.ListLayoutOK(len(sges)) {
		q.chk.TookListLayout(len(sges), length) // the common case: room, and the checker's, inlined
		if n, off := len(sges), q.curData; off+16*n <= q.qend {
			q.klms(off, sges) // layoutList's case of KLMs that do not wrap, inlined
			q.layoutEnd(off+16*n, align64(16*n)-16*n, 16*n, length)
			return nil
		}
		q.layoutList(sges, length)
		return nil
	}
	l := wrcheck.Layout{Entries: len(sges), Length: length}
	if hi > wrcheck.MaxKLMLength {
		l = wrcheck.ListLayout(sges)
	}
	u, err := q.chk.MkeyLayout(fn, l)
	if err != nil {
		return err
	}
	if u != nil || !q.roomFor(umrFixed+align64(16*len(sges))) {
		if err := q.umrRoom(fn, align64(16*len(sges)), false, u); err != nil {
			return err
		}
	}
	q.layoutList(sges, l.Length)
	q.finishIfDone(u)
	return nil
}

// SetMkeyLayoutInterleaved sets the configured mkey's layout to repeat
// times the interleaving of data's entries.
// mlx5dv_wr_set_mkey_layout_interleaved.
func (q *SQ) SetMkeyLayoutInterleaved(repeat uint32, data []mlx.MRInterleaved) error {
	fn := mlx.FnWRSetMkeyLayoutInterleaved
	length, once := interleavedLength(repeat, data)
	u, err := q.chk.MkeyLayout(fn, wrcheck.Layout{Entries: len(data), Length: length, Interleaved: true})
	if err != nil {
		return err
	}
	if err := q.umrRoom(fn, align64(16+16*len(data)), false, u); err != nil {
		return err
	}
	q.layoutInterleaved(repeat, data, length, once)
	q.finishIfDone(u)
	return nil
}

// layoutList writes a list layout: a KLM per entry, padded with zero KLMs
// to a whole WQEBB.
func (q *SQ) layoutList(sges []mlx.SGE, length uint64) {
	off := q.curData
	if n := len(sges); off+16*n <= q.qend {
		q.klms(off, sges)
		q.layoutEnd(off+16*n, align64(16*n)-16*n, 16*n, length)
		return
	}
	for i := range sges {
		if off == q.qend {
			off = 0
		}
		k := (*mlx.WQEUMRKLMSeg)(q.at(off))
		k.SetByteCount(sges[i].Length)
		k.SetMkey(sges[i].LKey)
		k.SetAddress(sges[i].Addr)
		off += mlx.WQEUMRKLMSegSize
	}
	n := len(sges)
	q.layoutEnd(off, align64(16*n)-16*n, 16*n, length)
}

// klms writes a KLM per entry at off, in whole words; they must not wrap.
func (q *SQ) klms(off int, sges []mlx.SGE) {
	p := q.at(off) // once: the stores could alias q.ring for the compiler
	for i := range sges {
		k := (*[16]byte)(unsafe.Add(p, i*mlx.WQEUMRKLMSegSize))
		binary.BigEndian.PutUint64(k[0:8], uint64(sges[i].Length)<<32|uint64(sges[i].LKey))
		binary.BigEndian.PutUint64(k[8:16], sges[i].Addr)
	}
}

// layoutInterleaved writes an interleaved layout: the repeat block header
// and an entry per region, padded to a whole WQEBB.
func (q *SQ) layoutInterleaved(repeat uint32, data []mlx.MRInterleaved, length, once uint64) {
	h := (*mlx.WQEUMRRepeatBlockSeg)(q.at(q.curData))
	h.SetByteCount(uint32(once))
	h.SetOp(0x400) // the repeat block's opcode (MLX5_UMR_REPEAT_BLOCK_OP)
	h.SetRepeatCount(repeat)
	h.SetReserved(0)
	h.SetNumEnt(uint16(len(data)))
	off := q.curData + mlx.WQEUMRRepeatBlockSegSize
	for i := range data {
		if off == q.qend {
			off = 0
		}
		e := (*mlx.WQEUMRRepeatEntSeg)(q.at(off))
		d := &data[i]
		e.SetVa(d.Addr)
		e.SetByteCount(uint16(d.BytesCount))
		e.SetStride(uint16(d.BytesCount + d.BytesSkip))
		e.SetMemkey(d.LKey)
		off += mlx.WQEUMRRepeatEntSegSize
	}
	xlat := 16 * (len(data) + 1)
	q.layoutEnd(off, align64(xlat)-xlat, xlat, length)
}

// zeroPad writes n bytes of zeros at off, the padding of a translation
// to its WQEBB (n a multiple of 16 below 64; it does not wrap: the
// WQEBB ends at or before the ring's end), as 16-byte stores: clear's
// call to memclr made its callers keep a frame and spill for it.
func (q *SQ) zeroPad(off, n int) {
	p := q.at(off)
	for i := 0; i < n; i += 16 { // never a pointer past the padding (checkptr)
		*(*[16]byte)(unsafe.Add(p, i)) = [16]byte{}
	}
}

// layoutEnd pads the translation with zeros and writes its size and the
// mkey's length.
func (q *SQ) layoutEnd(off, pad, xlat int, length uint64) {
	q.zeroPad(off, pad)
	q.umr.length = length
	q.umr.mask |= uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN)
	q.umr.klm = uint16(align64(xlat) / 16)
	q.curSize += align64(xlat) / 16
}

// SetMkeySigBlock gives the configured mkey a block signature (T10-DIF or
// CRC, in the memory and/or wire domain). mlx5dv_wr_set_mkey_sig_block.
func (q *SQ) SetMkeySigBlock(attr *mlx.SigBlockAttr) error {
	fn := mlx.FnWRSetMkeySigBlock
	u := q.chk.TrySigBlock(attr) // the common case, one call into the checker
	// And the writer's: room, nothing wraps, the image cached. (The
	// cache holds the answer's generation whenever TrySigBlock answers:
	// the mkey holds the attributes only after a configuration finished
	// with them, whose umrFinalize built it; the test stays, one compare,
	// as the guard of the BSF's bytes.)
	if u != nil && q.sigImg.gen == u.SigGen && q.umrFits(u) && q.curCtrl+umrNeed(u) <= q.qend {
		q.umrFinalizeSig(u)
		return nil
	}
	if u == nil {
		var err error
		if u, err = q.chk.MkeySigBlock(fn, attr); err != nil {
			return err
		}
	}
	if u != nil && !q.umrFits(u) { // else it fits, or nothing was added to what the configuration checked
		if err := q.umrRoom(fn, 0, false, u); err != nil {
			return err
		}
	}
	q.finishIfDone(u)
	return nil
}

// SetMkeyCrypto gives the configured mkey AES-XTS crypto attributes;
// attr.DEK points at a DEK. mlx5dv_wr_set_mkey_crypto.
func (q *SQ) SetMkeyCrypto(attr *mlx.CryptoAttr) error {
	fn := mlx.FnWRSetMkeyCrypto
	u, err := q.chk.MkeyCrypto(fn, attr)
	if err != nil {
		return err
	}
	if u != nil && !q.umrFits(u) { // else it fits, or nothing was added to what the configuration checked
		if err := q.umrRoom(fn, 0, false, u); err != nil {
			return err
		}
	}
	q.finishIfDone(u)
	return nil
}

// MRList configures m, in one call, with access flags and a list layout.
// wr_flags must have IBV_SEND_INLINE. mlx5dv_wr_mr_list.
func (q *SQ) MRList(m *Mkey, acc mlx.AccessFlags, sges []mlx.SGE) error {
	mk := m.check() // the same memory, as the checker declares it
	fn := mlx.FnWRMRList
	// ListLayout through its branch-free sum: only a list with an entry
	// over MaxKLMLength (refused) needs the index of the first such entry.
	length, hi := wrcheck.ListSum(sges)
	l := wrcheck.Layout{Entries: len(sges), Length: length}
	if hi > wrcheck.MaxKLMLength {
		l = wrcheck.ListLayout(sges)
	}
	u, err := q.chk.MR(fn, q.wrFlags, mk, uint32(acc), l)
	if err != nil {
		return err
	}
	if err := q.umrBegin(fn, align64(16*len(sges)), u); err != nil {
		return err
	}
	q.umrStart(mk)
	q.access(uint32(acc))
	q.layoutList(sges, l.Length)
	q.finishIfDone(u)
	return nil
}

// MRInterleaved configures m, in one call, with access flags and an
// interleaved layout. wr_flags must have IBV_SEND_INLINE.
// mlx5dv_wr_mr_interleaved.
func (q *SQ) MRInterleaved(m *Mkey, acc mlx.AccessFlags, repeat uint32, data []mlx.MRInterleaved) error {
	mk := m.check() // the same memory, as the checker declares it
	fn := mlx.FnWRMRInterleaved
	length, once := interleavedLength(repeat, data)
	u, err := q.chk.MR(fn, q.wrFlags, mk, uint32(acc), wrcheck.Layout{Entries: len(data), Length: length, Interleaved: true})
	if err != nil {
		return err
	}
	if err := q.umrBegin(fn, align64(16+16*len(data)), u); err != nil {
		return err
	}
	q.umrStart(mk)
	q.access(uint32(acc))
	q.layoutInterleaved(repeat, data, length, once)
	q.finishIfDone(u)
	return nil
}

// umrFinalize writes what the checks said the finished configuration's
// UMR carries: the signature error update, the BSFs, the size, and the
// SET_PSV work requests. rdma-core: umr_finalize.
func (q *SQ) umrFinalize(p *wrcheck.UMR) {
	mk := p.Mkey
	mask := q.umr.mask
	var flagsPD uint32
	if p.DisableBSF {
		mask |= uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_BSF_ENABLE)
	}
	if p.SigErr {
		mask |= uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_SIG_ERR)
		flagsPD |= (mk.ErrCount & 1) << 26
	}
	bsz := 0
	var memTS, wireTS uint64
	if p.SigBSF || p.CryptoBSF {
		off := q.curData + p.Xlat
		if off >= q.qend {
			off -= q.qend
		}
		if g := &q.sigImg; p.SigBSF && p.SigGen != 0 && !p.CryptoBSF && g.gen == p.SigGen {
			// sigFor's common case, inlined: the cached image.
			g.writeBSF((*mlx.BSF)(q.at(off)), mk)
			memTS, wireTS = g.memTS, g.wireTS
			off = q.wrap(off + mlx.BSFSize)
			bsz += mlx.BSFSize
		} else if p.SigBSF {
			memTS, wireTS = q.sigFor((*mlx.BSF)(q.at(off)), p)
			off = q.wrap(off + mlx.BSFSize)
			bsz += mlx.BSFSize
		}
		if p.CryptoBSF {
			q.cryptoBSF((*mlx.CryptoBSF)(q.at(off)), mk)
			bsz += mlx.CryptoBSFSize
		}
		q.curSize += bsz / 16
		mask |= uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_BSF_ENABLE)
		flagsPD |= 1 << 30
	}
	q.umr.mask = mask
	fcs := q.umr.fcs
	if p.PSVs {
		fcs &^= ce // the last SET_PSV reports the completion, not the UMR
	}
	// The UMR but its translation and BSFs, and the producer index past
	// it (initWQE's stores and finalize in one, here: a call more costs
	// its arguments' spills): the ctrl segment (opcode and index, QPN and
	// size, fm_ce_se, the mkey as the immediate), then the UMR ctrl and
	// mkey context segments, in whole big-endian words (put32 where a
	// 64-bit word has bytes the compiler knows are zero: it would split
	// it) (the generated setters' field offsets: flags 0, KLM octowords 4,
	// BSF octowords 6, mask 8; access 2, qpn_mkey 4, flags_pd 12, len
	// 24), the rest zero. Each segment lies in one WQEBB: none wraps.
	c := (*[16]byte)(q.at(q.curCtrl))
	put2(&c[0], uint32(uint16(q.curPost))<<8|uint32(mlx.MLX5_OPCODE_UMR), q.qpn<<8|uint32(q.curSize))
	put2(&c[8], uint32(fcs), mk.LKey)
	q.curPost += uint32(q.curSize+3) / 4
	u := (*[mlx.WQEUMRCtrlSegSize]byte)(q.at(q.curCtrl + mlx.WQECtrlSegSize))
	put2(&u[0], uint32(mlx.MLX5_WQE_UMR_CTRL_FLAG_INLINE)<<24, uint32(q.umr.klm)<<16|uint32(bsz/16))
	binary.BigEndian.PutUint64(u[8:16], q.umr.mask)
	*(*[32]byte)(u[16:48]) = [32]byte{}
	m := (*[mlx.WQEMkeyContextSegSize]byte)(q.at(q.wrap(q.curCtrl + mlx.WQECtrlSegSize + mlx.WQEUMRCtrlSegSize)))
	put2(&m[0], uint32(q.umr.access)<<8, 0xffffff00|mk.LKey&0xff)
	put2(&m[8], 0, flagsPD)
	binary.BigEndian.PutUint64(m[16:24], 0)
	binary.BigEndian.PutUint64(m[24:32], q.umr.length)
	*(*[32]byte)(m[32:64]) = [32]byte{}
	if !p.PSVs {
		return
	}
	if !p.SigBSF { // the SIG_ERR update alone: no BSF gave the signatures
		memTS, wireTS = transientSig(&mk.Mem), transientSig(&mk.Wire)
	}
	if mk.Mem.Present {
		flags := q.wrFlags
		if mk.Wire.Present {
			flags &^= uint32(mlx.IBV_SEND_SIGNALED)
		}
		q.psvWQE(mk.MemPSV, memTS, q.fenceCEFlags(flags))
		q.fmCache = smallFence
	}
	if mk.Wire.Present {
		q.psvWQE(mk.WirePSV, wireTS, q.fcs|q.fmCache&q.keepFm) // fenceCEFlags(q.wrFlags): fmCache is replaced below
		q.fmCache = smallFence
	}
}
