package mkey

import (
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// mkey is one indirect mkey's state.
type mkey struct {
	index   uint32
	tag     uint8
	pdn     uint32
	flags   mlx.MkeyInitAttrFlags
	numDesc int  // translation entries a layout may take (max_entries rounded up to 4) [ledger: mkey-entries]
	free    bool // never configured, or invalidated

	access        mlx.WQEMkeyContextAccessFlags
	start, length uint64
	layout        layout

	memPSV, wirePSV uint32 // made with the mkey (Create), when ownPSVs
	ownPSVs         bool
	sig             *sigConf    // nil: no signature
	crypto          *cryptoConf // nil: no crypto
	sigErrCnt       uint8       // the parity bit a SIG_ERR update last wrote

	err    SigErr
	hasErr bool
}

func (m *mkey) key() uint32 { return m.index<<8 | uint32(m.tag) }

// The UMR control segment's mkey mask bits this device applies. [ledger: umr-mkey-mask]
const (
	maskLen    = uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN)
	maskStart  = uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_START_ADDR)
	maskSigErr = uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_SIG_ERR)
	maskBSF    = uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_BSF_ENABLE)
	maskMkey   = uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY)
	maskQPN    = uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_QPN)
	maskFree   = uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE)
	maskKnown  = maskLen | maskStart | maskSigErr | maskBSF | maskMkey | maskQPN | maskFree | accessMasks
)

// accessBits pairs each access mask bit with its mkey context flag.
var accessBits = [...]struct {
	mask uint64
	flag mlx.WQEMkeyContextAccessFlags
}{
	{uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE), mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE},
	{uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ), mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ},
	{uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE), mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE},
	{uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC), mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC},
}

const accessMasks = uint64(mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE | mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |
	mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE | mlx.MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC)

// The fixed part of a UMR: ctrl, UMR ctrl and mkey context segments.
const (
	umrCtrlAt = mlx.WQECtrlSegSize
	mkeyCtxAt = umrCtrlAt + mlx.WQEUMRCtrlSegSize
	umrFixed  = mkeyCtxAt + mlx.WQEMkeyContextSegSize
	freeBit   = 0x40 // the mkey context's free byte: the mkey is invalid
)

// WQEError is a malformed UMR or SET_PSV work request.
type WQEError struct {
	Field string
	Why   string
}

func (e *WQEError) Error() string { return "mkey: WQE " + e.Field + ": " + e.Why }

func wqeErr(field, format string, a ...any) error {
	return &WQEError{Field: field, Why: fmt.Sprintf(format, a...)}
}

// wqeBody checks a WQE's control segment: the opcode, ds non-zero and
// within the bytes handed over, at least min bytes. It returns the WQE's
// ds*16 bytes.
func wqeBody(wqe []byte, op mlx.Opcode, min int) ([]byte, *mlx.WQECtrlSeg, error) {
	if len(wqe) < mlx.WQECtrlSegSize {
		return nil, nil, wqeErr("ctrl", "%d bytes, a control segment has 16", len(wqe))
	}
	c := (*mlx.WQECtrlSeg)(wqe[:mlx.WQECtrlSegSize])
	if c.Opcode() != op {
		return nil, nil, wqeErr("ctrl.opcode", "%#x, want %v", uint8(c.Opcode()), op)
	}
	size := int(c.DS()) * 16
	switch {
	case size == 0:
		return nil, nil, wqeErr("ctrl.ds", "0")
	case size > len(wqe):
		return nil, nil, wqeErr("ctrl.ds", "%d units, %d bytes handed over", c.DS(), len(wqe))
	case size < min:
		return nil, nil, wqeErr("ctrl.ds", "%d units, the WQE needs at least %d bytes", c.DS(), min)
	}
	return wqe[:size], c, nil
}

