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
	psvs                int    // SET_PSV work requests that follow the UMR
	tag                 uint64 // its attributes' attrTags tag
	copyOK              bool   // COPY_MASK, if set, has the same block structure in both domains

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
	t.Sig, t.tag = true, attrTags.Add(1)
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

// templateEntries computes Chain.tmplEntries: the calls a template
// stands for must be offered and follow each other, and the translation
// (and the BSF) must fit max_inline_data + 4.
func (c *Chain) templateEntries() [2]int {
	var n [2]int
	fn := mlx.FnWRMkeyConfigure
	if !c.offered[fn] || !c.follows[fn][mlx.FnWRSetMkeyAccessFlags] || !c.follows[fn][mlx.FnWRSetMkeyLayoutList] {
		return n
	}
	room := c.qp.MaxInlineData + 4
	n[0] = max(room/16, 0)
	if c.follows[fn][mlx.FnWRSetMkeySigBlock] && room >= 64 {
		n[1] = ((room - 64) &^ 63) / 16 // align64(16 * n) + 64 <= room
	}
	return n
}

// ConfigureMkey records mlx5dv_wr_mkey_configure of m with the
// template's setters (access flags, the list layout l, and the signature
// if the template has one), finished, as the calls one by one would. It
// handles the common case only (ConfigureList); it returns what the UMR
// carries, or records nothing and returns nil; then the caller makes the
// calls one by one. fn is mlx5dv_wr_mkey_configure.
func (c *Chain) ConfigureMkey(fn mlx.Func, wrFlags uint32, m *Mkey, t *MkeyTemplate, l Layout) *UMR {
	if !c.ConfigureList(fn, wrFlags, m, t, l.Entries, l.Length, l.Long == 0, false) {
		return nil
	}
	return c.TemplateUMR(t)
}

// ConfigureList is ConfigureMkey for a list of entries entries covering
// length bytes (ListSum), short when none is over MaxKLMLength; it reports
// whether it recorded the configuration, and TemplateUMR says what its UMR
// carries (the template path's writer needs that only when the ring
// wraps or has no room: the answer is not built on every call). It handles
// the common case only: a batch without error, an mkey in a known state
// whose signature (if any) has no pending error-count update, no crypto,
// every entry short.
//
// With post, the configuration is a batch of its own (a writer's Post
// form): no batch may be open, and it records nothing (but the signature
// errors the poller counted, as it takes them in any case); the writer
// calls TemplatePosted once it commits to the batch.
func (c *Chain) ConfigureList(fn mlx.Func, wrFlags uint32, m *Mkey, t *MkeyTemplate, entries int, length uint64, short, post bool) bool {
	if m == nil || t == nil {
		return false // the calls one by one name the rule
	}
	m.takeSigErrs()
	w := &c.wr
	batch := w.busy() == 0 // a batch without error, its open work request whole
	if post {
		batch = !c.open
	}
	sig := 0
	wantFlags := mlx.MkeyInitAttrFlags(0)
	if t.Sig {
		sig, wantFlags = 1, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	}
	const kinds = mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
	need := c.wrFlags[mlx.FnWRMkeyConfigure]
	// One test per rule of the calls one by one: the batch, the open work
	// request, wr_flags, the mkey's tag, state and kind (no crypto, a
	// signature as the template's), the entries (max_inline_data and the
	// mkey's max_entries; tmplEntries holds the QP's tables), and for a
	// signature the length and COPY_MASK's block structure; an entry
	// over MaxKLMLength is left to the calls one by one to name.
	if !(batch && wrFlags&need == need &&
		(m.LKey&0xff == 0 || c.qp.MkeyTagSupported) && !m.Unknown && m.Flags&kinds == wantFlags &&
		!(t.Sig && m.ErrCountUpdated) && entries > 0 && entries <= c.tmplEntries[sig] && entries <= m.NumDesc && short) ||
		t.Sig && (length > 0xffffffff || !t.copyOK) {
		return false
	}
	if post {
		return true
	}
	xlat := 16 * entries
	if !c.touchFirst(m) {
		c.touch(m)
	}
	// What TemplatePosted records, written out: the call costs 4% of a
	// template configuration (measured).
	m.Length = length
	got := mlx5rules.GroupAccess | mlx5rules.GroupLayout
	n := int32(2)
	if t.Sig {
		m.Sig = SigUpdated
		if m.attrTag != t.tag {
			c.saveAttrs(m)
			t.copyAttrs(m)
		}
		got |= mlx5rules.GroupSignature
		n = 3
	}
	c.wrs++
	f := &c.fast[mlx.FnWRMkeyConfigure]
	w.set(f.meta|metaCounting|metaFinalized|uint64(got)<<16, uint64(pending(f.need, got, true, true))|tmplMark, m, n)
	w.xlat = int32(xlat)
	return true
}

