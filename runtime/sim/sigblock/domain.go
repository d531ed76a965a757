package sigblock

import (
	"encoding/binary"
	"errors"
)

// Kind is what a signature domain carries per block. It is not
// enum mlx5dv_sig_type: its zero value is "no signature", which
// mlx5dv_sig_block_attr says with a NULL domain pointer.
type Kind uint8

// The kinds of signature domain.
const (
	KindNone   Kind = iota // no signature field
	KindT10DIF             // MLX5DV_SIG_TYPE_T10DIF: 8-byte guard, app tag, ref tag
	KindCRC                // MLX5DV_SIG_TYPE_CRC: a 4- or 8-byte CRC
)

// BGType is enum mlx5dv_sig_t10dif_bg_type.
type BGType uint8

// The T10-DIF block guard types.
const (
	BGCRC  BGType = 0 // MLX5DV_SIG_T10DIF_CRC: CRC16T10DIF
	BGCSUM BGType = 1 // MLX5DV_SIG_T10DIF_CSUM: IPChecksum
)

// The flags of struct mlx5dv_sig_t10dif (enum mlx5dv_sig_t10dif_flags).
const (
	FlagRefRemap     = 1 << 0 // increment the reference tag per block
	FlagAppEscape    = 1 << 1 // app tag 0xffff: the block is not checked
	FlagAppRefEscape = 1 << 2 // app tag 0xffff and ref tag 0xffffffff: not checked
	knownFlags       = FlagRefRemap | FlagAppEscape | FlagAppRefEscape
)

// The check_mask bits of enum mlx5dv_sig_mask. Bit 7-i covers byte i of the
// signature field as it lies in memory or on the wire (for a CRC, stored
// little-endian, bit 7 is its least significant byte). The man page's
// table numbers the CRC bytes 3..0 under bits 7..4 without saying whether
// that is significance or position; every mask enum mlx5dv_sig_mask
// defines covers the whole field, where the two readings agree.
// [ledger: sig-mask-bits]
const (
	MaskT10DIFGuard  = 0xc0
	MaskT10DIFAppTag = 0x30
	MaskT10DIFRefTag = 0x0f
	MaskCRC32        = 0xf0
	MaskCRC32C       = MaskCRC32
	MaskCRC64XP10    = 0xff
)

// BlockSize returns the data bytes per block of enum mlx5dv_block_size
// (MLX5DV_BLOCK_SIZE_512 = 0 ... MLX5DV_BLOCK_SIZE_4160 = 4).
func BlockSize(e uint32) (int, bool) {
	switch e {
	case 0:
		return 512, true
	case 1:
		return 520, true
	case 2:
		return 4048, true
	case 3:
		return 4096, true
	case 4:
		return 4160, true
	}
	return 0, false
}

// Domain is one signature domain (struct mlx5dv_sig_block_domain with its
// mlx5dv_sig_t10dif or mlx5dv_sig_crc), block size in bytes.
type Domain struct {
	Kind      Kind
	BlockSize int // data bytes per block, from BlockSize

	// T10-DIF (KindT10DIF)
	BGType BGType
	BG     uint16 // guard seed: 0 or 0xffff
	AppTag uint16
	RefTag uint32 // the first block's reference tag
	Flags  uint16

	// CRC (KindCRC)
	CRC  CRCType
	Seed uint64 // 0 or all ones (the bits the type uses)
}

// Errors of a domain's configuration or of a buffer that does not hold whole
// blocks. They name the rule; the simulator turns them into error CQEs.
var (
	ErrKind      = errors.New("sigblock: unknown signature kind")
	ErrBlockSize = errors.New("sigblock: block size is not one of 512, 520, 4048, 4096, 4160")
	ErrBGType    = errors.New("sigblock: T10-DIF bg_type is neither CRC nor CSUM")
	ErrBGSeed    = errors.New("sigblock: T10-DIF bg seed is neither 0 nor 0xffff")
	ErrFlags     = errors.New("sigblock: unknown T10-DIF flags")
	ErrCRCType   = errors.New("sigblock: unknown CRC type")
	ErrCRCSeed   = errors.New("sigblock: CRC seed is neither 0 nor all ones")
	ErrLength    = errors.New("sigblock: buffer does not hold whole blocks")
	ErrShort     = errors.New("sigblock: destination buffer too short")
)

