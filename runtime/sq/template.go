package sq

import (
	"encoding/binary"

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
// and the layout: ConfigureMkey copies it and writes the rest.
type mkeyImage struct {
	umr             mlx.WQEUMRCtrlSeg     // all but the KLM octowords
	mkc             mlx.WQEMkeyContextSeg // all but the mkey tag and the length
	bsf             mlx.BSF               // the signature BSF, PSV indexes 0
	memBFS, wireBFS uint32                // the BSF's block format selectors
	memTS, wireTS   uint64                // the SET_PSVs' transient signatures
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

// image computes the bytes the template's configurations share, as
// umrStart, access, layoutEnd and umrFinalize write them.
func (t *MkeyTemplate) image() {
	c, g := t.chk, &t.img
	mask := uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE|mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY|mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN) | accessMask
	g.umr.SetFlags(mlx.MLX5_WQE_UMR_CTRL_FLAG_INLINE)
	g.mkc.SetAccessFlags(mkeyAccess(c.Access))
	if c.Sig {
		mask |= uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_BSF_ENABLE)
		g.umr.SetBSFOctowords(mlx.BSFSize / 16)
		g.mkc.SetFlagsPD(1 << 30)
		mk := wrcheck.Mkey{Mem: c.Mem, Wire: c.Wire, SigFlags: c.SigFlags, CheckMask: c.CheckMask, CopyMask: c.CopyMask}
		sigBSF(&g.bsf, &mk, false)
		g.memBFS, g.wireBFS = g.bsf.Basic().MBfsPSV(), g.bsf.Basic().WBfsPSV()
		g.memTS, g.wireTS = transientSig(&c.Mem), transientSig(&c.Wire)
	}
	g.umr.SetMkeyMask(mask)
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
func (q *SQ) ConfigureMkey(m *Mkey, t *MkeyTemplate, sges []mlx.SGE) error {
	mk := m.check() // the same memory, as the checker declares it
	fn := mlx.FnWRMkeyConfigure
	l := wrcheck.ListLayout(sges)
	if mk == nil || t == nil || !q.fits(3) {
		// Not the common case: a NULL argument, or max_post near (the
		// UMR and up to two SET_PSVs).
		return q.configureChecked(mk, t, sges, l)
	}
	u := q.chk.ConfigureMkey(fn, q.wrFlags, mk, t.chk, l)
	if u == nil {
		return q.configureChecked(mk, t, sges, l)
	}
	// umrRing's room check (max_post holds it: fits(3)), in whole WQEBBs:
	// the checker's answer has a signature BSF exactly when the template
	// has a signature, and no crypto BSF.
	need := umrFixed + u.Xlat + (u.WRs-1)*wqebb + bsfBytes(t)
	if int(int32(q.limit-q.curPost)) < need/wqebb && (!q.refresh() || int(int32(q.limit-q.curPost)) < need/wqebb) {
		return q.umrRing(fn, u) // the error, named as umrRing names it
	}
	// The whole of it before the ring's end: the image, straight.
	if slot := int(q.curPost&q.mask) * wqebb; slot+need <= q.qend {
		q.writeTemplate(mk, t, sges, l.Length, slot+umrFixed+u.Xlat)
		return nil
	}
	q.umrStart(mk)
	q.access(t.chk.Access)
	q.layoutList(sges, l.Length)
	q.umrFinalize(u)
	return nil
}

func bsfBytes(t *MkeyTemplate) int {
	if t.chk.Sig {
		return mlx.BSFSize
	}
	return 0
}

// writeTemplate writes a configuration of the common case (no crypto, no
// signature-error update: what wrcheck's ConfigureMkey accepts) from the
// template's image, when it does not wrap: the UMR with the BSF at bsf,
// then the SET_PSVs. The ctrl segments, the KLMs and the SET_PSVs are
// whole-word big-endian stores of values known up front (what initWQE,
// setPSV and finalize write one field at a time), and the two or three
// WQEs' bookkeeping is done here at once.
func (q *SQ) writeTemplate(mk *wrcheck.Mkey, t *MkeyTemplate, sges []mlx.SGE, length uint64, bsf int) {
	g := &t.img
	sig := t.chk.Sig
	base := int(q.curPost&q.mask) * wqebb
	ds := (bsf - base) / 16
	fcs := q.fenceCEFlags(q.wrFlags)
	if sig {
		ds += mlx.BSFSize / 16
		fcs &^= ce // the last SET_PSV reports the completion, not the UMR
	}
	q.headWQE(base, mlx.MLX5_OPCODE_UMR, ds, fcs)
	c := (*[16]byte)(q.at(base))
	binary.BigEndian.PutUint32(c[12:16], mk.LKey)
	u := (*mlx.WQEUMRCtrlSeg)(q.at(base + mlx.WQECtrlSegSize))
	*u = g.umr
	u.SetKLMOctowords(uint16((bsf - base - umrFixed) / 16))
	m := (*mlx.WQEMkeyContextSeg)(q.at(base + wqebb))
	*m = g.mkc
	m.SetQPNMkey(0xffffff00 | mk.LKey&0xff)
	m.SetLen(length)
	off := base + umrFixed
	q.klms(off, sges)
	off += mlx.WQEUMRKLMSegSize * len(sges)
	if off < bsf {
		clear(q.bytes(off, bsf-off))
	}
	q.inl = true
	q.fmCache = smallFence
	q.curCtrl, q.curSize = base, ds
	if !sig {
		return
	}
	b := (*mlx.BSF)(q.at(bsf))
	*b = g.bsf
	mem, wire := t.chk.Mem.Present, t.chk.Wire.Present
	if mem {
		b.Basic().SetMBfsPSV(g.memBFS | mk.MemPSV&0xffffff)
	}
	if wire {
		b.Basic().SetWBfsPSV(g.wireBFS | mk.WirePSV&0xffffff)
	}
	if mem {
		flags := q.wrFlags
		if wire {
			flags &^= uint32(mlx.IBV_SEND_SIGNALED)
		}
		q.setPSV(mk.MemPSV, g.memTS, flags)
	}
	if wire {
		q.setPSV(mk.WirePSV, g.wireTS, q.wrFlags)
	}
}

// headWQE books the WQE of ds 16-byte units at the producer index, at
// offset off (it must not wrap), writes its ctrl segment's first 12 bytes
// (opcode and index, QPN and size, fm_ce_se) in two stores and moves the
// producer index past it: initWQE and finalize in one.
func (q *SQ) headWQE(off int, opcode mlx.Opcode, ds int, fcs uint8) {
	q.book(q.curPost&q.mask, wrDataUMR, uint8(opcode))
	c := (*[12]byte)(q.at(off))
	binary.BigEndian.PutUint64(c[0:8], uint64(uint32(uint16(q.curPost))<<8|uint32(opcode))<<32|uint64(q.qpn<<8|uint32(ds)))
	binary.BigEndian.PutUint32(c[8:12], uint32(fcs))
	q.curPost += uint32(ds+3) / 4
}

// setPSV writes a SET_PSV work request, the initial transient signature
// of a signature domain: its ctrl segment but the immediate (libmlx5
// leaves it), the PSV index and the signature, in whole words. It is one
// WQEBB: it never wraps.
func (q *SQ) setPSV(index uint32, ts uint64, flags uint32) {
	off := int(q.curPost&q.mask) * wqebb
	q.headWQE(off, mlx.MLX5_OPCODE_SET_PSV, 2, q.fenceCEFlags(flags))
	p := (*[16]byte)(q.at(off + mlx.WQECtrlSegSize))
	binary.BigEndian.PutUint64(p[0:8], uint64(index)<<32)
	binary.BigEndian.PutUint64(p[8:16], ts)
	q.fmCache = smallFence
	q.curCtrl, q.curSize = off, 2
}

// configureChecked is ConfigureMkey's general case: the checks of the
// calls one by one, and only then is the UMR written, as those calls
// would have written it.
func (q *SQ) configureChecked(mk *wrcheck.Mkey, t *MkeyTemplate, sges []mlx.SGE, l wrcheck.Layout) error {
	fn := mlx.FnWRMkeyConfigure
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
