package sigblock

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

func tweak16(lo, hi uint64) [16]byte {
	var t [16]byte
	binary.LittleEndian.PutUint64(t[:8], lo)
	binary.LittleEndian.PutUint64(t[8:], hi)
	return t
}

// TestXTSWideIEEE1619: the 128-bit tweak path, run directly on each unit,
// gives the standard's vectors (whole blocks and ciphertext stealing).
func TestXTSWideIEEE1619(t *testing.T) {
	vs := ieee1619(t)
	for _, n := range []int{1, 2, 3, 4, 5, 10, 15, 16, 17, 18} {
		v := vs[n]
		x, err := NewXTS(v.key, 512)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(v.ptx))
		tw := tweak16(v.seq, 0)
		x.unitWide(got, v.ptx, &tw, false)
		if !bytes.Equal(got, v.ctx) {
			t.Errorf("vector %d: %x, want %x", n, got, v.ctx)
		}
		x.unitWide(got, got, &tw, true)
		if !bytes.Equal(got, v.ptx) {
			t.Errorf("vector %d: decrypt in place %x", n, got)
		}
	}
}

// TestXTSWideCarry: a job whose tweaks cross 2^64 takes the wide path for
// all its units: unit 0 equals x/crypto/xts's with tweak 2^64-1, unit 1
// the wide unit with tweak 2^64; tweaks in 64 bits give what Encrypt
// gives; and every job decrypts back.
func TestXTSWideCarry(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(rng.Uint32())
	}
	for _, unit := range []int{512, 520, 4096} {
		x, _ := NewXTS(key, unit)
		src := make([]byte, 2*unit+16)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		got := make([]byte, len(src))
		if err := x.EncryptWide(got, src, tweak16(^uint64(0), 0)); err != nil {
			t.Fatal(err)
		}
		want := make([]byte, unit)
		x.Encrypt(want, src[:unit], ^uint64(0))
		if !bytes.Equal(got[:unit], want) {
			t.Fatalf("unit %d: unit 0 differs from x/crypto/xts", unit)
		}
		tw := tweak16(0, 1)
		x.unitWide(want, src[unit:2*unit], &tw, false)
		if !bytes.Equal(got[unit:2*unit], want) {
			t.Fatalf("unit %d: unit 1 did not carry into the high half", unit)
		}
		back := make([]byte, len(src))
		if err := x.DecryptWide(back, got, tweak16(^uint64(0), 0)); err != nil || !bytes.Equal(back, src) {
			t.Fatalf("unit %d: decrypt %v", unit, err)
		}
		narrow := make([]byte, len(src))
		x.Encrypt(narrow, src, 77)
		if err := x.EncryptWide(got, src, tweak16(77, 0)); err != nil || !bytes.Equal(got, narrow) {
			t.Fatalf("unit %d: 64-bit tweaks differ from Encrypt", unit)
		}
		if err := x.EncryptWide(got, src[:unit-8], tweak16(1, 1)); err != ErrJobSize {
			t.Fatalf("unit %d: bad job size: %v", unit, err)
		}
	}
}
