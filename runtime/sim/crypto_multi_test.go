package sim_test

import (
	"bytes"
	"crypto/aes"
	"fmt"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"golang.org/x/crypto/xts"
)

// The AES-XTS tests through the device API: a crypto mkey spanning many
// data units on the default simulated device (the multi-block engine),
// its output on the wire checked byte for byte against x/crypto/xts, a
// 128-bit reference on crypto/aes and IEEE Std 1619-2007's vectors.

const sigAfterCrypto = mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_AFTER_CRYPTO_ON_TX

// xtsKeys are an AES-128-XTS and an AES-256-XTS DEK's key1 || key2.
var xtsKeys = [][]byte{xtsPattern(32, 0x5a), xtsPattern(64, 0xc3)}

// xtsUnits encrypts src with x/crypto/xts, data unit i with sector
// first + i (x/crypto/xts's sector is the little-endian tweak's low 64
// bits, its high ones 0).
func xtsUnits(t *testing.T, key []byte, first uint64, unit int, src []byte) []byte {
	t.Helper()
	x, err := xts.NewCipher(aes.NewCipher, key)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, len(src))
	for u := 0; u*unit < len(src); u++ {
		end := min((u+1)*unit, len(src))
		x.Encrypt(out[u*unit:end], src[u*unit:end], first+uint64(u))
	}
	return out
}

// TestXTSMultiUnit: 4 × 512-byte and 2 × 4096-byte data units under one
// crypto mkey, with both key sizes: an RDMA WRITE puts on the wire each
// unit encrypted with the initial tweak plus its number; an RDMA READ of
// the ciphertext back through the mkey decrypts it into memory; a SEND
// out of the mkey and one into it do the same.
func TestXTSMultiUnit(t *testing.T) {
	r := newXTSRig(t, "sim:xts-multi", false)
	const tweak = 0x0123_4567_89ab_cd00
	for _, key := range xtsKeys {
		for _, tc := range []struct {
			unit  mlx.BlockSize
			bytes int
			units int
		}{{mlx.MLX5DV_BLOCK_SIZE_512, 512, 4}, {mlx.MLX5DV_BLOCK_SIZE_4096, 4096, 2}} {
			t.Run(fmt.Sprintf("AES-%d/%dx%d", len(key)*4, tc.units, tc.bytes), func(t *testing.T) {
				n := tc.units * tc.bytes
				plain := xtsPattern(n, byte(len(key)+tc.units))
				copy(r.mem.Bytes(), plain)
				clear(r.wire.Bytes())
				if err := r.configure(n, nil, r.cryptoAttr(key, true, sigAfterCrypto, tc.unit, tweak, 0)); err != nil {
					t.Fatal(err)
				}
				r.write(n)
				want := xtsUnits(t, key, tweak, tc.bytes, plain)
				if got := r.wire.Bytes()[:n]; !bytes.Equal(got, want) {
					t.Fatalf("the wire carried %s, want each data unit encrypted with tweak %#x + its number", xtsDiff(got, want, tc.bytes), uint64(tweak))
				}
				// Every unit's tweak is a step on from the last: unit 1
				// under unit 0's tweak would be other bytes.
				if same := xtsUnits(t, key, tweak, n, plain); bytes.Equal(same[tc.bytes:n], want[tc.bytes:]) {
					t.Fatal("the tweak did not change from data unit to data unit")
				}
				clear(r.mem.Bytes()[:n])
				r.read(n)
				if got := r.mem.Bytes()[:n]; !bytes.Equal(got, plain) {
					t.Fatalf("the READ back decrypted %s", xtsDiff(got, plain, tc.bytes))
				}
				// The same both ways with a SEND out of the mkey and one
				// into it.
				clear(r.wire.Bytes()[:n])
				if got := r.send(n); got != uint32(n) || !bytes.Equal(r.wire.Bytes()[:n], want) {
					t.Fatalf("SEND: %d bytes, %s", got, xtsDiff(r.wire.Bytes()[:n], want, tc.bytes))
				}
				clear(r.mem.Bytes()[:n])
				r.receive(n, n)
				if got := r.mem.Bytes()[:n]; !bytes.Equal(got, plain) {
					t.Fatalf("the SEND into the mkey decrypted %s", xtsDiff(got, plain, tc.bytes))
				}
			})
		}
	}
}

