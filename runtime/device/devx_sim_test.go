package device_test

import (
	"bytes"
	"crypto/aes"
	"errors"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// TestDevxSimCaps: the simulator is a DEVX backend with PD numbers, so
// the API makes its signature and crypto mkeys and DEKs by command; the
// capabilities its QUERY_HCA_CAP pages report agree with those Info
// reports (mlx5dv_query_device's view).
func TestDevxSimCaps(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:devx-caps"))
	defer c.Close()
	if _, ok := device.BackendOf(c).(device.DevxBackend); !ok {
		t.Fatal("the simulator's context is not a device.DevxBackend")
	}
	h, err := c.HCACaps()
	if err != nil {
		t.Fatal(err)
	}
	caps := c.Caps()
	if h.BlockSignature != caps.Signature || h.AESXTSMultiBlock != caps.CryptoMultiBlock || h.AESXTSSingleBlock != caps.CryptoSingleBlock ||
		!h.DEKObjects || h.WrappedImportOnly {
		t.Errorf("HCACaps %+v disagree with Caps %+v", h, caps)
	}
}

// TestDevxSimXTS: an AES-XTS RDMA WRITE and READ through a crypto mkey
// and a DEK the API created by DEVX command on the simulator, with the
// public API only: the wire holds the IEEE 1619 ciphertext of the memory
// (key1 then key2, the tweak 0 for the one 512-byte data unit), and
// reading it back through the mkey decrypts it.
func TestDevxSimXTS(t *testing.T) {
	const n = 512
	memBuf, wireBuf := devicetest.Buffer(t, n), devicetest.Buffer(t, n)
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:devx-xts"))
	t.Cleanup(func() { c.Close() })
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	q := devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	cfg := device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 8, MaxSendSGE: 1, MaxInlineData: 256,
		SendOps:    mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_READ,
		MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE}
	a := devicetest.Must[*device.QP](t, "CreateQP a")(pd.CreateQP(cfg))
	b := devicetest.Must[*device.QP](t, "CreateQP b")(pd.CreateQP(cfg))
	devicetest.ConnectPair(t, a, b)
	all := mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_WRITE | mlx.IBV_ACCESS_REMOTE_READ
	mem := devicetest.Must[*device.MR](t, "RegMR mem")(pd.RegMR(memBuf, all))
	wire := devicetest.Must[*device.MR](t, "RegMR wire")(pd.RegMR(wireBuf, all))
	mk := devicetest.Must[*device.Mkey](t, "CreateMkey")(pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, 1))
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(0x11 * (i + 1))
	}
	dek := devicetest.Must[*device.DEK](t, "CreateDEK")(pd.CreateDEK(device.DEKConfig{KeySize: mlx.MLX5DV_CRYPTO_KEY_SIZE_128, Key: key}))
	plain := make([]byte, n)
	for i := range plain {
		plain[i] = byte(i*13 + 1)
	}
	copy(memBuf, plain)

	s := a.SQ()
	s.SetWRID(1)
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED | mlx.IBV_SEND_INLINE)
	crypto := &mlx.CryptoAttr{CryptoStandard: mlx.MLX5DV_CRYPTO_STANDARD_AES_XTS, EncryptOnTx: true,
		DataUnitSize: mlx.MLX5DV_BLOCK_SIZE_512, DEK: unsafe.Pointer(dek.DEK())}
	err := errors.Join(s.Start(), s.MkeyConfigure(mk.Mkey(), 3, &mlx.MkeyConfAttr{}), s.SetMkeyAccessFlags(all),
		s.SetMkeyLayoutList([]mlx.SGE{{Addr: mem.Addr, Length: n, LKey: mem.LKey}}), s.SetMkeyCrypto(crypto), s.Complete())
	if err != nil {
		t.Fatal(err)
	}
	wantSuccess(t, q, 1)
	post := func(wrid uint64, op func() error) {
		s.SetWRID(wrid)
		s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		if err := errors.Join(s.Start(), op(), s.SetSGE(mk.LKey(), 0, n), s.Complete()); err != nil {
			t.Fatal(err)
		}
		wantSuccess(t, q, wrid)
	}
	post(2, func() error { return s.RDMAWrite(wire.RKey, wire.Addr) })
	if want := xtsEncrypt(t, key, plain); !bytes.Equal(wireBuf, want) {
		t.Fatalf("the wire holds\n% x\nwant the AES-XTS ciphertext\n% x", wireBuf[:32], want[:32])
	}
	clear(memBuf)
	post(3, func() error { return s.RDMARead(wire.RKey, wire.Addr) })
	if !bytes.Equal(memBuf, plain) {
		t.Fatalf("read back through the mkey: % x, want % x", memBuf[:32], plain[:32])
	}
}

func wantSuccess(t *testing.T, q *device.CQ, wrid uint64) {
	t.Helper()
	if wc := devicetest.PollOne(t, q); wc.WRID != wrid || wc.Status != cq.Success {
		t.Fatalf("completion %d %v, want %d success", wc.WRID, wc.Status, wrid)
	}
}

// xtsEncrypt is IEEE 1619 XTS-AES of one data unit, tweak 0: the tweak
// AES_key2(0) is multiplied by x in GF(2^128) (little-endian) after each
// 16-byte block encrypted with key1.
func xtsEncrypt(t *testing.T, key, p []byte) []byte {
	k1, err1 := aes.NewCipher(key[:len(key)/2])
	k2, err2 := aes.NewCipher(key[len(key)/2:])
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	var tw [16]byte
	k2.Encrypt(tw[:], tw[:])
	out := make([]byte, len(p))
	for off := 0; off < len(p); off += 16 {
		var x [16]byte
		for i := range x {
			x[i] = p[off+i] ^ tw[i]
		}
		k1.Encrypt(x[:], x[:])
		for i := range x {
			out[off+i] = x[i] ^ tw[i]
		}
		carry := tw[15] >> 7
		for i := 15; i > 0; i-- {
			tw[i] = tw[i]<<1 | tw[i-1]>>7
		}
		tw[0] = tw[0]<<1 ^ 0x87*carry
	}
	return out
}
