package sim_test

import (
	"bytes"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// TestDEKKeytag: a DEK created with DEKConfig.Keytag (and other opaque
// bytes) serves a crypto mkey naming that keytag, and faults the transfer
// of one naming the opaque bytes instead.
func TestDEKKeytag(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:dek-keytag"))
	defer c.Close()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	q := devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	cfg := device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 8, MaxSendSGE: 1, MaxInlineData: 256,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE}
	a := devicetest.Must[*device.QP](t, "CreateQP")(pd.CreateQP(cfg))
	b := devicetest.Must[*device.QP](t, "CreateQP")(pd.CreateQP(cfg))
	devicetest.ConnectPair(t, a, b)
	src, dst := devicetest.MRPair(t, pd, 512)
	dcfg := device.DEKConfig{KeySize: mlx.MLX5DV_CRYPTO_KEY_SIZE_128, Key: bytes.Repeat([]byte{0x3c}, 32), HasKeytag: true}
	copy(dcfg.Keytag[:], "keytag01")
	copy(dcfg.Opaque[:], "opaque01")
	dek := devicetest.Must[*device.DEK](t, "CreateDEK")(pd.CreateDEK(dcfg))
	mk := devicetest.Must[*device.Mkey](t, "CreateMkey")(pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, 1))
	for i, tc := range []struct {
		tag  [8]byte
		want cq.Status
	}{{dcfg.Keytag, cq.Success}, {dcfg.Opaque, cq.LocProtErr}} {
		attr := &mlx.CryptoAttr{CryptoStandard: mlx.MLX5DV_CRYPTO_STANDARD_AES_XTS, EncryptOnTx: true,
			SignatureCryptoOrder: mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_AFTER_CRYPTO_ON_TX,
			DataUnitSize:         mlx.MLX5DV_BLOCK_SIZE_512, DEK: unsafe.Pointer(dek.DEK()), Keytag: tc.tag}
		s := a.SQ()
		s.SetWRID(uint64(10 * i))
		s.SetWRFlags(mlx.IBV_SEND_SIGNALED | mlx.IBV_SEND_INLINE)
		if err := firstErr(s.Start(), s.MkeyConfigure(mk.Mkey(), 3, &mlx.MkeyConfAttr{}), s.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE),
			s.SetMkeyLayoutList([]mlx.SGE{{Addr: src.Addr, Length: 512, LKey: src.LKey}}), s.SetMkeyCrypto(attr), s.Complete()); err != nil {
			t.Fatal(err)
		}
		if wc := devicetest.PollOne(t, q); wc.Status != cq.Success {
			t.Fatalf("keytag %q: mkey configure: %v", tc.tag, wc.Status)
		}
		s.SetWRID(uint64(10*i + 1))
		s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		if err := firstErr(s.Start(), s.RDMAWrite(dst.RKey, dst.Addr), s.SetSGE(mk.LKey(), 0, 512), s.Complete()); err != nil {
			t.Fatal(err)
		}
		if wc := devicetest.PollOne(t, q); wc.Status != tc.want {
			t.Fatalf("keytag %q: write through the mkey: %v, want %v", tc.tag, wc.Status, tc.want)
		}
	}
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
