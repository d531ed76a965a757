package mkey

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sim/sigblock"
)

// domainConf is a signature domain as its BSF section says it; the PSV's
// transient signature, once SET_PSV wrote it, gives the seeds and tags.
type domainConf struct {
	d   sigblock.Domain // Kind None: the domain has no signature
	psv uint32
}

// sigConf is an mkey's block signature.
type sigConf struct {
	mem, wire           domainConf
	checkMask, copyMask uint8
	sbs                 bool // same block structure: copyMask applies
}

// cryptoConf is an mkey's AES-XTS configuration (its crypto BSF).
type cryptoConf struct {
	dekID  uint32
	keytag [8]byte
	// tweak is the initial tweak, little-endian as
	// mlx5dv_crypto_attr.initial_tweak: a 128-bit number the device adds
	// each data unit's number to, the carry out of the low 64 bits going
	// into the high ones [ledger: xts-tweak-128-bit-carry].
	tweak    [16]byte
	unit     int
	encOnTx  bool // memory data is encrypted on TX (decrypted on RX)
	sigAfter bool // SIGNATURE_AFTER_CRYPTO_ON_TX: crypto on the memory side

	x   *sigblock.XTS // built on first use for dek
	dek *dek
}

// The BSF header bits (byte 0): size 2 is a basic BSF alone, 3 one
// followed by a crypto BSF; a crypto BSF has type 1.
const (
	bsfSizeBasic  = 2
	bsfSizeCrypto = 3
	bsfTypeCrypto = 1
)

// blockSize decodes a BSF block selector. [ledger: bsf-encoding]
func blockSize(sel uint8) int {
	switch sel {
	case 1:
		return 512
	case 2:
		return 520
	case 6:
		return 4048
	case 3:
		return 4096
	case 4:
		return 4160
	}
	return 0
}

// parseBSFs reads a UMR's BSFs: a signature BSF, a crypto BSF, or both in
// that order.
func (t *Table) parseBSFs(b []byte) (*sigConf, *cryptoConf, error) {
	if len(b) != mlx.BSFSize && len(b) != mlx.BSFSize+mlx.CryptoBSFSize {
		return nil, nil, wqeErr("umr_ctrl.bsf_octowords", "%d, a UMR carries 4 (one BSF) or 8 (signature and crypto)", len(b)/16)
	}
	if b[0]&bsfTypeCrypto != 0 {
		if len(b) != mlx.CryptoBSFSize {
			return nil, nil, wqeErr("crypto_bsf", "a crypto BSF followed by another")
		}
		cr, err := t.parseCrypto((*mlx.CryptoBSF)(b))
		return nil, cr, err
	}
	bsf := (*mlx.BSF)(b[:mlx.BSFSize])
	wantSize := uint8(bsfSizeBasic)
	if len(b) > mlx.BSFSize {
		wantSize = bsfSizeCrypto
	}
	if sz := bsf.Basic().Size(); sz != wantSize {
		return nil, nil, wqeErr("bsf.size", "%d with %d BSF bytes", sz, len(b))
	}
	sig, err := parseSig(bsf)
	if err != nil || len(b) == mlx.BSFSize {
		return sig, nil, err
	}
	c := (*mlx.CryptoBSF)(b[mlx.BSFSize:])
	if c.Type() != bsfTypeCrypto {
		return nil, nil, wqeErr("crypto_bsf.type", "%d after a signature BSF", c.Type())
	}
	cr, err := t.parseCrypto(c)
	return sig, cr, err
}

// parseSig reads a signature BSF. [ledger: bsf-not-modelled]
func parseSig(b *mlx.BSF) (*sigConf, error) {
	s := b.Basic()
	for _, v := range b.Ext() {
		if v != 0 {
			return nil, wqeErr("bsf.ext", "unknown non-zero bytes (no extended BSF is simulated)")
		}
	}
	if s.BSFSizeSbs()&^0xd0 != 0 {
		return nil, wqeErr("bsf.bsf_size_sbs", "unknown bits %#x", s.BSFSizeSbs()&^0xd0)
	}
	c := &sigConf{checkMask: s.CheckByteMask(), sbs: s.Sbs() != 0}
	var err error
	if s.Mem() != 0 {
		if c.mem, err = parseDomain("bsf.m", s.MBfsPSV(), b.MInl(), s.Mem()); err != nil {
			return nil, err
		}
	}
	wireSel := s.Wire()
	if c.sbs {
		if s.Mem() == 0 {
			return nil, wqeErr("bsf.sbs", "same block structure without a memory domain")
		}
		c.copyMask, wireSel = s.Wire(), s.Mem()
	}
	if wireSel != 0 {
		if c.wire, err = parseDomain("bsf.w", s.WBfsPSV(), b.WInl(), wireSel); err != nil {
			return nil, err
		}
	}
	if c.sbs && (c.mem.d.Kind != c.wire.d.Kind || c.mem.d.CRC != c.wire.d.CRC) {
		return nil, wqeErr("bsf.sbs", "same block structure with different signature types")
	}
	return c, nil
}

