package sq

import (
	"encoding/binary"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
)

// MkeyTemplate is a validated mkey configuration, applied with
// ConfigureMkey: the checked attributes, and the bytes of the UMR they
// give, computed once.
type MkeyTemplate struct {
	chk *wrcheck.MkeyTemplate
	img mkeyImage
}

// mkeyImage is what a template's UMR and SET_PSVs hold whatever the mkey
// and the layout, as the big-endian values of whole words:
// ConfigureMkey stores them and writes the rest (the ctrl segments, the
// tag, the length, the KLMs, the PSV indexes).
type mkeyImage struct {
	umr0    uint64 // UMR ctrl bytes 0..7 but the KLM octowords: flags, BSF octowords
	mask    uint64 // UMR ctrl bytes 8..15: the mkey mask
	mkc0    uint64 // mkey context bytes 0..7 but the tag: access, qpn 0xffffff
	flagsPD uint64 // mkey context bytes 8..15
	bsf     uint   // the BSF's bytes (0: no signature)
	tail    uint   // the BSF's and the SET_PSVs' bytes
	sig     bool   // a signature: the UMR carries a BSF, SET_PSVs follow
	sigImage
}

// NewMkeyTemplate validates access flags and signature attributes (nil
// for none) once, for ConfigureMkey.
func NewMkeyTemplate(access mlx.AccessFlags, sig *mlx.SigBlockAttr) (*MkeyTemplate, error) {
	c, err := wrcheck.NewMkeyTemplate(access, sig)
	if err != nil {
		return nil, err
	}
	t := &MkeyTemplate{chk: c}
	t.image()
	return t, nil
}

// image computes the words the template's configurations share, as
// umrStart, access, layoutEnd and umrFinalize write them, and the BSF as
// umrFinalize does.
func (t *MkeyTemplate) image() {
	c, g := t.chk, &t.img
	mask := uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE|mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY|mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN) | accessMask
	g.umr0 = uint64(mlx.MLX5_WQE_UMR_CTRL_FLAG_INLINE) << 56
	g.mkc0 = uint64(mkeyAccess(c.Access))<<40 | 0xffffff00
	if c.Sig {
		mask |= uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_BSF_ENABLE)
		g.bsf = mlx.BSFSize
		g.umr0 |= mlx.BSFSize / 16
		g.flagsPD = 1 << 30
		mk := wrcheck.Mkey{Mem: c.Mem, Wire: c.Wire, SigFlags: c.SigFlags, CheckMask: c.CheckMask, CopyMask: c.CopyMask}
		g.build(&mk)
		g.sig = true
		g.tail = g.bsf
		if g.mem {
			g.tail += wqebb
		}
		if g.wire {
			g.tail += wqebb
		}
	}
	g.mask = mask
}

// ConfigureMkey configures m with the template's access flags and
// signature and a list layout of sges. It writes exactly what
// MkeyConfigure (with no attributes) followed by SetMkeyAccessFlags,
// SetMkeyLayoutList and SetMkeySigBlock would, checked against the same
// rules, but with the template's attributes checked once and the
// configuration written in one call. When its common case does not hold
// (an mkey with crypto, a pending signature-error update, a state left
// unknown by a failed batch) it runs the checks of those calls one by one,
// all of them before it writes anything: a rejected call writes nothing.
// A nil m or template is the rule error of a NULL mkey or attr.
//
// The common case, when it does not wrap the ring, is written here from
// the template's image (the checks and the stores in one function: a
// call more costs its arguments' spills): every word a whole big-endian
// store of a value known up front (what initWQE, umrFinalize, psvWQE and
// finalize write), the WQEs' bookkeeping and fm_ce_se done at once.
// fm_ce_se is fenceCEFlags' (q.fcs holds the current wr_flags' part; the
// cached fence is the batch's before the UMR and a small fence after it).
func (q *SQ) ConfigureMkey(m *Mkey, t *MkeyTemplate, sges []mlx.SGE) error {
	return q.configureMkey(m, t, sges, false)
}