// Validate reports the first rule of mlx5dv_wr_set_mkey_sig_block(3) the
// domain breaks.
func (d *Domain) Validate() error {
	switch d.Kind {
	case KindNone:
		return nil
	case KindT10DIF:
		if d.BGType > BGCSUM {
			return ErrBGType
		}
		if d.BG != 0 && d.BG != 0xFFFF {
			return ErrBGSeed
		}
		if d.Flags&^knownFlags != 0 {
			return ErrFlags
		}
	case KindCRC:
		if d.CRC.Width() == 0 {
			return ErrCRCType
		}
		if _, ok := d.CRC.Seed(d.Seed); !ok {
			return ErrCRCSeed
		}
	default:
		return ErrKind
	}
	switch d.BlockSize {
	case 512, 520, 4048, 4096, 4160:
		return nil
	}
	return ErrBlockSize
}

// TupleSize is the bytes of signature after each block: 8 for T10-DIF and
// CRC64_XP10, 4 for CRC32/CRC32C, 0 without signature.
func (d *Domain) TupleSize() int {
	switch d.Kind {
	case KindT10DIF:
		return 8
	case KindCRC:
		return d.CRC.Size()
	}
	return 0
}

// Stride is the bytes one block takes with its signature.
func (d *Domain) Stride() int { return d.BlockSize + d.TupleSize() }

// Guard computes the block guard of data: the T10-DIF CRC16 or checksum,
// or the domain's CRC.
func (d *Domain) Guard(data []byte) uint64 {
	if d.Kind == KindCRC {
		s, _ := d.CRC.Seed(d.Seed)
		return d.CRC.Sum(s, data)
	}
	if d.BGType == BGCSUM {
		return uint64(IPChecksum(d.BG, data))
	}
	return uint64(CRC16T10DIF(d.BG, data))
}

// RefTagOf is the reference tag block n carries: RefTag, plus n with
// FlagRefRemap (modulo 2^32). [ledger: sig-ref-tag-numbering]
func (d *Domain) RefTagOf(n uint64) uint32 {
	if d.Flags&FlagRefRemap != 0 {
		return d.RefTag + uint32(n)
	}
	return d.RefTag
}

// PutTuple writes block n's signature for data into dst (TupleSize bytes).
// T10-DIF is guard, app tag, ref tag big-endian (SBC-3; the kernel's struct
// t10_pi_tuple is __be16/__be16/__be32, and block/t10-pi.c verifies that
// way the PI iSER and NVMe-oF hosts receive through ConnectX offload)
// [ledger: t10dif-byte-order]. A CRC is stored little-endian, least
// significant byte first, in memory and on the wire: changchengx/irdma
// crc32c/check_rdma_crc32c.c and rdma_read_crc32c_reqck.c, run on a
// ConnectX-6 Dx, compare the PI read as a native uint32_t on x86 with the
// CRC-32C of the data, and SPDK's module/accel/mlx5 uses the device's
// CRC32C as a native uint32_t. An NVIDIA sample that prints the field
// with ntohl checks nothing, so it does not weigh against them.
// [ledger: crc-byte-order] CRC64_XP10 is stored little-endian by
// analogy with CRC32/CRC32C; no published program shows its bytes.
// [ledger: crc64-byte-order]
func (d *Domain) PutTuple(dst, data []byte, n uint64) error {
	if len(dst) < d.TupleSize() {
		return ErrShort
	}
	d.putTuple(dst, d.Guard(data), n)
	return nil
}

// putTuple writes the field with guard g for block n (dst holds it).
func (d *Domain) putTuple(dst []byte, g, n uint64) {
	switch {
	case d.Kind == KindT10DIF:
		binary.BigEndian.PutUint16(dst[0:2], uint16(g))
		binary.BigEndian.PutUint16(dst[2:4], d.AppTag)
		binary.BigEndian.PutUint32(dst[4:8], d.RefTagOf(n))
	case d.Kind == KindCRC && d.CRC.Width() == 64:
		binary.LittleEndian.PutUint64(dst[0:8], g)
	case d.Kind == KindCRC:
		binary.LittleEndian.PutUint32(dst[0:4], uint32(g))
	}
}

// CopyFields copies from src into dst the signature-field bytes copy_mask
// selects (bit 7-i for byte i, as check_mask): with
// MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK the device takes those bytes from
// the input domain's field instead of generating them. Both fields have
// size bytes (at most 8).
func CopyFields(dst, src []byte, size int, copyMask uint8) error {
	if size > 8 || len(dst) < size || len(src) < size {
		return ErrShort
	}
	for i := 0; i < size; i++ {
		if copyMask&(0x80>>i) != 0 {
			dst[i] = src[i]
		}
	}
	return nil
}
