package wrcheck

import mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"

// sigSeen is the last signature attributes MkeySigBlock validated, by
// value. A storage path sets the same attributes on every configuration
// (the four calls of mlx5dv_wr_set_mkey_sig_block(3)'s example): the rules
// of the attributes are functions of these values alone, so equal values
// need not be validated again, and the writer can keep the BSF and the
// transient signatures it built from them (UMR.SigGen names them).
type sigSeen struct {
	gen         uint64 // 0: nothing validated yet; then counts the takes (never wraps)
	tag         uint64 // this generation's attrTags tag
	flags       mlx.SigBlockAttrFlags
	check, copy uint8
	mem, wire   Domain
}

// same reports whether a holds the values last validated. It reads
// every value a rule of the attributes reads (comp_mask included: it
// must be 0, as it was), and through the domains' union pointers the
// member of their type; the snapshot has at least one domain (the
// validated attributes had one), so a with neither never matches.
func (s *sigSeen) same(a *mlx.SigBlockAttr) bool {
	return a != nil && s.gen != 0 && a.CompMask == 0 && a.Flags == s.flags && a.CheckMask == s.check &&
		a.CopyMask == s.copy && s.mem.same(a.Mem) && s.wire.same(a.Wire)
}

// take keeps a's values, which have just been validated, as a new
// generation.
func (s *sigSeen) take(a *mlx.SigBlockAttr) {
	s.gen++
	s.tag = attrTags.Add(1)
	s.flags, s.check, s.copy = a.Flags, a.CheckMask, a.CopyMask
	s.mem.set(a.Mem)
	s.wire.set(a.Wire)
}

// same reports whether src (nil: absent) is the domain d holds: its
// type, block size and comp_mask, and the member of its type (the blank
// padding of the C structs is not compared).
func (d *Domain) same(src *mlx.SigBlockDomain) bool {
	if src == nil || !d.Present {
		return src == nil && !d.Present
	}
	if src.SigType != d.Domain.SigType || src.BlockSize != d.Domain.BlockSize || src.CompMask != d.Domain.CompMask || src.Sig == nil {
		return false
	}
	switch src.SigType {
	case mlx.MLX5DV_SIG_TYPE_T10DIF:
		return *src.SigDif() == d.T10dif
	case mlx.MLX5DV_SIG_TYPE_CRC:
		return *src.SigCRC() == d.Crc
	}
	return false
}

// SigValues copies the signature attributes of the current generation
// into dst's signature fields (its domains, flags and masks) and returns
// the generation (0: none). A writer builds the image of a generation
// from these values, which the chain validated and holds, not from the
// mkey's exported copy of them.
func (c *Chain) SigValues(dst *Mkey) uint64 {
	c.sig.copyTo(dst)
	return c.sig.gen
}

// copyTo gives m the snapshot's signature attributes (its domains, flags
// and masks), and their tag.
func (s *sigSeen) copyTo(m *Mkey) {
	m.setAttrs(&s.mem, &s.wire, s.flags, s.check, s.copy, s.tag)
}
