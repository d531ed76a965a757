package wrcheck

import (
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
)

// MkeyConfigure opens an mkey configuration (mlx5dv_wr_mkey_configure)
// that announces numSetters setters; with 0 it is finished at once, and
// the UMR says what to write. numSetters is the C uint8_t: no count can
// wrap.
func (c *Chain) MkeyConfigure(fn mlx.Func, wrFlags uint32, m *Mkey, numSetters uint8, attr *mlx.MkeyConfAttr) (*UMR, error) {
	if !c.builderOK(fn, wrFlags) {
		if err := c.begin(fn, wrFlags); err != nil {
			return nil, err
		}
	}
	if !mlx.ValidateArgsWRMkeyConfigureInto(&c.scratch, unsafe.Pointer(m), unsafe.Pointer(attr)) || !attr.ValidateInto(&c.scratch) {
		return nil, c.latchRule(fn)
	}
	m.takeSigErrs()
	return c.configure(fn, m, numSetters, attr.ConfFlags&mlx.MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR != 0)
}

// builderOK is begin's common case on the fast paths' words, as
// TryBuilder's, inlined: a batch without error whose open work request
// (if any) is whole (busy 0; finish leaves it so), the builder offered
// with these wr_flags. begin runs the checks one by one, and names the
// rule, when it does not hold.
func (c *Chain) builderOK(fn mlx.Func, wrFlags uint32) bool {
	return c.Ready(fn, wrFlags)
}

// MkeyConfigureOK is MkeyConfigure's common case, inlinable into the
// writer: mlx5dv_wr_mkey_configure's builder on the fast paths' word
// (builderOK), both arguments, no conf_flags or comp_mask (the
// attributes' rules then hold), setters to follow, and a tag the QP
// takes. When it holds, OpenMkey records the configuration as
// MkeyConfigure would (a level of calls less on every configuration);
// otherwise MkeyConfigure runs and names the rule.
func (c *Chain) MkeyConfigureOK(wrFlags uint32, m *Mkey, numSetters uint8, attr *mlx.MkeyConfAttr) bool {
	return c.Ready(mlx.FnWRMkeyConfigure, wrFlags) && m != nil && attr != nil && attr.ConfFlags == 0 && attr.CompMask == 0 &&
		numSetters != 0 && (m.LKey&0xff == 0 || c.qp.MkeyTagSupported)
}

// OpenMkey is MkeyConfigure after MkeyConfigureOK held: m's
// configuration opened, numSetters setters to follow.
// (It inlines: the signature errors are taken in openMkey.)
func (c *Chain) OpenMkey(m *Mkey, numSetters uint8) {
	c.openMkey(mlx.FnWRMkeyConfigure, m, numSetters, false, true)
}

// configure opens the configuration of m once begin and the argument
// checks of the entry point passed.
func (c *Chain) configure(fn mlx.Func, m *Mkey, numSetters uint8, reset bool) (*UMR, error) {
	if m.LKey&0xff != 0 && !c.qp.MkeyTagSupported {
		return nil, c.fail(mlx5rules.ChainMkeyTag, fn, what{field: "mkey tag (lkey & 0xff)", test: mlx.TestZero, value: uint64(m.LKey & 0xff)})
	}
	c.openMkey(fn, m, numSetters, reset, false)
	if numSetters == 0 {
		return c.finish(fn)
	}
	return nil, nil
}

// openMkey records the configuration of m, which passed its checks: the
// signature errors the poller counted (with take: mkey_configure's),
// the mkey's state for a rollback, its signature and crypto states as a
// new configuration leaves them, and the open work request.
func (c *Chain) openMkey(fn mlx.Func, m *Mkey, numSetters uint8, reset, take bool) {
	if take {
		m.takeSigErrs()
	}
	if !c.touchFirst(m) {
		c.touch(m)
	}
	if m.HasSig() {
		switch {
		case reset:
			c.resetSig(m)
		case m.Sig == SigUpdated:
			m.Sig = SigSet
		case m.Sig == SigReset:
			m.Sig = SigInit
		}
	}
	if m.HasCrypto() && m.Crypto == CryptoUpdated {
		m.Crypto = CryptoSet
	}
	c.wrs++
	f := &c.fast[fn]
	meta := f.meta | metaCounting // counting its setters, none got yet
	if reset {
		meta |= metaResetSig
	}
	c.wr.set(meta, uint64(f.need)|busyCounting, m, int32(numSetters)) // pending(need, 0, true, false)
}

