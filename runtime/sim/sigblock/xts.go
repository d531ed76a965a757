package sigblock

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"

	"golang.org/x/crypto/xts"
)

// XTS is the AES-XTS engine of mlx5dv_wr_set_mkey_crypto(3) (IEEE Std
// 1619): one DEK, one data-unit size. Data unit i of a job uses the tweak
// initial + i. golang.org/x/crypto/xts does the whole-block work; units
// that are not a multiple of 16 bytes (MLX5DV_BLOCK_SIZE_520) take the
// standard's ciphertext stealing, built here from single-block calls. An XTS
// keeps scratch space: one goroutine at a time. [ledger: xts-ciphertext-stealing, xts-tweak-numbering]
type XTS struct {
	c       *xts.Cipher
	k1, k2  cipher.Block // the halves of the key, for tweaks past 64 bits (xts128.go)
	unit    int
	scratch []byte // unit+16 bytes: places one block at its position in a unit
}

// Errors of a crypto job or configuration.
var (
	ErrKeySize  = errors.New("sigblock: AES-XTS key is neither 32 bytes (key size 128) nor 64 (key size 256)")
	ErrJobSize  = errors.New("sigblock: AES-XTS job size is neither whole data units nor a multiple of 16 at most data_unit_size-16 past them")
	ErrTweak    = errors.New("sigblock: AES-XTS tweak needs more than 64 bits")
	ErrUnitSize = errors.New("sigblock: data unit size is not one of 512, 520, 4048, 4096, 4160")
)

// NewXTS takes the DEK's key as mlx5dv_dek_create(3) lays it out, key1 then
// key2 (32 bytes for MLX5DV_CRYPTO_KEY_SIZE_128, 64 for _256), and the data
// unit size in bytes (BlockSize of data_unit_size).
func NewXTS(key []byte, unit int) (*XTS, error) {
	if len(key) != 32 && len(key) != 64 {
		return nil, ErrKeySize
	}
	switch unit {
	case 512, 520, 4048, 4096, 4160:
	default:
		return nil, ErrUnitSize
	}
	c, err := xts.NewCipher(aes.NewCipher, key)
	if err != nil {
		return nil, err
	}
	k1, err1 := aes.NewCipher(key[:len(key)/2])
	k2, err2 := aes.NewCipher(key[len(key)/2:])
	if err1 != nil || err2 != nil {
		return nil, ErrKeySize
	}
	return &XTS{c: c, k1: k1, k2: k2, unit: unit, scratch: make([]byte, unit+16)}, nil
}

// Tweak reads mlx5dv_crypto_attr.initial_tweak, a little-endian 128-bit
// number (the man page: "Must be supplied in little endian"). x/crypto/xts
// encodes the data-unit number the same way but in 64 bits, so the high
// half must be zero. [ledger: xts-tweak-byte-order]
func Tweak(initial [16]byte) (uint64, error) {
	if binary.LittleEndian.Uint64(initial[8:]) != 0 {
		return 0, ErrTweak
	}
	return binary.LittleEndian.Uint64(initial[:8]), nil
}

// Encrypt encrypts src into dst (same length, may be the same memory), data
// unit i with tweak+i.
func (x *XTS) Encrypt(dst, src []byte, tweak uint64) error { return x.run(dst, src, tweak, false) }

// Decrypt is Encrypt's inverse.
func (x *XTS) Decrypt(dst, src []byte, tweak uint64) error { return x.run(dst, src, tweak, true) }

// jobSize checks a job against the man page's rule. [ledger: xts-unit-alignment]
func (x *XTS) jobSize(dst, src []byte) error {
	if len(dst) < len(src) {
		return ErrShort
	}
	rem := len(src) % x.unit
	if rem != 0 && (rem%16 != 0 || rem > x.unit-16) {
		return ErrJobSize
	}
	return nil
}

func (x *XTS) run(dst, src []byte, tweak uint64, dec bool) error {
	if err := x.jobSize(dst, src); err != nil {
		return err
	}
	units := uint64((len(src) + x.unit - 1) / x.unit)
	if units > 0 && tweak+(units-1) < tweak {
		return ErrTweak
	}
	for off := 0; off < len(src); off += x.unit {
		end := min(off+x.unit, len(src))
		x.unitOp(dst[off:end], src[off:end], tweak, dec)
		tweak++
	}
	return nil
}

// unitOp runs one data unit; a tail of r bytes (0 < r < 16) is stolen as
// IEEE 1619 section 5.3.2 (encryption) and 5.4.2 (decryption) describe:
// encryption CC = E_{m-1}(P_{m-1}), C_m = CC[:r], C_{m-1} = E_m(P_m || CC[r:]);
// decryption PP = D_m(C_{m-1}), P_m = PP[:r], P_{m-1} = D_{m-1}(C_m || PP[r:]).
func (x *XTS) unitOp(dst, src []byte, tweak uint64, dec bool) {
	m, r := len(src)/16, len(src)%16
	if r == 0 {
		x.whole(dst, src, tweak, dec)
		return
	}
	lastAt := 16 * (m - 1)
	var last, tail, a [16]byte
	copy(last[:], src[lastAt:16*m])
	copy(tail[:r], src[16*m:])
	if !dec {
		x.whole(dst[:16*m], src[:16*m], tweak, false)
		copy(a[:], dst[lastAt:16*m]) // CC
		copy(last[:r], tail[:r])
		copy(last[r:], a[r:])
		x.blockAt(dst[lastAt:16*m], last[:], tweak, m, false)
		copy(dst[16*m:], a[:r])
		return
	}
	x.blockAt(a[:], last[:], tweak, m, true) // PP
	copy(dst[:lastAt], src[:lastAt])
	copy(dst[lastAt:lastAt+r], tail[:r])
	copy(dst[lastAt+r:16*m], a[r:])
	x.whole(dst[:16*m], dst[:16*m], tweak, true)
	copy(dst[16*m:], a[:r])
}

// blockAt runs one 16-byte block as block j of a data unit: x/crypto/xts
// only starts a unit at block 0, so the block is placed at j in scratch.
func (x *XTS) blockAt(dst, src []byte, tweak uint64, j int, dec bool) {
	s := x.scratch[:16*(j+1)]
	copy(s[16*j:], src)
	x.whole(s, s, tweak, dec)
	copy(dst, s[16*j:])
}

func (x *XTS) whole(dst, src []byte, tweak uint64, dec bool) {
	if dec {
		x.c.Decrypt(dst, src, tweak)
	} else {
		x.c.Encrypt(dst, src, tweak)
	}
}
