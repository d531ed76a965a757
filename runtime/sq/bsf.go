package sq

// The signature and crypto BSFs of a UMR, and the SET_PSVs' transient
// signatures, from an mkey's configured attributes (rdma-core's
// umr_finalize and the helpers it calls).

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
)

// transientSig is a domain's initial transient signature.
func transientSig(d *wrcheck.Domain) uint64 {
	if d.Domain.SigType == mlx.MLX5DV_SIG_TYPE_CRC {
		if d.Crc.Type == mlx.MLX5DV_SIG_CRC_TYPE_CRC64_XP10 {
			return d.Crc.Seed
		}
		return d.Crc.Seed << 32
	}
	t := &d.T10dif
	return uint64(t.BG)<<48 | uint64(t.AppTag)<<32 | uint64(t.RefTag)
}

// blockSelector is the BSF's code for a block size.
func blockSelector(b mlx.BlockSize) uint8 {
	switch b {
	case mlx.MLX5DV_BLOCK_SIZE_512:
		return 1
	case mlx.MLX5DV_BLOCK_SIZE_520:
		return 2
	case mlx.MLX5DV_BLOCK_SIZE_4048:
		return 6
	case mlx.MLX5DV_BLOCK_SIZE_4096:
		return 3
	case mlx.MLX5DV_BLOCK_SIZE_4160:
		return 4
	}
	return 0
}

// The BSF's size field (bits 7..6 of byte 0) and flags.
const (
	bsfSizeBasic  = 2 << 6 // basic BSF only
	bsfSizeCrypto = 3 << 6 // basic BSF followed by a crypto BSF
	bsfSBS        = 0x10   // memory and wire have the same block structure
	bsfTypeCrypto = 1
)

// crcBFS is a CRC domain's block format selector (the top byte of
// x_bfs_psv).
func crcBFS(d *wrcheck.Domain) uint32 {
	var base uint32
	switch d.Crc.Type {
	case mlx.MLX5DV_SIG_CRC_TYPE_CRC32:
		base = 0x20
	case mlx.MLX5DV_SIG_CRC_TYPE_CRC32C:
		base = 0x40
	case mlx.MLX5DV_SIG_CRC_TYPE_CRC64_XP10:
		base = 0x50
	}
	if d.Crc.Seed == 0 {
		base |= 0x01
	}
	return (base | 0x02) << 24
}

// difInline writes a T10-DIF domain's inline section of the BSF.
func difInline(s *mlx.BSFInl, d *wrcheck.Domain) {
	t := &d.T10dif
	s.SetVldRefresh(0xc000)
	s.SetDifApptag(t.AppTag)
	s.SetDifReftag(t.RefTag)
	if t.BGType == mlx.MLX5DV_SIG_T10DIF_CRC {
		s.SetSigType(1)
	} else {
		s.SetSigType(2)
	}
	seed := uint8(0x80)
	if t.BG != 0 {
		seed |= 0x08
	}
	s.SetRpInvSeed(seed)
	var f uint8
	if t.Flags&uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP) != 0 {
		f |= 0x40
	}
	switch {
	case t.Flags&uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_APP_REF_ESCAPE) != 0:
		f |= 0x02
	case t.Flags&uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_APP_ESCAPE) != 0:
		f |= 0x01
	}
	s.SetDifIncRefGuardCheck(f)
	s.SetDifAppBitmaskCheck(0xffff)
}

// sigBSF writes the signature BSF of mk.
func sigBSF(b *mlx.BSF, mk *wrcheck.Mkey, crypto bool) {
	clear(b[:])
	hdr := uint8(bsfSizeBasic)
	if crypto {
		hdr = bsfSizeCrypto
	}
	s := b.Basic()
	s.SetRawDataSize(0xffffffff)
	mem, wire := &mk.Mem, &mk.Wire
	if mem.Present || wire.Present {
		s.SetCheckByteMask(mk.CheckMask)
	}
	if mem.Present {
		var bfs uint32
		if mem.Domain.SigType == mlx.MLX5DV_SIG_TYPE_CRC {
			bfs = crcBFS(mem)
		} else {
			difInline(b.MInl(), mem)
		}
		s.SetMBfsPSV(bfs | mk.MemPSV&0xffffff)
		s.SetMem(blockSelector(mem.Domain.BlockSize))
	}
	if wire.Present {
		var bfs uint32
		var copyMask uint8
		sbs := mk.SameStructure()
		if wire.Domain.SigType == mlx.MLX5DV_SIG_TYPE_CRC {
			bfs = crcBFS(wire)
			if sbs {
				copyMask = 0xf0 // the 4 CRC bytes
				if wire.Crc.Type == mlx.MLX5DV_SIG_CRC_TYPE_CRC64_XP10 {
					copyMask = 0xff
				}
			}
		} else {
			difInline(b.WInl(), wire)
			if sbs {
				if mem.T10dif.BGType == wire.T10dif.BGType && mem.T10dif.BG == wire.T10dif.BG {
					copyMask |= 0xc0 // guard
				}
				if mem.T10dif.AppTag == wire.T10dif.AppTag {
					copyMask |= 0x30
				}
				if mem.T10dif.RefTag == wire.T10dif.RefTag {
					copyMask |= 0x0f
				}
			}
		}
		if mk.SigFlags&mlx.MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK != 0 {
			copyMask = mk.CopyMask // the state machine checked sbs
		}
		s.SetWBfsPSV(bfs | mk.WirePSV&0xffffff)
		if sbs {
			hdr |= bsfSBS
			s.SetWire(copyMask)
		} else {
			s.SetWire(blockSelector(wire.Domain.BlockSize))
		}
	}
	s.SetBSFSizeSbs(hdr)
}

