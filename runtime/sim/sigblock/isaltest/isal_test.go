//go:build isal && cgo

package isaltest

import (
	"math/rand/v2"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/sim/sigblock"
)

// TestISALCheckValues pins how ISA-L's entry points relate to the
// catalogue CRCs, so the random comparison below compares like with like.
func TestISALCheckValues(t *testing.T) {
	p := []byte("123456789")
	if got := CRC16T10DIF(0, p); got != 0xD0DB {
		t.Errorf("crc16_t10dif = %#x, want 0xd0db", got)
	}
	if got := ^CRC32ISCSI(0xFFFFFFFF, p); got != 0xE3069283 {
		t.Errorf("~crc32_iscsi = %#x, want 0xe3069283", got)
	}
	if got := CRC32GzipRefl(0, p); got != 0xCBF43926 {
		t.Errorf("crc32_gzip_refl = %#x, want 0xcbf43926", got)
	}
}

// TestISALRandom compares random buffers of many lengths (every length to
// 600, then the block sizes and beyond) with both supported seeds.
func TestISALRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	buf := make([]byte, 9000)
	var lengths []int
	for n := 0; n <= 600; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 512+8, 520, 1024, 4048, 4096, 4160, 4104, 8192, 8999, 9000)
	for _, n := range lengths {
		for i := range buf[:n] {
			buf[i] = byte(rng.Uint32())
		}
		p := buf[:n]
		for _, s := range []uint16{0, 0xFFFF} {
			if got, want := sigblock.CRC16T10DIF(s, p), CRC16T10DIF(s, p); got != want {
				t.Fatalf("CRC16 seed %#x len %d: %#x, ISA-L %#x", s, n, got, want)
			}
		}
		for _, s := range []uint32{0, 0xFFFFFFFF} {
			if got, want := sigblock.CRC32Castagnoli(s, p), ^CRC32ISCSI(s, p); got != want {
				t.Fatalf("CRC32C seed %#x len %d: %#x, ISA-L %#x", s, n, got, want)
			}
			if got, want := sigblock.CRC32IEEE(s, p), CRC32GzipRefl(^s, p); got != want {
				t.Fatalf("CRC32 seed %#x len %d: %#x, ISA-L %#x", s, n, got, want)
			}
		}
	}
}
