package wrcheck

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
)

// MkeyTemplate is an mkey configuration validated once and applied many
// times: access flags and, for a signature mkey, the signature block
// attributes. A storage path that reconfigures an mkey for every I/O with
// the same attributes and a new list of buffers checks them here once.
type MkeyTemplate struct {
	Access              uint32
	Sig                 bool // the template sets a signature
	Mem, Wire           Domain
	SigFlags            mlx.SigBlockAttrFlags
	CheckMask, CopyMask uint8
	psvs                int  // SET_PSV work requests that follow the UMR
	copyOK              bool // COPY_MASK, if set, has the same block structure in both domains

	// The attributes again as the C structs, pointing into the template,
	// for the calls one by one.
	attr      mlx.SigBlockAttr
	mem, wire mlx.SigBlockDomain
	dif       [2]mlx.SigT10DIF
	crc       [2]mlx.SigCRC
}

// SigAttr returns the template's signature attributes (nil if it has
// none), for mlx5dv_wr_set_mkey_sig_block.
func (t *MkeyTemplate) SigAttr() *mlx.SigBlockAttr {
	if !t.Sig {
		return nil
	}
	return &t.attr
}

// keep copies a domain into the template's C structs.
func (t *MkeyTemplate) keep(i int, d *Domain, dst *mlx.SigBlockDomain) *mlx.SigBlockDomain {
	if !d.Present {
		return nil
	}
	*dst = d.Domain
	if d.Domain.SigType == mlx.MLX5DV_SIG_TYPE_CRC {
		t.crc[i] = d.Crc
		dst.SetSigCRC(&t.crc[i])
	} else {
		t.dif[i] = d.T10dif
		dst.SetSigDif(&t.dif[i])
	}
	return dst
}

// NewMkeyTemplate validates access flags and signature attributes (nil:
// none) as mlx5dv_wr_set_mkey_access_flags and
// mlx5dv_wr_set_mkey_sig_block do, and keeps a copy.
func NewMkeyTemplate(access mlx.AccessFlags, sig *mlx.SigBlockAttr) (*MkeyTemplate, error) {
	if err := mlx.ValidateArgsWRSetMkeyAccessFlags(access); err != nil {
		return nil, err
	}
	t := &MkeyTemplate{Access: uint32(access)}
	if sig == nil {
		return t, nil
	}
	if err := sig.Validate(); err != nil {
		return nil, err
	}
	t.Sig = true
	t.Mem.set(sig.Mem)
	t.Wire.set(sig.Wire)
	t.SigFlags, t.CheckMask, t.CopyMask = sig.Flags, sig.CheckMask, sig.CopyMask
	if t.Mem.Present {
		t.psvs++
	}
	if t.Wire.Present {
		t.psvs++
	}
	t.attr = mlx.SigBlockAttr{Mem: t.keep(0, &t.Mem, &t.mem), Wire: t.keep(1, &t.Wire, &t.wire),
		Flags: t.SigFlags, CheckMask: t.CheckMask, CopyMask: t.CopyMask}
	probe := Mkey{Mem: t.Mem, Wire: t.Wire}
	t.copyOK = t.SigFlags&mlx.MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK == 0 || probe.SameStructure()
	return t, nil
}

// ConfigureMkey records mlx5dv_wr_mkey_configure of m with the
// template's setters (access flags, a list layout of entries covering
// length bytes, and the signature if the template has one), finished, as
// the calls one by one would. It handles the common case only: a batch
// without error, an mkey in a known state whose signature (if any) has no
// pending error-count update, no crypto. It returns what the UMR carries,
// or records nothing and returns nil; then the caller makes the calls one
// by one.
func (c *Chain) ConfigureMkey(fn mlx.Func, wrFlags uint32, m *Mkey, t *MkeyTemplate, entries int, length uint64) *UMR {
	if m == nil || t == nil {
		return nil // the calls one by one name the rule
	}
	w := &c.wr
	room := c.qp.MaxInlineData + 4
	xlat := 16 * entries
	if !(c.ready && (!w.open || w.whole()) && c.offered[fn] &&
		c.follows[fn][mlx.FnWRSetMkeyAccessFlags] && c.follows[fn][mlx.FnWRSetMkeyLayoutList] &&
		(!t.Sig || c.follows[fn][mlx.FnWRSetMkeySigBlock]) &&
		wrFlags&c.wrFlags[fn] == c.wrFlags[fn] &&
		(m.Lkey&0xff == 0 || c.qp.MkeyTagSupported) && !m.Unknown && !m.HasCrypto() && m.HasSig() == t.Sig &&
		!(m.HasSig() && m.ErrCountUpdated) && entries > 0 && entries <= room/16 && entries <= m.NumDesc) {
		return nil
	}
	if t.Sig && ((xlat+63)&^63+64 > room || length > 0xffffffff || !t.copyOK) {
		return nil
	}
	c.touch(m)
	m.Length = length
	got := mlx5rules.GroupAccess | mlx5rules.GroupLayout
	if t.Sig {
		// Whatever the state before, setting the signature leaves it
		// updated by this work request.
		m.Sig = SigUpdated
		m.Mem, m.Wire = t.Mem, t.Wire
		m.SigFlags, m.CheckMask, m.CopyMask = t.SigFlags, t.CheckMask, t.CopyMask
		got |= mlx5rules.GroupSignature
	}
	c.wrs++
	n := int32(2)
	if t.Sig {
		n = 3
	}
	w.set(fn, c.needs[fn], got, m, true, true, false, n)
	w.xlat = int32(xlat)
	u := c.umr.set(m, (xlat+63)&^63, 1+t.psvs)
	u.SigBSF, u.PSVs = t.Sig, t.Sig
	return u
}