// TestXTSTweakCarry: an initial tweak whose low 64 bits are
// 0xffff_ffff_ffff_fffe, over 4 data units: units 2 and 3 take the tweak
// with the carry in its high 64 bits (high+1, low 0 and 1), as a 128-bit
// little-endian number incremented per unit. refXTS (crypto/aes) is the
// reference; where the tweak fits 64 bits it must agree with
// x/crypto/xts, so that it is not wrong the same way the device could be.
func TestXTSTweakCarry(t *testing.T) {
	r := newXTSRig(t, "sim:xts-carry", false)
	const lo, n = 0xffff_ffff_ffff_fffe, 4 * 512
	for _, key := range xtsKeys {
		for _, hi := range []uint64{0, 0x0102_0304_0506_0708} {
			t.Run(fmt.Sprintf("AES-%d/high-%#x", len(key)*4, hi), func(t *testing.T) {
				plain := xtsPattern(n, byte(hi)^byte(len(key)))
				want := refXTS(t, key, lo, hi, 512, plain)
				if hi == 0 && !bytes.Equal(want[:1024], xtsUnits(t, key, lo, 512, plain[:1024])) {
					t.Fatal("refXTS disagrees with x/crypto/xts below the carry")
				}
				copy(r.mem.Bytes(), plain)
				clear(r.wire.Bytes())
				if err := r.configure(n, nil, r.cryptoAttr(key, true, sigAfterCrypto, mlx.MLX5DV_BLOCK_SIZE_512, lo, hi)); err != nil {
					t.Fatal(err)
				}
				r.write(n)
				if got := r.wire.Bytes()[:n]; !bytes.Equal(got, want) {
					t.Fatalf("the wire carried %s", xtsDiff(got, want, 512))
				}
				// A tweak that wrapped in 64 bits, without the carry,
				// gives other bytes for units 2 and 3.
				if wrapped := refXTS(t, key, 0, hi, 512, plain[1024:]); bytes.Equal(wrapped, want[1024:]) {
					t.Fatal("the carry makes no difference: the test proves nothing")
				}
				clear(r.mem.Bytes()[:n])
				r.read(n)
				if !bytes.Equal(r.mem.Bytes()[:n], plain) {
					t.Fatalf("the READ back decrypted %s", xtsDiff(r.mem.Bytes()[:n], plain, 512))
				}
			})
		}
	}
}

// TestXTSIEEE1619: the standard's vectors as data units of one message.
// Vectors 4 and 5 are data units 0 and 1 under one AES-128 key (5's
// plaintext is 4's ciphertext): a 2-unit message from tweak 0 is their
// ciphertexts; a decrypting mkey (encrypt_on_tx false, row F) turns them
// back. Vector 10 (AES-256, sequence number 0xff) is unit 2 of a 4-unit
// message from tweak 0xfd, which also carries into the tweak's second
// byte at unit 3.
func TestXTSIEEE1619(t *testing.T) {
	v := ieee1619(t)
	v4, v5, v10 := v[4], v[5], v[10]
	if v4.seq != 0 || v5.seq != 1 || v10.seq != 0xff || len(v10.key) != 64 || len(v10.ptx) != 512 {
		t.Fatalf("the vectors are not the standard's 4, 5 and 10")
	}
	r := newXTSRig(t, "sim:xts-ieee", false)
	msg := append(append([]byte{}, v4.ptx...), v5.ptx...)
	ctx := append(append([]byte{}, v4.ctx...), v5.ctx...)
	copy(r.mem.Bytes(), msg)
	clear(r.wire.Bytes())
	if err := r.configure(1024, nil, r.cryptoAttr(v4.key, true, sigAfterCrypto, mlx.MLX5DV_BLOCK_SIZE_512, 0, 0)); err != nil {
		t.Fatal(err)
	}
	r.write(1024)
	if got := r.wire.Bytes()[:1024]; !bytes.Equal(got, ctx) {
		t.Fatalf("vectors 4+5 encrypted: %s", xtsDiff(got, ctx, 512))
	}
	copy(r.mem.Bytes(), ctx)
	clear(r.wire.Bytes())
	if err := r.configure(1024, nil, r.cryptoAttr(v4.key, false, sigAfterCrypto, mlx.MLX5DV_BLOCK_SIZE_512, 0, 0)); err != nil {
		t.Fatal(err)
	}
	r.write(1024)
	if got := r.wire.Bytes()[:1024]; !bytes.Equal(got, msg) {
		t.Fatalf("vectors 4+5 decrypted on TX: %s", xtsDiff(got, msg, 512))
	}

	msg = bytes.Repeat(v10.ptx, 4)
	copy(r.mem.Bytes(), msg)
	clear(r.wire.Bytes())
	if err := r.configure(2048, nil, r.cryptoAttr(v10.key, true, sigAfterCrypto, mlx.MLX5DV_BLOCK_SIZE_512, 0xfd, 0)); err != nil {
		t.Fatal(err)
	}
	r.write(2048)
	got := r.wire.Bytes()[:2048]
	if !bytes.Equal(got[1024:1536], v10.ctx) {
		t.Fatalf("vector 10 as data unit 2 from tweak 0xfd: %x..., want %x...", got[1024:1040], v10.ctx[:16])
	}
	if want := xtsUnits(t, v10.key, 0xfd, 512, msg); !bytes.Equal(got, want) {
		t.Fatalf("units 0, 1 and 3 around vector 10: %s", xtsDiff(got, want, 512))
	}
}

// xtsDiff describes where got first differs from want, by data unit.
func xtsDiff(got, want []byte, unit int) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("byte %d (data unit %d) %#02x, want %#02x", i, i/unit, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d bytes, want %d", len(got), len(want))
	}
	return "the same bytes"
}