// resetSig is a configuration's reset of m's signature attributes
// (MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR), outlined: a save and stores
// openMkey's common case would spill around.
func (c *Chain) resetSig(m *Mkey) {
	c.saveAttrs(m)
	m.Sig, m.Mem.Present, m.Wire.Present = SigReset, false, false
	m.attrTag = 0
}

// counted records a successful mkey setter and reports whether it was
// the last one announced: then the caller finishes the configuration.
// Inlined (finish is called by the setters), it saves a call per setter.
func (c *Chain) counted(g mlx5rules.SetterGroup) (last bool) {
	w := &c.wr
	w.addGot(g)
	w.setters++
	return w.setters == w.numSetters
}

// countedFinish is counted, and finish when the setter was the last one.
func (c *Chain) countedFinish(fn mlx.Func, g mlx5rules.SetterGroup) (*UMR, error) {
	if c.counted(g) {
		return c.finish(fn)
	}
	return nil, nil
}

// MR opens and finishes mlx5dv_wr_mr_list or mlx5dv_wr_mr_interleaved:
// an mkey configuration with its access flags and layout l, in one call.
func (c *Chain) MR(fn mlx.Func, wrFlags uint32, m *Mkey, accessFlags uint32, l Layout) (*UMR, error) {
	if !c.builderOK(fn, wrFlags) {
		if err := c.begin(fn, wrFlags); err != nil {
			return nil, err
		}
	}
	var ok bool
	if l.Interleaved {
		ok = mlx.ValidateArgsWRMRInterleavedInto(&c.scratch, unsafe.Pointer(m), mlx.AccessFlags(accessFlags))
	} else {
		ok = mlx.ValidateArgsWRMRListInto(&c.scratch, unsafe.Pointer(m), mlx.AccessFlags(accessFlags))
	}
	if !ok {
		return nil, c.latchRule(fn)
	}
	if _, err := c.configure(fn, m, 2, false); err != nil {
		return nil, err
	}
	if _, err := c.countedFinish(fn, mlx5rules.GroupAccess); err != nil {
		return nil, err
	}
	return c.layout(fn, l, false)
}

// mkeySetter runs the checks of a setter of an mkey configuration. Its
// common case is one test on the QP's tables (follows holds the QP type's
// part of setter's checks), inlined into the setters; the rest
// (mkeySetterSlow) names the rule.
func (c *Chain) mkeySetter(fn mlx.Func) bool {
	w := &c.wr
	// busy is busyCounting alone only while a batch without error has an
	// open configuration still counting its setters and missing no group
	// it needs (pending, set by wr.set; fail and the batch calls replace
	// it), and between calls such a configuration is mkey_configure's
	// with its mkey (the mr_* builders and templates finish theirs at
	// once): its row of follows is a constant offset.
	return w.busy() == busyCounting && c.follows[mlx.FnWRMkeyConfigure][fn] && w.got()&c.group[fn] == 0
}

func (c *Chain) mkeySetterSlow(fn mlx.Func) error {
	if err := c.setter(fn); err != nil {
		return err
	}
	if c.wr.mkey == nil {
		// The open work request was not opened by MkeyConfigure.
		return c.fail(mlx5rules.ChainSetterAfterBuilder, fn, what{field: "builder", test: mlx.TestNone, value: uint64(c.wr.fn()), names: funcNames})
	}
	return nil
}

// MkeyAccess records mlx5dv_wr_set_mkey_access_flags.
func (c *Chain) MkeyAccess(fn mlx.Func, accessFlags uint32) (*UMR, error) {
	if !c.mkeySetter(fn) {
		if err := c.mkeySetterSlow(fn); err != nil {
			return nil, err
		}
	}
	if !mlx.ValidateArgsWRSetMkeyAccessFlagsInto(&c.scratch, mlx.AccessFlags(accessFlags)) {
		return nil, c.latchRule(fn)
	}
	c.accessSeen = uint64(accessFlags)
	if c.counted(mlx5rules.GroupAccess) {
		return c.finish(fn)
	}
	return nil, nil
}

// midSetter is mkeySetter for setter fn of group g (its table entry,
// given as a constant) that does not finish the configuration: the Try
// setters' test, which records the setter without finish. It repeats
// mkeySetter's test rather than calling it: the group's table load
// would put TryMkeyAccess over the inlining budget (measured).
func (c *Chain) midSetter(fn mlx.Func, g mlx5rules.SetterGroup) bool {
	w := &c.wr
	return w.busy() == busyCounting && c.follows[mlx.FnWRMkeyConfigure][fn] && w.meta&(uint64(g)<<16) == 0 && w.setters+1 != w.numSetters
}