// ExecUMR executes a UMR work request: wqe is its bytes from the control
// segment on (ds*16 of them, or more), unwrapped from the ring. The mkey
// is the control segment's immediate (its index; the tag may change). A
// malformed WQE returns a *WQEError and changes nothing.
func (t *Table) ExecUMR(wqe []byte) error {
	w, ctrl, err := wqeBody(wqe, mlx.MLX5_OPCODE_UMR, umrFixed)
	if err != nil {
		return err
	}
	m := t.mkeys[ctrl.Imm()>>8]
	if m == nil {
		return &Fault{Kind: FaultKey, Key: ctrl.Imm(), Why: "the UMR names no mkey of the device"}
	}
	u := (*mlx.WQEUMRCtrlSeg)(w[umrCtrlAt:mkeyCtxAt])
	c := (*mlx.WQEMkeyContextSeg)(w[mkeyCtxAt:umrFixed])
	mask := u.MkeyMask()
	if mask&^maskKnown != 0 {
		return wqeErr("umr_ctrl.mkey_mask", "unknown bits %#x", mask&^maskKnown)
	}
	xl, bl := int(u.KLMOctowords())*16, int(u.BSFOctowords())*16
	if err := umrFlags(u, m, xl); err != nil {
		return err
	}
	if (xl > 0 || bl > 0) && u.Flags()&mlx.MLX5_WQE_UMR_CTRL_FLAG_INLINE == 0 {
		return wqeErr("umr_ctrl.flags", "translation or BSF without MLX5_WQE_UMR_CTRL_FLAG_INLINE (only inline UMRs are simulated)")
	}
	if umrFixed+xl > len(w) {
		return wqeErr("umr_ctrl.klm_octowords", "%d translation octowords pass the WQE's %d bytes", xl/16, len(w))
	}
	if umrFixed+xl+bl > len(w) {
		return wqeErr("umr_ctrl.bsf_octowords", "%d translation and %d BSF octowords pass the WQE's %d bytes", xl/16, bl/16, len(w))
	}
	n := *m // applied only if the whole WQE is good
	if mask&maskFree != 0 {
		n.free = c.Free()&freeBit != 0
	}
	if mask&maskMkey != 0 {
		n.tag = c.Mkey()
	}
	for _, a := range accessBits {
		if mask&a.mask != 0 {
			n.access = n.access&^a.flag | c.AccessFlags()&a.flag
		}
	}
	if mask&maskLen != 0 {
		n.length = c.Len()
	}
	if mask&maskStart != 0 {
		n.start = c.StartAddr()
	}
	if mask&maskSigErr != 0 {
		n.sigErrCnt = c.SigErrCnt()
	}
	if xl > 0 {
		if n.layout, err = parseLayout(w[umrFixed:umrFixed+xl], m.numDesc); err != nil {
			return err
		}
	}
	if err := t.applyBSF(&n, c, mask, w[umrFixed+xl:umrFixed+xl+bl]); err != nil {
		return err
	}
	// The context's length bounds accesses even where it is not the
	// layout's (libmlx5 sums list lengths in an int: past 2 GiB the length
	// it writes wraps); an access past the layout faults. [ledger: mkey-context-length]
	*m = n
	return nil
}

// The UMR control flags.
const (
	flagInline     = mlx.MLX5_WQE_UMR_CTRL_FLAG_INLINE
	flagCheckFree  = mlx.MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE
	flagXlatOffset = mlx.MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET
	flagCheckQPN   = mlx.MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN
)