// PostConfigureMkey posts one configuration of m with template t and a
// list layout of sges, with a doorbell of its own: Start, ConfigureMkey
// and Complete in one call (ibv_wr_start, mlx5dv_wr_mkey_configure,
// mlx5dv_wr_set_mkey_access_flags, mlx5dv_wr_set_mkey_layout_list,
// mlx5dv_wr_set_mkey_sig_block with the template's signature if it has
// one, ibv_wr_complete), for a program that rings each configuration as
// it comes (a storage target's per-I/O mkey). It returns what those
// three calls would, posts nothing when a rule is broken and then writes
// nothing either (ConfigureMkey's checks come before its first store). Its
// common case leaves the checker as it found it (closed, nothing open, no
// mkey to roll back) but for the mkey's state, which it updates as the
// posted configuration does.
func (q *SQ) PostConfigureMkey(m *Mkey, t *MkeyTemplate, sges []mlx.SGE) error {
	return q.configureMkey(m, t, sges, true)
}

// postConfigureOne is PostConfigureMkey's general case: the three calls
// (ConfigureMkey writes nothing when it fails; Complete then returns its
// error and posts nothing).
//
//go:noinline
func (q *SQ) postConfigureOne(m *Mkey, t *MkeyTemplate, sges []mlx.SGE) error {
	if err := q.Start(); err != nil {
		return err
	}
	q.configureMkey(m, t, sges, false) // its error is latched: Complete returns it
	return q.Complete()
}