// ListLayoutOK is MkeyLayout's common case for a list of entries, every
// entry short (the caller tests ListSum's longest against MaxKLMLength,
// as for ConfigureList), inlinable into the writer: the entries within
// max_inline_data and the mkey's, set on the open configuration by a
// setter that does not finish it (layout's checks). When it reports
// true, the writer records the setter with TookListLayout; otherwise it
// calls MkeyLayout. (Two calls: one would not inline.)
func (c *Chain) ListLayoutOK(entries int) bool {
	return entries <= c.listLimit && c.midSetter(mlx.FnWRSetMkeyLayoutList, mlx5rules.GroupLayout) && entries <= c.wr.mkey.NumDesc
}

// TookListLayout records, after ListLayoutOK, the list layout of entries
// covering length bytes (ListSum's) as MkeyLayout does.
func (c *Chain) TookListLayout(entries int, length uint64) {
	w := &c.wr
	w.xlat, w.mkey.Length = int32(16*entries), length
	w.meta |= uint64(mlx5rules.GroupLayout) << 16 // addGot, cheaper to inline
	w.setters++
}

// noAccess is accessSeen before any access flags were accepted: no
// uint32 is equal to it.
const noAccess = 1 << 32

// TryMkeyAccess is MkeyAccess's common case, inlinable into the writer:
// the access flags last accepted, set on the open configuration by a
// setter that does not finish it. It records the setter as MkeyAccess
// does and reports true; otherwise it does nothing, and the writer calls
// MkeyAccess.
func (c *Chain) TryMkeyAccess(accessFlags uint32) bool {
	w := &c.wr
	if uint64(accessFlags) != c.accessSeen || !c.midSetter(mlx.FnWRSetMkeyAccessFlags, mlx5rules.GroupAccess) {
		return false
	}
	w.meta |= uint64(mlx5rules.GroupAccess) << 16 // addGot, cheaper to inline
	w.setters++
	return true
}

// MkeyLayout records a layout setter: l.Entries KLMs (list) or
// interleaved entries, covering l.Length bytes.
// It inlines into the caller, which then calls layout directly: a level
// of calls less on every configuration.
func (c *Chain) MkeyLayout(fn mlx.Func, l Layout) (*UMR, error) {
	return c.layout(fn, l, true)
}

// layout records a layout of the open configuration: for a setter (the
// checks of a setter first), or for mlx5dv_wr_mr_* (which checked its
// builder).
func (c *Chain) layout(fn mlx.Func, l Layout, setter bool) (*UMR, error) {
	if setter && !c.mkeySetter(fn) {
		if err := c.mkeySetterSlow(fn); err != nil {
			return nil, err
		}
	}
	w := &c.wr
	entries := l.Entries
	limit, need := c.listLimit, entries
	if l.Interleaved {
		// The repeat-block header takes one entry of the WQE and one of
		// the mkey.
		limit--
		need++
	}
	switch {
	case entries > limit:
		return nil, c.fail(mlx5rules.ChainLayoutEntries, fn, above("entries", uint64(entries), uint64(max(limit, 0)), "(max_inline_data + 4) / 16"))
	case need > w.mkey.NumDesc:
		return nil, c.fail(mlx5rules.ChainMkeyEntries, fn, above("mkey entries needed", uint64(need), uint64(w.mkey.NumDesc), "max_entries rounded up to 4"))
	case w.got()&mlx5rules.GroupLayout != 0:
		return nil, c.fail(mlx5rules.ChainLayoutOnce, fn, what{field: "layout setter calls", test: mlx.TestMax, value: 2, limit: 1, limitName: "one per configuration"})
	case l.Long != 0:
		return nil, c.fail(mlx5rules.ChainKLMLength, fn, above(klmField(l.Long-1), uint64(l.LongLength), MaxKLMLength, "2 GiB, the most one KLM takes"))
	}
	w.xlat = int32(16 * entries)
	if l.Interleaved {
		w.xlat += 16
	}
	w.mkey.Length = l.Length
	if c.counted(mlx5rules.GroupLayout) {
		return c.finish(fn)
	}
	return nil, nil
}