// cryptoBSF writes the crypto BSF of mk.
func (q *SQ) cryptoBSF(b *mlx.CryptoBSF, mk *wrcheck.Mkey) {
	clear(b[:])
	a := &mk.CryptoAttr
	hdr := uint8(bsfSizeBasic)
	if mk.HasSig() {
		hdr = bsfSizeCrypto
	}
	b.SetBSFSizeType(hdr | bsfTypeCrypto)
	b.SetEncOrder(mk.CryptoOrder())
	b.SetRawDataSize(0xffffffff)
	b.SetBsPointer(blockSelector(a.DataUnitSize))
	tweak := a.InitialTweak
	if q.xts {
		// The multi-block engine takes the tweak in the other byte order.
		for i, j := 0, len(tweak)-1; i < j; i, j = i+1, j-1 {
			tweak[i], tweak[j] = tweak[j], tweak[i]
		}
	}
	b.SetXTSInitTweak(tweak)
	b.SetDEK((*DEK)(a.DEK).ObjectID)
	b.SetKeytag(a.Keytag)
}

// sigImage is a signature BSF with the PSV indexes left 0, and the
// SET_PSVs' transient signatures: what a configuration with given
// signature attributes writes whatever the mkey (a template's, and the
// four calls' through sigCache).
type sigImage struct {
	bsfImg  mlx.BSF
	memBFS  uint32 // the BSF's block format selectors
	wireBFS uint32
	memTS   uint64 // the SET_PSVs' transient signatures
	wireTS  uint64
	mem     bool // the signature domains present: a SET_PSV each
	wire    bool
}

// build computes the image of mk's signature attributes.
func (g *sigImage) build(mk *wrcheck.Mkey) {
	sigBSF(&g.bsfImg, mk, false)
	b := g.bsfImg.Basic()
	g.memBFS, g.wireBFS = b.MBfsPSV()&^0xffffff, b.WBfsPSV()&^0xffffff
	b.SetMBfsPSV(g.memBFS)
	b.SetWBfsPSV(g.wireBFS)
	g.memTS, g.wireTS = transientSig(&mk.Mem), transientSig(&mk.Wire)
	g.mem, g.wire = mk.Mem.Present, mk.Wire.Present
}

// writeBSF writes the image's BSF at b with mk's PSV indexes.
func (g *sigImage) writeBSF(b *mlx.BSF, mk *wrcheck.Mkey) {
	*b = g.bsfImg
	if g.mem {
		b.Basic().SetMBfsPSV(g.memBFS | mk.MemPSV&0xffffff)
	}
	if g.wire {
		b.Basic().SetWBfsPSV(g.wireBFS | mk.WirePSV&0xffffff)
	}
}

// sigCache is the image of the signature attributes the four calls set
// last (the chain's generation gen of them, wrcheck.UMR.SigGen): a
// storage path that sets the same attributes on every configuration
// builds its BSF once.
type sigCache struct {
	gen uint64 // 0: none
	sigImage
}

// sigFor writes the signature BSF of the finished configuration p at b
// and returns the transient signatures of its SET_PSVs: from the cache
// when p's attributes are those it holds (building it, from the values
// the checker validated, when they are a new generation), else computed
// (a crypto BSF follows: the header differs).
func (q *SQ) sigFor(b *mlx.BSF, p *wrcheck.UMR) (memTS, wireTS uint64) {
	mk, g := p.Mkey, &q.sigImg
	// sigBuild fails only for a generation that is not the checker's
	// current one: never, within one work request.
	if p.SigGen != 0 && !p.CryptoBSF && (g.gen == p.SigGen || q.sigBuild(p.SigGen)) {
		g.writeBSF(b, mk)
		return g.memTS, g.wireTS
	}
	sigBSF(b, mk, p.CryptoBSF)
	return transientSig(&mk.Mem), transientSig(&mk.Wire)
}

// sigBuild builds the cache's image of generation gen from the values
// the checker holds for it (as libmlx5 builds the BSF from its own copy
// of the attributes, not from one the program can change), and reports
// whether gen is the checker's current generation.
//
//go:noinline
func (q *SQ) sigBuild(gen uint64) bool {
	var v wrcheck.Mkey
	if q.chk.SigValues(&v) != gen {
		return false
	}
	q.sigImg.build(&v)
	q.sigImg.gen = gen
	return true
}