// configureMkey is ConfigureMkey, and with post PostConfigureMkey: its
// common case makes Start's checks (the checker's, and the gate's last,
// since entering commits the batch) with the configuration's, and rings
// the doorbell.
func (q *SQ) configureMkey(m *Mkey, t *MkeyTemplate, sges []mlx.SGE, post bool) error {
	mk := m.check() // the same memory, as the checker declares it
	fn := mlx.FnWRMkeyConfigure
	length, hi := wrcheck.ListSum(sges)
	short := hi <= wrcheck.MaxKLMLength
	if mk == nil || t == nil || !q.fits(3) && !(q.refresh() && q.fits(3)) ||
		!(!post && q.chk.TemplateRun() && q.chk.TemplateNext(mk, t.chk, len(sges), length, short) ||
			q.chk.ConfigureList(fn, q.wrFlags, mk, t.chk, len(sges), length, short, post)) {
		// Not the common case: a NULL argument, max_post near (the UMR
		// and up to two SET_PSVs) after reading the poller's tail, or a
		// configuration the checker's common case does not take.
		if post {
			return q.postConfigureOne(m, t, sges)
		}
		return q.configureChecked(mk, t, sges)
	}
	// umrRing's room check (max_post holds it: fits(3)), in whole WQEBBs:
	// the UMR (its translation padded to a WQEBB, the template's BSF) and
	// the template's SET_PSVs, as the checker's answer (TemplateUMR) says.
	g, xlat := &t.img, align64(16*len(sges))
	need := uint(umrFixed+xlat) + g.tail
	slot := q.curPost & q.mask
	base := int(slot) * wqebb
	if post && !q.enterPosted(mk, t, length, base, need) {
		return q.postConfigureOne(m, t, sges)
	}
	if !q.roomFor(int(need)) && (!q.refresh() || !q.roomFor(int(need))) {
		return q.umrRing(fn, q.chk.TemplateUMR(t.chk)) // the error, named as umrRing names it
	}
	if base+int(need) > q.qend {
		q.configureWrapped(mk, t, sges, length)
		return nil
	}
	p := q.at(base)
	ds := int((uint(umrFixed+xlat) + g.bsf) / 16)
	fcs := q.fcs | q.fmCache&q.keepFm
	if g.sig {
		fcs &^= ce // the last SET_PSV reports the completion, not the UMR
	}
	q.book(slot, wrDataUMR, uint8(mlx.MLX5_OPCODE_UMR))
	c := (*[umrFixed]byte)(p)
	// The ctrl segment in whole 32-bit words of the device's byte order:
	// binary.BigEndian's byte stores of a value with bytes known zero are
	// not merged back into one, but split into up to four narrow stores.
	put2(&c[0], uint32(uint16(q.curPost))<<8|uint32(mlx.MLX5_OPCODE_UMR), q.qpn<<8|uint32(ds))
	put2(&c[8], uint32(fcs), mk.LKey)
	binary.BigEndian.PutUint64(c[16:24], g.umr0|uint64(uint(xlat)/16)<<16)
	binary.BigEndian.PutUint64(c[24:32], g.mask)
	*(*[32]byte)(c[32:64]) = [32]byte{}
	binary.BigEndian.PutUint64(c[64:72], g.mkc0|uint64(mk.LKey&0xff))
	binary.BigEndian.PutUint64(c[72:80], g.flagsPD)
	binary.BigEndian.PutUint64(c[80:88], 0)
	binary.BigEndian.PutUint64(c[88:96], length)
	*(*[32]byte)(c[96:128]) = [32]byte{}
	q.klms(base+umrFixed, sges)
	if n := mlx.WQEUMRKLMSegSize * len(sges); n < xlat {
		q.zeroPad(base+umrFixed+n, xlat-n)
	}
	q.curPost += uint32(ds+3) / 4
	q.inl = true
	if !g.sig {
		q.fmCache = smallFence
		q.curCtrl, q.curSize = base, ds
		return q.posted(post)
	}
	// The BSF, from the image with the mkey's PSV indexes, and the
	// SET_PSVs after the UMR's small fence: the memory domain's reports
	// no completion when the wire domain's follows it. The last (most
	// often the only) is written here, not through psvWQE: a call more.
	g.writeBSF((*mlx.BSF)(unsafe.Add(p, umrFixed+xlat)), mk)
	fcs = q.fcs | smallFence&q.keepFm
	index, ts := mk.WirePSV, g.wireTS
	switch {
	case g.mem && g.wire:
		q.psvWQE(mk.MemPSV, g.memTS, fcs&^ce|q.sig)
	case g.mem:
		index, ts = mk.MemPSV, g.memTS
	case !g.wire: // no domain, no SET_PSV (NewMkeyTemplate refuses it)
		q.fmCache = smallFence
		return q.posted(post)
	}
	slot = q.curPost & q.mask
	off := int(slot) * wqebb
	q.book(slot, wrDataUMR, uint8(mlx.MLX5_OPCODE_SET_PSV))
	ps := (*[32]byte)(q.at(off))
	put2(&ps[0], uint32(uint16(q.curPost))<<8|uint32(mlx.MLX5_OPCODE_SET_PSV), q.qpn<<8|2)
	put32(&ps[8], uint32(fcs))
	put2(&ps[16], index, 0)
	binary.BigEndian.PutUint64(ps[24:32], ts)
	q.curPost++
	q.curCtrl, q.curSize = off, 2
	q.fmCache = smallFence
	return q.posted(post)
}

// enterPosted is PostConfigureMkey's common case past the checks:
// unless the ring has no room before reading the poller's tail, or the
// configuration at base (need bytes) wraps it, or the gate is closed or
// contended (then the three calls run instead), it enters the gate, which
// commits the batch, and records the configuration on mk.
func (q *SQ) enterPosted(mk *wrcheck.Mkey, t *MkeyTemplate, length uint64, base int, need uint) bool {
	if !q.roomFor(int(need)) || base+int(need) > q.qend || !q.pub.gate.EnterFast() {
		return false
	}
	wrcheck.TemplatePosted(mk, t.chk, length)
	q.inl = false
	return true
}