// MkeySigBlock records mlx5dv_wr_set_mkey_sig_block and keeps a copy of
// the attributes.
func (c *Chain) MkeySigBlock(fn mlx.Func, attr *mlx.SigBlockAttr) (*UMR, error) {
	if !c.mkeySetter(fn) {
		if err := c.mkeySetterSlow(fn); err != nil {
			return nil, err
		}
	}
	m := c.wr.mkey
	if !m.HasSig() {
		return nil, c.fail(mlx5rules.ChainMkeySignature, fn, what{field: "mkey create_flags", test: mlx.TestNeedBits,
			value: uint64(m.Flags), limit: uint64(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE), names: mkeyFlagNames})
	}
	if !c.sig.same(attr) {
		if !mlx.ValidateArgsWRSetMkeySigBlockInto(&c.scratch, unsafe.Pointer(attr)) || !attr.ValidateInto(&c.scratch) {
			return nil, c.latchRule(fn)
		}
		c.sig.take(attr)
	}
	// The mkey gets the values of this generation: attr's, copied from
	// the snapshot, which holds them side by side (attr's are behind two
	// levels of pointers).
	// Only when the mkey does not hold them already (attrTag).
	s := &c.sig
	c.wr.sigGen = s.gen
	if m.attrTag != s.tag {
		c.saveAttrs(m)
		s.copyTo(m)
	}
	m.Sig = SigUpdated
	if !c.counted(mlx5rules.GroupSignature) {
		return nil, nil
	}
	if u := c.finishSig(m); u != nil {
		return u, nil
	}
	return c.finish(fn)
}

// finishSig is finish's common case for a configuration whose last
// setter set its signature (m.Sig is SigUpdated, its group got): an mkey
// without crypto, no signature-error update, the BSF within the UMR's
// room, no copy mask. Then finish refuses nothing and its answer is this
// one (TestFinishSigAgrees), without its tests of every other mkey
// state (a third of the setter's checks). Otherwise it returns nil and
// does nothing: finish runs.
func (c *Chain) finishSig(m *Mkey) *UMR {
	xlat := int(c.wr.xlat+63) &^ 63
	if !c.sigFinishable(m, xlat) {
		return nil
	}
	return c.sigFinished(m, xlat)
}

// sigFinishable is finishSig's test, for a translation of xlat bytes:
// an mkey without crypto, no signature-error update, the BSF within the
// UMR's room, no copy mask.
func (c *Chain) sigFinishable(m *Mkey, xlat int) bool {
	const kinds = mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
	return m.Flags&kinds == mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE && !m.ErrCountUpdated && bsfOK(m, xlat, 64, c.qp.MaxInlineData+4)
}

// sigFinished is finishSig's answer once sigFinishable held: the UMR
// with its signature BSF and a SET_PSV per domain, and the work request
// finalized.
func (c *Chain) sigFinished(m *Mkey, xlat int) *UMR {
	w := &c.wr
	wrs := 1
	if m.Mem.Present {
		wrs++
	}
	if m.Wire.Present {
		wrs++
	}
	u := &c.sigUMR // its kind is set
	u.Mkey, u.Xlat, u.WRs, u.SigGen = m, xlat, wrs, w.sigGen
	w.meta |= metaFinalized
	w.st = uint64(uint32(w.need() &^ w.got())) // pending(need, got, counting, true)
	return u
}

// TrySigBlock is MkeySigBlock's common case in one call, for the writer:
// the last setter of an mkey configuration that gave it no signature
// yet, with the attributes the chain validated last (sigSeen.same), which
// the mkey already holds (its attrTag), and finishSig's case. Then it
// records the setter and returns finishSig's answer; otherwise it returns
// nil and changes nothing: the writer calls MkeySigBlock.
func (c *Chain) TrySigBlock(attr *mlx.SigBlockAttr) *UMR {
	w := &c.wr
	s := &c.sig
	m := w.mkey
	if !c.mkeySetter(mlx.FnWRSetMkeySigBlock) || w.setters+1 != w.numSetters ||
		m.attrTag != s.tag || attr == nil || s.gen == 0 { // HasSig: sigFinishable's kind
		return nil
	}
	// sigSeen.same, written out: its domains' tests inline here.
	if flagsWord(attr) != s.attrWords[0] || attr.CompMask != s.attrWords[1] || !s.memRaw.same(attr.Mem) || !s.wireRaw.same(attr.Wire) {
		return nil
	}
	xlat := int(w.xlat+63) &^ 63
	if !c.sigFinishable(m, xlat) {
		return nil
	}
	w.sigGen = s.gen
	m.Sig = SigUpdated
	c.counted(mlx5rules.GroupSignature) // the last, as tested above
	return c.sigFinished(m, xlat)
}

