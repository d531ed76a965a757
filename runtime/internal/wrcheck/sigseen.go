package wrcheck

import (
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

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

	// The attributes' memory as validated, for same: the words of the
	// attribute struct after its two pointers (flags, masks and their
	// padding; comp_mask), and each domain's (rawDomain).
	attrWords       [2]uint64
	memRaw, wireRaw rawDomain
}

// rawDomain is a domain's memory as validated: its words but the union
// pointer (sig_type and its padding, block_size and its padding,
// comp_mask) and the 16 bytes the pointer pointed at (both members,
// mlx5dv_sig_t10dif and mlx5dv_sig_crc, are 16 bytes).
type rawDomain struct {
	present bool
	words   [3]uint64
	member  [16]byte
}

// same reports whether a holds the values last validated: the same
// memory, compared word by word, the blank padding included (padding
// that differs only sends a call through the validators again). It
// covers every value a rule of the attributes reads (comp_mask included:
// it must be 0, as it was) and through the domains' union pointers the
// member of their type; the snapshot has at least one domain (the
// validated attributes had one), so a with neither never matches.
func (s *sigSeen) same(a *mlx.SigBlockAttr) bool {
	if a == nil || s.gen == 0 {
		return false
	}
	return flagsWord(a) == s.attrWords[0] && a.CompMask == s.attrWords[1] && s.memRaw.same(a.Mem) && s.wireRaw.same(a.Wire)
}

// same reports whether d (nil: absent) is the domain r holds. The
// member is read only once d's sig_type is the validated one, whose
// member is 16 bytes: a domain of another type is not read through.
func (r *rawDomain) same(d *mlx.SigBlockDomain) bool {
	if d == nil || !r.present {
		return d == nil && !r.present
	}
	return typeWord(d) == r.words[0] && sizeWord(d) == r.words[1] && d.CompMask == r.words[2] && d.Sig != nil &&
		*(*[16]byte)(d.Sig) == r.member
}

// set keeps d's memory (nil: absent); d has been validated.
func (r *rawDomain) set(d *mlx.SigBlockDomain) {
	r.present = d != nil && d.Sig != nil // validated: a domain has its member
	if !r.present {
		return
	}
	r.words = [3]uint64{typeWord(d), sizeWord(d), d.CompMask}
	r.member = *(*[16]byte)(d.Sig)
}

// flagsWord is the 8 bytes of a from its flags: flags, the two masks and
// their padding. typeWord and sizeWord are a domain's from its sig_type
// and from its block_size, their padding included. (The mirrors declare
// that padding as fields: 8 bytes each on every ABI.)
func flagsWord(a *mlx.SigBlockAttr) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(a), unsafe.Offsetof(a.Flags)))
}

func typeWord(d *mlx.SigBlockDomain) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(d), unsafe.Offsetof(d.SigType)))
}

func sizeWord(d *mlx.SigBlockDomain) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(d), unsafe.Offsetof(d.BlockSize)))
}

// take keeps a's values, which have just been validated, as a new
// generation.
func (s *sigSeen) take(a *mlx.SigBlockAttr) {
	s.gen++
	s.tag = attrTags.Add(1)
	s.flags, s.check, s.copy = a.Flags, a.CheckMask, a.CopyMask
	s.mem.set(a.Mem)
	s.wire.set(a.Wire)
	s.attrWords = [2]uint64{flagsWord(a), a.CompMask}
	s.memRaw.set(a.Mem)
	s.wireRaw.set(a.Wire)
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