// TemplateRun is TemplateNext's first test, inlinable: the last
// transition of the chain was a template configuration's (ConfigureList or
// TemplateNext), so that a writer calls TemplateNext only then.
func (c *Chain) TemplateRun() bool { return c.wr.st == tmplMark }

// TemplateNext is ConfigureList for a configuration that follows one of
// the same mkey, with a template with or without a signature as that
// one's, with nothing between them (the state word ConfigureList left,
// with tmplMark: any other transition of the chain stores another, new
// wr_flags clear it): what that one checked of the batch, the work
// request, wr_flags, the QP and the mkey's kind holds still, its record
// of the work request is this one's (it depends on the template only
// through its signature: numSetters), and the mkey is in this batch's
// rollback entries; so it checks what may have changed since (the mkey's
// state, its tag, the signature errors the poller counted, the
// attributes it holds, which another template or QP's configuration may
// have changed) and the layout, and records what differs: the count, the
// mkey's length and signature state, the translation's size. It reports
// false, recording nothing, where ConfigureList must decide.
func (c *Chain) TemplateNext(m *Mkey, t *MkeyTemplate, entries int, length uint64, short bool) bool {
	w := &c.wr
	sig := 0
	if t.Sig {
		sig = 1
	}
	if w.st != tmplMark || w.mkey != m || w.numSetters != int32(2+sig) || m == nil {
		return false
	}
	m.takeSigErrs() // as ConfigureList does, whatever it decides
	// The mkey holding t's attributes (its tag, which no other template
	// or snapshot has) says ConfigureList took t before, COPY_MASK
	// included.
	if t.Sig && (m.ErrCountUpdated || length > 0xffffffff || m.attrTag != t.tag) {
		return false
	}
	if m.Unknown || m.LKey&0xff != 0 && !c.qp.MkeyTagSupported || entries <= 0 || entries > c.tmplEntries[sig] || entries > m.NumDesc || !short {
		return false
	}
	c.wrs++
	m.Length = length
	if t.Sig {
		m.Sig = SigUpdated
	}
	w.xlat = int32(16 * entries)
	return true
}

// TemplatePosted records on m a configuration of template t that covers
// length bytes: its length and, for a signature, the template's
// attributes, updated by this work request whatever the state before. It
// reports whether the template sets a signature. After ConfigureList
// with post, it is what Start, ConfigureList and a successful Complete
// leave, with nothing to roll back (the chain itself is as it was:
// closed, nothing open, no mkey touched).
func TemplatePosted(m *Mkey, t *MkeyTemplate, length uint64) bool {
	m.Length = length
	if t.Sig {
		m.Sig = SigUpdated
		t.copyTo(m)
	}
	return t.Sig
}

// copyTo gives m the template's signature attributes, unless it holds
// them already (attrTag): the test inlines, the copy does not.
func (t *MkeyTemplate) copyTo(m *Mkey) {
	if m.attrTag != t.tag {
		t.copyAttrs(m)
	}
}

func (t *MkeyTemplate) copyAttrs(m *Mkey) {
	m.setAttrs(&t.Mem, &t.Wire, t.SigFlags, t.CheckMask, t.CopyMask, t.tag)
}

// TemplateUMR is what the UMR of the configuration ConfigureList just
// recorded with template t carries (the open work request holds its mkey
// and translation): a signature BSF and the SET_PSVs exactly when the
// template has a signature.
func (c *Chain) TemplateUMR(t *MkeyTemplate) *UMR {
	w := &c.wr
	u := c.umr.set(w.mkey, int(w.xlat+63)&^63, 1+t.psvs)
	u.SigBSF, u.PSVs = t.Sig, t.Sig
	return u
}

// copyFrom is what set does with the domain s was set from: Present, and
// for a present domain its type, block size, comp_mask and the member of
// its type; the rest keeps whatever it had, as set leaves it (only the
// member of the type of a present domain is read later). Field by field:
// a copy of the struct, which holds the union pointer (nil in a Domain),
// is a typed memory move with write barriers. (Copying the bytes around
// the pointer through unsafe instead calls memmove: the compiler cannot
// prove the two sides disjoint.)
func (d *Domain) copyFrom(s *Domain) {
	d.Present = s.Present
	if !s.Present {
		return
	}
	d.Domain.SigType, d.Domain.BlockSize, d.Domain.CompMask = s.Domain.SigType, s.Domain.BlockSize, s.Domain.CompMask
	if d.Domain.Sig != nil {
		d.Domain.Sig = nil
	}
	switch s.Domain.SigType {
	case mlx.MLX5DV_SIG_TYPE_T10DIF:
		d.T10dif = s.T10dif
	case mlx.MLX5DV_SIG_TYPE_CRC:
		d.Crc = s.Crc
	}
}
