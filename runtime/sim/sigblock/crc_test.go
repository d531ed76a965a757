package sigblock

import (
	"hash/crc32"
	"hash/crc64"
	"math/rand/v2"
	"testing"
)

var check = []byte("123456789")

// Published check values: the reveng CRC catalogue entries CRC-16/T10-DIF,
// CRC-32/ISO-HDLC, CRC-32/ISCSI and CRC-64/NVME (XP10's parameters).
func TestCRCCheckValues(t *testing.T) {
	if got := CRC16T10DIF(0, check); got != 0xD0DB {
		t.Errorf("CRC-16/T10-DIF = %#04x, want 0xd0db", got)
	}
	if got := CRC32IEEE(0xFFFFFFFF, check); got != 0xCBF43926 {
		t.Errorf("CRC-32 = %#08x, want 0xcbf43926", got)
	}
	if got := CRC32Castagnoli(0xFFFFFFFF, check); got != 0xE3069283 {
		t.Errorf("CRC-32C = %#08x, want 0xe3069283", got)
	}
	if got := CRC64XP10(^uint64(0), check); got != 0xAE8B14860A799888 {
		t.Errorf("CRC64_XP10 = %#016x, want 0xae8b14860a799888 (CRC-64/NVME)", got)
	}
	// RFC 1071 section 3's worked example: sum 0xddf2, checksum its complement.
	if got := IPChecksum(0, []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}); got != 0x220d {
		t.Errorf("IP checksum = %#04x, want 0x220d", got)
	}
}

// Go's hash/crc32 and hash/crc64 are the independent implementations: the
// seed is the register's starting value, which Go's Update takes
// complemented. crc64.MakeTable takes the reflected polynomial; XP10's is
// neither crc64.ISO nor crc64.ECMA, so the table is made from it.
func TestCRCAgainstGo(t *testing.T) {
	xp10 := crc64.MakeTable(0x9A6C9329AC4BC9B5)
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 5000)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for n := 0; n <= len(buf); n += 1 + n/3 {
		p := buf[len(buf)-n:]
		for _, s := range []uint32{0, 0xFFFFFFFF} {
			if got, want := CRC32IEEE(s, p), crc32.Update(^s, crc32.IEEETable, p); got != want {
				t.Errorf("CRC32 seed %#x len %d = %#x, hash/crc32 %#x", s, n, got, want)
			}
			if got, want := CRC32Castagnoli(s, p), crc32.Update(^s, castagnoli, p); got != want {
				t.Errorf("CRC32C seed %#x len %d = %#x, hash/crc32 %#x", s, n, got, want)
			}
		}
		for _, s := range []uint64{0, ^uint64(0)} {
			if got, want := CRC64XP10(s, p), crc64.Update(^s, xp10, p); got != want {
				t.Errorf("CRC64_XP10 seed %#x len %d = %#x, hash/crc64 %#x", s, n, got, want)
			}
		}
		for _, s := range []uint16{0, 0xFFFF} {
			if got, want := CRC16T10DIF(s, p), bitwiseT10(s, p); got != want {
				t.Errorf("CRC16 seed %#x len %d = %#x, bitwise %#x", s, n, got, want)
			}
			if got, want := IPChecksum(s, p), onesSum(s, p); got != want {
				t.Errorf("CSUM seed %#x len %d = %#x, word sum %#x", s, n, got, want)
			}
		}
	}
}

// bitwiseT10 is the T10-DIF CRC one bit at a time, without a table.
func bitwiseT10(r uint16, p []byte) uint16 {
	for _, b := range p {
		for i := 7; i >= 0; i-- {
			top := r>>15 ^ uint16(b>>i)&1
			r <<= 1
			if top != 0 {
				r ^= 0x8BB7
			}
		}
	}
	return r
}

// onesSum adds with an end-around carry after every word.
func onesSum(seed uint16, p []byte) uint16 {
	s := uint32(seed)
	for i := 0; i < len(p); i += 2 {
		w := uint32(p[i]) << 8
		if i+1 < len(p) {
			w |= uint32(p[i+1])
		}
		s += w
		s = s&0xFFFF + s>>16
	}
	return ^uint16(s)
}

func TestCRCTypeWidthAndSeed(t *testing.T) {
	for _, c := range []struct {
		t     CRCType
		width int
		seeds map[uint64]bool
	}{
		{TypeCRC32, 32, map[uint64]bool{0: true, 0xFFFFFFFF: true, 0xFFFFFFFF00000000: true, 1: false, ^uint64(0): true}},
		{TypeCRC32C, 32, map[uint64]bool{0: true, 0xFFFFFFFF: true, 0x7FFFFFFF: false}},
		{TypeCRC64XP10, 64, map[uint64]bool{0: true, ^uint64(0): true, 0xFFFFFFFF: false}},
		{CRCType(3), 0, nil},
	} {
		if got := c.t.Width(); got != c.width {
			t.Errorf("%v width %d, want %d", c.t, got, c.width)
		}
		for seed, ok := range c.seeds {
			if _, got := c.t.Seed(seed); got != ok {
				t.Errorf("%v seed %#x supported %v, want %v", c.t, seed, got, ok)
			}
		}
	}
	if got := TypeCRC32.Sum(0xFFFFFFFF, check); got != 0xCBF43926 {
		t.Errorf("CRC32.Sum = %#x", got)
	}
	if got := CRCType(9).String(); got != "CRC type 9" {
		t.Errorf("String = %q", got)
	}
}