// umrFlags checks the UMR control flags: no unknown bit, no partial
// translation update (a translation offset), and CHECK_FREE only on a
// free mkey. [ledger: umr-not-modelled]
func umrFlags(u *mlx.WQEUMRCtrlSeg, m *mkey, xl int) error {
	f := u.Flags()
	if f&^(flagInline|flagCheckFree|flagXlatOffset|flagCheckQPN) != 0 {
		return wqeErr("umr_ctrl.flags", "unknown bits %#x", uint8(f&^(flagInline|flagCheckFree|flagXlatOffset|flagCheckQPN)))
	}
	if f&flagXlatOffset != 0 && u.TranslationOffset() != 0 && xl > 0 {
		return wqeErr("umr_ctrl.translation_offset", "%d: partial translation updates are not simulated", u.TranslationOffset())
	}
	if f&flagCheckFree != 0 && !m.free {
		return &Fault{Kind: FaultState, Key: m.key(), Why: "MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE on a configured mkey"}
	}
	return nil
}

// applyBSF applies the BSF enable bit and the BSFs of a UMR.
func (t *Table) applyBSF(n *mkey, c *mlx.WQEMkeyContextSeg, mask uint64, bsf []byte) error {
	if mask&maskBSF == 0 {
		if len(bsf) > 0 {
			return wqeErr("umr_ctrl.bsf_octowords", "%d BSF octowords without the BSF_ENABLE mask bit", len(bsf)/16)
		}
		return nil
	}
	if c.BSFEn() == 0 {
		if len(bsf) > 0 {
			return wqeErr("mkey_context.bsf_en", "0 with %d BSF octowords", len(bsf)/16)
		}
		n.sig, n.crypto = nil, nil // MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR [ledger: bsf-reset]
		return nil
	}
	sig, cr, err := t.parseBSFs(bsf)
	if err != nil {
		return err
	}
	if sig != nil && n.flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE == 0 {
		return wqeErr("bsf", "a signature BSF on an mkey created without BLOCK_SIGNATURE")
	}
	if cr != nil && n.flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO == 0 {
		return wqeErr("crypto_bsf", "a crypto BSF on an mkey created without CRYPTO")
	}
	if sig != nil {
		if err := t.checkPSVs(n, sig); err != nil {
			return err
		}
	}
	n.sig, n.crypto = sig, cr
	return nil
}

// ExecSetPSV executes a SET_PSV work request: the PSV's transient
// signature becomes the initial guard seed, application and reference
// tags (T10-DIF) or CRC seed of the domain using it. [ledger: psv-seeds]
func (t *Table) ExecSetPSV(wqe []byte) error {
	w, _, err := wqeBody(wqe, mlx.MLX5_OPCODE_SET_PSV, mlx.WQECtrlSegSize+mlx.WQESetPSVSegSize)
	if err != nil {
		return err
	}
	s := (*mlx.WQESetPSVSeg)(w[mlx.WQECtrlSegSize : mlx.WQECtrlSegSize+mlx.WQESetPSVSegSize])
	p := t.psvs[s.PSVIndex()]
	if p == nil {
		return wqeErr("set_psv.psv_index", "%#x is no PSV of the device", s.PSVIndex())
	}
	p.value, p.set = s.TransientSignature(), true
	return nil
}

// checkPSVs checks the PSVs a signature BSF names: those made with the
// mkey when it has its own (Create, mlx5dv_create_mkey); otherwise PSVs
// of the device in the mkey's PD (CREATE_PSV) [ledger: psv-bsf-check].
func (t *Table) checkPSVs(n *mkey, sig *sigConf) error {
	if n.ownPSVs {
		if sig.mem.psv != n.memPSV && sig.mem.psv != 0 || sig.wire.psv != n.wirePSV && sig.wire.psv != 0 {
			return wqeErr("bsf.psv", "PSVs %#x/%#x, the mkey's are %#x/%#x", sig.mem.psv, sig.wire.psv, n.memPSV, n.wirePSV)
		}
		return nil
	}
	for _, ix := range []uint32{sig.mem.psv, sig.wire.psv} {
		if ix == 0 {
			continue
		}
		if pd, ok := t.PSVPD(ix); !ok || pd != n.pdn {
			return wqeErr("bsf.psv", "PSV %#x is no PSV of the mkey's PD %d", ix, n.pdn)
		}
	}
	return nil
}
