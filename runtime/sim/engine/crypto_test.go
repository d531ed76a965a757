package engine_test

import (
	"bytes"
	"crypto/aes"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
	"golang.org/x/crypto/xts"
)

// TestCryptoRoundTrip: a's crypto mkey (AES-XTS, a DEK, one 512-byte data
// unit, encrypt on TX) over plaintext: an RDMA WRITE through it puts
// ciphertext in b's plain buffer, and an RDMA READ of that ciphertext back
// through the mkey decrypts it into a's memory. A DEK destroyed under the
// mkey makes the next transfer fail.
func TestCryptoRoundTrip(t *testing.T) {
	f, a, b := pair(t, defaults)
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
	f.Lock()
	key, err := a.d.Mkeys().Create(a.pd, flags, 2)
	dekKey := bytes.Repeat([]byte{0x5a, 0xa5, 0x11}, 22)[:64]
	dek, err2 := a.d.Mkeys().CreateDEK(dekKey, nil)
	f.Unlock()
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	mk := sq.NewMkey(key, flags, 2)
	sdek := &sq.DEK{ObjectID: dek}
	attr := &mlx.CryptoAttr{CryptoStandard: mlx.MLX5DV_CRYPTO_STANDARD_AES_XTS, EncryptOnTx: true,
		SignatureCryptoOrder: mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_AFTER_CRYPTO_ON_TX,
		DataUnitSize:         mlx.MLX5DV_BLOCK_SIZE_512, DEK: unsafe.Pointer(sdek)}
	attr.InitialTweak[0] = 7
	a.post(1, mlx.IBV_SEND_SIGNALED|mlx.IBV_SEND_INLINE, func(q *sq.SQ) error {
		return firstErr(q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{}), q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE),
			q.SetMkeyLayoutList([]mlx.SGE{{Addr: a.addr(0), Length: 512, LKey: a.key}}), q.SetMkeyCrypto(attr))
	})
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success {
		t.Fatalf("mkey configure: %+v", wc)
	}
	plain := make([]byte, 512)
	for i := range plain {
		plain[i] = byte(i % 251)
	}
	copy(a.data.Bytes, plain)
	a.post(2, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMAWrite(b.key, b.addr(0)); return q.SetSGE(key, 0, 512) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success {
		t.Fatalf("write: %+v", wc)
	}
	ct := b.data.Bytes[:512]
	x, err := xts.NewCipher(aes.NewCipher, dekKey)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 512)
	x.Encrypt(want, plain, 7) // data unit 7: the initial tweak, little-endian (IEEE 1619)
	if !bytes.Equal(ct, want) {
		t.Fatalf("the wire carried % x..., want AES-XTS ciphertext % x...", ct[:16], want[:16])
	}
	clear(a.data.Bytes[:512])
	a.post(3, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMARead(b.key, b.addr(0)); return q.SetSGE(key, 0, 512) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success || !bytes.Equal(a.data.Bytes[:512], plain) {
		t.Fatalf("read back: %+v, plaintext %v", wc, bytes.Equal(a.data.Bytes[:512], plain))
	}
	f.Lock()
	a.d.Mkeys().DestroyDEK(dek)
	f.Unlock()
	a.post(4, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMAWrite(b.key, b.addr(0)); return q.SetSGE(key, 0, 512) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.LocProtErr {
		t.Fatalf("with the DEK gone: %+v", wc)
	}
}