// parseDomain reads one domain: its block format selector and PSV, and
// for T10-DIF its inline section. [ledger: bsf-encoding]
func parseDomain(name string, bfsPSV uint32, inl *mlx.BSFInl, sel uint8) (domainConf, error) {
	c := domainConf{psv: bfsPSV & 0xffffff}
	d := &c.d
	if d.BlockSize = blockSize(sel); d.BlockSize == 0 {
		return c, wqeErr(name+" block selector", "unknown value %d", sel)
	}
	bfs := uint8(bfsPSV >> 24)
	if bfs != 0 {
		d.Kind = sigblock.KindCRC
		switch bfs &^ 3 {
		case 0x20:
			d.CRC = sigblock.TypeCRC32
		case 0x40:
			d.CRC = sigblock.TypeCRC32C
		case 0x50:
			d.CRC = sigblock.TypeCRC64XP10
		default:
			return c, wqeErr(name+"_bfs", "unknown block format %#x", bfs)
		}
		if bfs&2 == 0 {
			return c, wqeErr(name+"_bfs", "%#x lacks the CRC-enable bit 0x02", bfs)
		}
		if bfs&1 == 0 {
			d.Seed = ^uint64(0) // bit 0 set means seed 0 [ledger: bsf-encoding]
		}
		return c, d.Validate()
	}
	d.Kind = sigblock.KindT10DIF
	switch inl.SigType() {
	case 1:
		d.BGType = sigblock.BGCRC
	case 2:
		d.BGType = sigblock.BGCSUM
	default:
		return c, wqeErr(name+"_inl.sig_type", "unknown guard type %d", inl.SigType())
	}
	if seed := inl.RpInvSeed(); seed&^0x08 != 0x80 {
		return c, wqeErr(name+"_inl.rp_inv_seed", "unknown value %#x", seed)
	} else if seed&0x08 != 0 {
		d.BG = 0xffff
	}
	f := inl.DifIncRefGuardCheck()
	if f&^0x43 != 0 || f&3 == 3 {
		return c, wqeErr(name+"_inl.dif_inc_ref_guard_check", "unknown value %#x", f)
	}
	if f&0x40 != 0 {
		d.Flags |= sigblock.FlagRefRemap
	}
	if f&0x02 != 0 {
		d.Flags |= sigblock.FlagAppRefEscape
	}
	if f&0x01 != 0 {
		d.Flags |= sigblock.FlagAppEscape
	}
	if inl.VldRefresh() != 0xc000 || inl.DifAppBitmaskCheck() != 0xffff {
		return c, wqeErr(name+"_inl", "vld_refresh %#x, app bitmask %#x: only 0xc000 and 0xffff are simulated", inl.VldRefresh(), inl.DifAppBitmaskCheck())
	}
	d.AppTag, d.RefTag = inl.DifApptag(), inl.DifReftag()
	return c, d.Validate()
}

// parseCrypto reads a crypto BSF. The DEK must exist now; it is looked
// up again at each transfer. [ledger: bsf-not-modelled, crypto-mkey-state]
func (t *Table) parseCrypto(b *mlx.CryptoBSF) (*cryptoConf, error) {
	if b.Type() != bsfTypeCrypto {
		return nil, wqeErr("crypto_bsf.type", "%d", b.Type())
	}
	if b.EncStandard() != 0 {
		return nil, wqeErr("crypto_bsf.enc_standard", "%d: only AES-XTS (0) is simulated", b.EncStandard())
	}
	c := &cryptoConf{dekID: b.DEK(), keytag: *b.Keytag(), tweak: *b.XTSInitTweak()}
	if c.unit = blockSize(b.BsPointer()); c.unit == 0 {
		return nil, wqeErr("crypto_bsf.bs_pointer", "unknown data unit selector %d", b.BsPointer())
	}
	switch b.EncOrder() {
	case 0: // wire signature: encrypt on TX, signature before crypto [ledger: crypto-order]
		c.encOnTx = true
	case 1: // memory signature: decrypt on TX, signature after crypto
		c.sigAfter = true
	case 2: // raw wire
		c.encOnTx, c.sigAfter = true, true
	case 3: // raw memory
	default:
		return nil, wqeErr("crypto_bsf.enc_order", "unknown order %d", b.EncOrder())
	}
	if t.CryptoMultiBlock {
		// The multi-block engine takes the tweak big-endian (the PRM's
		// aes_xts_multi_block_be_tweak, Linux include/linux/mlx5/mlx5_ifc.h)
		// and runtime/sq wrote it so; the single-block one little-endian
		// [ledger: xts-tweak-byte-order].
		for i, j := 0, 15; i < j; i, j = i+1, j-1 {
			c.tweak[i], c.tweak[j] = c.tweak[j], c.tweak[i]
		}
	}
	if t.deks[c.dekID] == nil {
		return nil, wqeErr("crypto_bsf.dek", "%d names no DEK of the device", c.dekID)
	}
	return c, nil
}

// domain returns the signature domain to run: the BSF's, with the seed
// and tags of its PSV once SET_PSV set them. [ledger: psv-seeds]
func (t *Table) domain(c *domainConf) sigblock.Domain {
	d := c.d
	p := t.psvs[c.psv]
	if d.Kind == sigblock.KindNone || p == nil || !p.set {
		return d
	}
	v := p.value
	switch {
	case d.Kind == sigblock.KindT10DIF:
		d.BG, d.AppTag, d.RefTag = uint16(v>>48), uint16(v>>32), uint32(v)
	case d.CRC.Width() == 64:
		d.Seed = v
	default:
		d.Seed = v >> 32
	}
	return d
}