// posted rings the doorbell for the work requests a Post form wrote
// (post), as Complete does: nothing to do for a call inside a batch.
func (q *SQ) posted(post bool) error {
	if !post {
		return nil
	}
	n := q.nreq
	q.nreq = 0
	return q.ringDoorbell(n)
}

// put32 stores v at p (4-byte aligned) in the device's byte order, one
// store whatever the compiler knows of v's bytes.
func put32(p *byte, v uint32) { *(*mlx.BE32)(unsafe.Pointer(p)) = mlx.ToBE32(v) }

// put2 stores hi and lo at p (8-byte aligned) as two consecutive words in
// the device's byte order, in one 64-bit store: on the template's and
// the four calls' paths the stores, more than the instructions, are what
// a configuration's time follows (docs/performance.md).
func put2(p *byte, hi, lo uint32) { be64(unsafe.Pointer(p), uint64(hi)<<32|uint64(lo)) }

// configureWrapped writes a template configuration the checks accepted
// that wraps the ring, with the writers of the calls.
func (q *SQ) configureWrapped(mk *wrcheck.Mkey, t *MkeyTemplate, sges []mlx.SGE, length uint64) {
	q.umrStart(mk)
	q.access(t.chk.Access)
	q.layoutList(sges, length)
	q.umrFinalize(q.chk.TemplateUMR(t.chk))
}

// psvWQE writes a SET_PSV work request, the initial transient signature
// ts of a signature domain's PSV index, with fm_ce_se fcs: at the
// producer index, booked, its ctrl segment but the immediate (libmlx5
// leaves it) and its PSV segment in whole words. It is one WQEBB: it
// never wraps.
func (q *SQ) psvWQE(index uint32, ts uint64, fcs uint8) {
	slot := q.curPost & q.mask
	off := int(slot) * wqebb
	q.book(slot, wrDataUMR, uint8(mlx.MLX5_OPCODE_SET_PSV))
	p := (*[32]byte)(q.at(off))
	put2(&p[0], uint32(uint16(q.curPost))<<8|uint32(mlx.MLX5_OPCODE_SET_PSV), q.qpn<<8|2)
	put32(&p[8], uint32(fcs))
	put2(&p[16], index, 0)
	binary.BigEndian.PutUint64(p[24:32], ts)
	q.curPost++
	q.curCtrl, q.curSize = off, 2
}

// configureChecked is ConfigureMkey's general case: the checks of the
// calls one by one, and only then is the UMR written, as those calls
// would have written it.
func (q *SQ) configureChecked(mk *wrcheck.Mkey, t *MkeyTemplate, sges []mlx.SGE) error {
	fn := mlx.FnWRMkeyConfigure
	l := wrcheck.ListLayout(sges)
	if t == nil {
		// The template stands for the configuration's attributes: the
		// checks report a NULL mkey, else a NULL attr.
		_, err := q.chk.MkeyConfigure(fn, q.wrFlags, mk, 0, nil)
		return err
	}
	n := uint8(2)
	if t.chk.Sig {
		n = 3
	}
	var conf mlx.MkeyConfAttr
	if _, err := q.chk.MkeyConfigure(fn, q.wrFlags, mk, n, &conf); err != nil {
		return err
	}
	if err := q.budget(fn, 1); err != nil {
		return err
	}
	if _, err := q.chk.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, t.chk.Access); err != nil {
		return err
	}
	last := mlx.FnWRSetMkeyLayoutList
	u, err := q.chk.MkeyLayout(last, l)
	if err != nil {
		return err
	}
	if t.chk.Sig {
		last = mlx.FnWRSetMkeySigBlock
		if u, err = q.chk.MkeySigBlock(last, t.chk.SigAttr()); err != nil {
			return err
		}
	}
	if err := q.umrRoom(last, align64(16*len(sges)), true, u); err != nil {
		return err
	}
	q.umrStart(mk)
	q.access(t.chk.Access)
	q.layoutList(sges, l.Length)
	q.umrFinalize(u)
	return nil
}