// MkeyCrypto records mlx5dv_wr_set_mkey_crypto and keeps a copy of the
// attributes.
func (c *Chain) MkeyCrypto(fn mlx.Func, attr *mlx.CryptoAttr) (*UMR, error) {
	if !c.mkeySetter(fn) {
		if err := c.mkeySetterSlow(fn); err != nil {
			return nil, err
		}
	}
	m := c.wr.mkey
	if !m.HasCrypto() {
		return nil, c.fail(mlx5rules.ChainMkeyCrypto, fn, what{field: "mkey create_flags", test: mlx.TestNeedBits,
			value: uint64(m.Flags), limit: uint64(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO), names: mkeyFlagNames})
	}
	if !mlx.ValidateArgsWRSetMkeyCryptoInto(&c.scratch, unsafe.Pointer(attr)) || !attr.ValidateInto(&c.scratch) {
		return nil, c.latchRule(fn)
	}
	c.saveCrypto(m)
	m.CryptoAttr = *attr
	m.Crypto = CryptoUpdated
	if c.counted(mlx5rules.GroupCrypto) {
		return c.finish(fn)
	}
	return nil, nil
}

// BlockBytes is the size in bytes of a block-size enum value (0 if
// unknown).
func BlockBytes(b mlx.BlockSize) uint64 {
	switch b {
	case mlx.MLX5DV_BLOCK_SIZE_512:
		return 512
	case mlx.MLX5DV_BLOCK_SIZE_520:
		return 520
	case mlx.MLX5DV_BLOCK_SIZE_4048:
		return 4048
	case mlx.MLX5DV_BLOCK_SIZE_4096:
		return 4096
	case mlx.MLX5DV_BLOCK_SIZE_4160:
		return 4160
	}
	return 0
}

// SameStructure reports whether the two signature domains have the same
// block structure (libmlx5's "sbs"), which copying signature bytes from one
// to the other needs: both configured, the same block size and type, and
// for CRC the same CRC type.
func (m *Mkey) SameStructure() bool {
	mem, wire := &m.Mem, &m.Wire
	if !mem.Present || !wire.Present || mem.Domain.BlockSize != wire.Domain.BlockSize || mem.Domain.SigType != wire.Domain.SigType {
		return false
	}
	if wire.Domain.SigType == mlx.MLX5DV_SIG_TYPE_CRC {
		return mem.Crc.Type == wire.Crc.Type
	}
	return true
}

// CryptoOrder is the encryption order of the crypto BSF
// (MLX5_ENCRYPTION_ORDER_*), from encrypt_on_tx and the signature order.
func (m *Mkey) CryptoOrder() uint8 {
	after := m.CryptoAttr.SignatureCryptoOrder == mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_AFTER_CRYPTO_ON_TX
	switch {
	case m.CryptoAttr.EncryptOnTx && after:
		return 2 // raw wire
	case m.CryptoAttr.EncryptOnTx:
		return 0 // wire signature
	case after:
		return 1 // memory signature
	}
	return 3 // raw memory
}

// orderAllowed reports whether encrypt_on_tx, the signature order and the
// configured signature domains are a combination of the table of
// mlx5dv_wr_set_mkey_crypto(3). libmlx5 rejects only the raw orders with
// both domains; the table allows less.
func (m *Mkey) orderAllowed() bool {
	mem, wire := m.Mem.Present, m.Wire.Present
	after := m.CryptoAttr.SignatureCryptoOrder == mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_AFTER_CRYPTO_ON_TX
	switch {
	case !mem && !wire:
		return true // rows A and F: the order does not matter
	case m.CryptoAttr.EncryptOnTx && after:
		return wire && !mem // row B
	case !m.CryptoAttr.EncryptOnTx && !after:
		return mem && !wire // row J
	}
	return true // rows C, D, E and G, H, I
}

