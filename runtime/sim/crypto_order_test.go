package sim_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
)

// The rows of mlx5dv_wr_set_mkey_crypto(3)'s signature_crypto_order and
// encrypt_on_tx table with messages of several data units, through the
// device API: row B (crypto on the memory side: the memory data
// encrypted, then a CRC32 of each encrypted block added on the wire) and
// row C (crypto on the wire side: a CRC32 of each plaintext block added,
// then data and CRCs encrypted together).

// wireCRC32 is a wire domain of 512-byte blocks, each followed by its
// CRC32 (hash/crc32's IEEE CRC with the all-ones seed, stored
// big-endian), every byte of it checked.
func wireCRC32() *mlx.SigBlockAttr {
	d := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	d.SetSigCRC(&mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32, Seed: 0xffffffff})
	return &mlx.SigBlockAttr{Wire: d, CheckMask: uint8(mlx.MLX5DV_SIG_MASK_CRC32)}
}

// wireWithCRC32 interleaves data's 512-byte blocks with their CRC32s,
// least significant byte first as the device stores them.
func wireWithCRC32(data []byte) []byte {
	var out []byte
	for i := 0; i < len(data); i += 512 {
		out = binary.LittleEndian.AppendUint32(append(out, data[i:i+512]...), crc32.ChecksumIEEE(data[i:i+512]))
	}
	return out
}

// TestXTSRowBMultiUnit: row B (encrypt_on_tx, SIGNATURE_AFTER_CRYPTO_ON_TX)
// over 4 data units. The peer's RDMA READ of the mkey carries each unit
// encrypted (tweak + its number) followed by the CRC32 of the
// ciphertext; its RDMA WRITE of that back checks the CRCs and decrypts
// into memory. A ciphertext byte flipped on the wire fails unit 2's CRC,
// which mlx5dv_mkey_check reports at unit 2's wire offset. (The peer
// names the mkey as an rkey, with wire lengths, so that no local
// scatter/gather length through a signature mkey is involved.)
func TestXTSRowBMultiUnit(t *testing.T) {
	r := newXTSRig(t, "sim:xts-row-b", true)
	const tweak, n, wireN = 0x5500, 4 * 512, 4 * 516
	key := xtsKeys[0]
	plain := xtsPattern(n, 0xb0)
	copy(r.mem.Bytes(), plain)
	clear(r.wire.Bytes())
	if err := r.configure(n, wireCRC32(), r.cryptoAttr(key, true, sigAfterCrypto, mlx.MLX5DV_BLOCK_SIZE_512, tweak, 0)); err != nil {
		t.Fatal(err)
	}
	r.remoteRead(wireN)
	want := wireWithCRC32(xtsUnits(t, key, tweak, 512, plain))
	if got := r.wire.Bytes()[:wireN]; !bytes.Equal(got, want) {
		t.Fatalf("row B: the wire is not enc(data)+CRC32 per unit: %s", xtsDiff(got, want, 516))
	}
	r.checkMkey(cq.MkeyErr{Type: mlx.MLX5DV_MKEY_NO_ERR}, "row B read")
	clear(r.mem.Bytes()[:n])
	r.remoteWrite(wireN)
	if !bytes.Equal(r.mem.Bytes()[:n], plain) {
		t.Fatalf("row B: the WRITE back decrypted %s", xtsDiff(r.mem.Bytes()[:n], plain, 512))
	}
	r.checkMkey(cq.MkeyErr{Type: mlx.MLX5DV_MKEY_NO_ERR}, "row B write")
	unit2 := r.wire.Bytes()[2*516 : 2*516+512]
	unit2[7] ^= 0x40
	r.remoteWrite(wireN)
	r.checkMkey(cq.MkeyErr{Type: mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD, Expected: uint64(binary.LittleEndian.Uint32(want[2*516+512:])),
		Actual: uint64(crc32.ChecksumIEEE(unit2)), Offset: 2 * 516}, "row B write of a corrupted unit")
}

// TestXTSRowCMultiUnit: row C (encrypt_on_tx,
// SIGNATURE_BEFORE_CRYPTO_ON_TX) over 4 memory data units: the peer's
// RDMA READ of the mkey carries data+CRC32 per block, 2064 bytes,
// encrypted in wire data units of 512 bytes, the fifth a 16-byte
// remainder under tweak + 4 (valid by the man page's job_size rule 2);
// its RDMA WRITE of that back is decrypted, checked and stripped into
// memory.
func TestXTSRowCMultiUnit(t *testing.T) {
	r := newXTSRig(t, "sim:xts-row-c", true)
	const tweak, n, wireN = 0xc0ffee, 4 * 512, 4 * 516
	key := xtsKeys[1]
	plain := xtsPattern(n, 0xc0)
	copy(r.mem.Bytes(), plain)
	clear(r.wire.Bytes())
	before := mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_BEFORE_CRYPTO_ON_TX
	if err := r.configure(n, wireCRC32(), r.cryptoAttr(key, true, before, mlx.MLX5DV_BLOCK_SIZE_512, tweak, 0)); err != nil {
		t.Fatal(err)
	}
	r.remoteRead(wireN)
	want := xtsUnits(t, key, tweak, 512, wireWithCRC32(plain))
	if got := r.wire.Bytes()[:wireN]; !bytes.Equal(got, want) {
		t.Fatalf("row C: the wire is not enc(data+CRC32): %s", xtsDiff(got, want, 512))
	}
	r.checkMkey(cq.MkeyErr{Type: mlx.MLX5DV_MKEY_NO_ERR}, "row C read")
	clear(r.mem.Bytes()[:n])
	r.remoteWrite(wireN)
	if !bytes.Equal(r.mem.Bytes()[:n], plain) {
		t.Fatalf("row C: the WRITE into the mkey left %s", xtsDiff(r.mem.Bytes()[:n], plain, 512))
	}
	r.checkMkey(cq.MkeyErr{Type: mlx.MLX5DV_MKEY_NO_ERR}, "row C write")
}

// checkMkey fails the test unless mlx5dv_mkey_check on the rig's mkey
// says want, after polling a's receive CQ: the signature error of a
// transfer the peer started through the mkey comes there, on no work
// request.
func (r *xtsRig) checkMkey(want cq.MkeyErr, what string) {
	r.t.Helper()
	if n, err := r.rcq.Poll(make([]cq.WC, 1)); n != 0 || err != nil {
		r.t.Fatalf("%s: a's receive CQ gave %d completions, %v", what, n, err)
	}
	e, err := r.mk.Check()
	if err != nil || e != want {
		r.t.Fatalf("%s: mkey check %+v (%v), want %+v", what, e, err, want)
	}
}
