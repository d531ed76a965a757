package sigblock

import "encoding/binary"

// The full 128-bit tweak of mlx5dv_crypto_attr.initial_tweak. While the
// tweaks of a job fit in 64 bits the job runs on x/crypto/xts; past that
// (x/crypto/xts numbers data units in 64 bits) each unit runs the same
// IEEE 1619 steps here on the key's two AES halves.

// EncryptWide encrypts src into dst, data unit i with the little-endian
// 128-bit tweak initial + i (modulo 2^128).
func (x *XTS) EncryptWide(dst, src []byte, initial [16]byte) error {
	return x.runWide(dst, src, initial, false)
}

// DecryptWide is EncryptWide's inverse.
func (x *XTS) DecryptWide(dst, src []byte, initial [16]byte) error {
	return x.runWide(dst, src, initial, true)
}

func (x *XTS) runWide(dst, src []byte, initial [16]byte, dec bool) error {
	if err := x.jobSize(dst, src); err != nil {
		return err
	}
	lo, hi := binary.LittleEndian.Uint64(initial[:8]), binary.LittleEndian.Uint64(initial[8:])
	units := uint64((len(src) + x.unit - 1) / x.unit)
	if hi == 0 && (units == 0 || lo+(units-1) >= lo) {
		return x.run(dst, src, lo, dec)
	}
	tw := initial
	for off := 0; off < len(src); off += x.unit {
		end := min(off+x.unit, len(src))
		x.unitWide(dst[off:end], src[off:end], &tw, dec)
		lo, hi := binary.LittleEndian.Uint64(tw[:8]), binary.LittleEndian.Uint64(tw[8:])
		if lo++; lo == 0 {
			hi++
		}
		binary.LittleEndian.PutUint64(tw[:8], lo)
		binary.LittleEndian.PutUint64(tw[8:], hi)
	}
	return nil
}

// unitWide runs one data unit with tweak tw: T = E_K2(tw), block j is
// E_K1(P xor T_j) xor T_j with T_j = T * alpha^j in GF(2^128), and a tail
// of r < 16 bytes is stolen as unitOp does (IEEE 1619 5.3.2 and 5.4.2).
func (x *XTS) unitWide(dst, src []byte, tw *[16]byte, dec bool) {
	var t, last, tail, cc [16]byte
	x.k2.Encrypt(t[:], tw[:])
	m, r := len(src)/16, len(src)%16
	full := m
	if r != 0 {
		full = m - 1 // the last whole block takes part in the stealing
	}
	for j := 0; j < full; j++ {
		x.block(dst[16*j:16*j+16], src[16*j:16*j+16], &t, dec)
		mulAlpha(&t)
	}
	if r == 0 {
		return
	}
	tm1 := t // T_{m-1}
	tm := t
	mulAlpha(&tm) // T_m
	at := 16 * (m - 1)
	copy(last[:], src[at:at+16])
	copy(tail[:r], src[16*m:])
	first, second := &tm1, &tm
	if dec {
		first, second = &tm, &tm1 // decryption takes the blocks' tweaks the other way round
	}
	x.block(cc[:], last[:], first, dec)
	copy(tail[r:], cc[r:])
	copy(dst[16*m:], cc[:r])
	x.block(dst[at:at+16], tail[:], second, dec)
}

// block is one XTS block: b = E_K1(a xor t) xor t (D_K1 to decrypt).
func (x *XTS) block(b, a []byte, t *[16]byte, dec bool) {
	var buf [16]byte
	for i := range buf {
		buf[i] = a[i] ^ t[i]
	}
	if dec {
		x.k1.Decrypt(buf[:], buf[:])
	} else {
		x.k1.Encrypt(buf[:], buf[:])
	}
	for i := range buf {
		b[i] = buf[i] ^ t[i]
	}
}

// mulAlpha multiplies t, a little-endian element of GF(2^128), by alpha:
// a shift left by one bit with x^128 = x^7 + x^2 + x + 1 (0x87).
func mulAlpha(t *[16]byte) {
	var carry byte
	for i := range t {
		next := t[i] >> 7
		t[i] = t[i]<<1 | carry
		carry = next
	}
	if carry != 0 {
		t[0] ^= 0x87
	}
}