// finish checks a finished mkey configuration and says what its UMR
// carries, as libmlx5's umr_finalize does; fn is the call that finished
// it.
func (c *Chain) finish(fn mlx.Func) (*UMR, error) {
	w := &c.wr
	m := w.mkey
	if m.Unknown && m.HasSig() && w.got()&mlx5rules.GroupSignature == 0 && !w.isResetSig() {
		return nil, c.fail(mlx5rules.ChainMkeyState, fn, what{field: "mkey lkey", test: mlx.TestNone, value: uint64(m.LKey)})
	}
	if m.Unknown && m.HasCrypto() && w.got()&mlx5rules.GroupCrypto == 0 {
		return nil, c.fail(mlx5rules.ChainMkeyCryptoState, fn, what{field: "mkey lkey", test: mlx.TestNone, value: uint64(m.LKey)})
	}
	room := c.qp.MaxInlineData + 4
	u := c.umr.set(m, int(w.xlat+63)&^63, 1)
	repost := false
	if m.HasSig() && m.ErrCountUpdated {
		u.SigErr = true
		m.ErrCountUpdated = false
		repost = m.Sig == SigSet
	}
	switch {
	case m.HasCrypto():
		if (m.Crypto == CryptoUpdated || m.Crypto == CryptoSet) && c.qp.CryptoSingleBlock && !c.qp.CryptoMultiBlock &&
			m.Length > BlockBytes(m.CryptoAttr.DataUnitSize) {
			return nil, c.fail(mlx5rules.ChainSingleBlock, fn, above("mkey length", m.Length, BlockBytes(m.CryptoAttr.DataUnitSize), "data_unit_size"))
		}
		if !(m.HasSig() && (m.Sig == SigUpdated || m.Sig == SigReset)) && m.Crypto != CryptoUpdated {
			break // no BSF; a configured crypto BSF is not sent again
		}
		bsz := 0
		if m.HasSig() {
			bsz += 64
			u.SigBSF = true
			repost = repost || m.Sig == SigUpdated
		}
		if m.Crypto == CryptoUpdated || m.Crypto == CryptoSet {
			bsz += 64
			u.CryptoBSF = true
		}
		if err := c.bsfChecks(fn, m, u.Xlat, bsz, room); err != nil {
			return nil, err
		}
		if u.CryptoBSF && m.HasSig() && !m.orderAllowed() {
			return nil, c.fail(mlx5rules.ChainCryptoOrder, fn, what{field: "signature_crypto_order", test: mlx.TestNone,
				value: uint64(m.CryptoAttr.SignatureCryptoOrder), names: cryptoOrderNames})
		}
	case m.HasSig():
		if m.Sig != SigUpdated {
			u.DisableBSF = m.Sig != SigSet
			break
		}
		if !bsfOK(m, u.Xlat, 64, room) {
			if err := c.bsfChecks(fn, m, u.Xlat, 64, room); err != nil {
				return nil, err
			}
		}
		u.SigBSF, repost = true, true
		u.SigGen = w.sigGen
	}
	if repost {
		u.PSVs = true
		if m.Mem.Present {
			u.WRs++
		}
		if m.Wire.Present {
			u.WRs++
		}
	}
	// Whole now: the fast paths' word says so, so that the next builder
	// and Complete take their common case.
	w.meta |= metaFinalized
	w.st = uint64(pending(w.need(), w.got(), w.isCounting(), true))
	return u, nil
}

// bsfOK is bsfChecks' common case, inlinable: a copy mask, which needs
// the two domains' block structure compared, goes to bsfChecks.
func bsfOK(m *Mkey, cds, bsz, room int) bool {
	return cds+bsz <= room && m.Length <= 0xffffffff && m.SigFlags&mlx.MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK == 0
}

// bsfChecks runs the checks of a UMR that carries BSFs of bsz bytes
// (after bsfOK failed, it names the rule; a copy mask may pass).
func (c *Chain) bsfChecks(fn mlx.Func, m *Mkey, cds, bsz, room int) error {
	switch {
	case cds+bsz > room:
		return c.fail(mlx5rules.ChainBSFRoom, fn, above("UMR bytes (translation and BSFs)", uint64(cds+bsz), uint64(room), "max_inline_data + 4"))
	case m.Length > 0xffffffff:
		return c.fail(mlx5rules.ChainLength4g, fn, above("mkey length", m.Length, 0xffffffff, ""))
	case m.HasSig() && m.SigFlags&mlx.MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK != 0 && m.Sig == SigUpdated && !m.SameStructure():
		return c.fail(mlx5rules.ChainCopyMaskStructure, fn, what{field: "copy_mask", test: mlx.TestNone, value: uint64(m.CopyMask)})
	}
	return nil
}
