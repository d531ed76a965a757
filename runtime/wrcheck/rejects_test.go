package wrcheck_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/vectors"
	"github.com/mlx5gen/mlx5gen/runtime/wrcheck"
)

// stricter lists the rejects.json cases libmlx5 accepts although the man
// page forbids them: the state machine rejects them, with these rules.
var stricter = map[string]string{
	"misuse_dci_missing_dc_addr": "wr_post.dc_addr_required",
	"misuse_mkey_fewer_setters":  "mkey_configure.num_setters",
}

// TestRejects replays every case of testdata/vectors/rejects.json through
// the validators and the state machine alone: each must be rejected with
// the errno libmlx5 returns (or, for the accepted misuses, with the rule we
// enforce instead).
func TestRejects(t *testing.T) {
	f, err := vectors.Load("../../testdata/vectors/rejects.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 38 {
		t.Errorf("%d cases, want 38", len(f.Cases))
	}
	for _, cs := range f.Cases {
		t.Run(cs.ID, func(t *testing.T) {
			var got error
			for _, b := range cs.Result.Batches {
				if err := replayChecks(t, &cs, b); err != nil && got == nil {
					got = err
				}
			}
			want := cs.Result.Batches[len(cs.Result.Batches)-1].Return
			if id, ok := stricter[cs.ID]; ok {
				var re *mlx.RuleError
				if !errors.As(got, &re) || re.Rule != id || !errors.Is(got, syscall.EINVAL) {
					t.Fatalf("libmlx5 accepts this misuse; we must reject it with rule %s (EINVAL), got %v", id, got)
				}
				return
			}
			if !errors.Is(got, syscall.Errno(want)) {
				t.Fatalf("got %v, want errno %d (%s)", got, want, syscall.Errno(want))
			}
			var re *mlx.RuleError
			if !errors.As(got, &re) {
				t.Fatalf("%v is not a *RuleError", got)
			}
			t.Logf("%s: %v", cs.ID, got)
		})
	}
}

// replayChecks runs the calls of one batch of a vector case and returns
// the batch's error.
func replayChecks(t *testing.T, cs *vectors.Case, b vectors.Batch) error {
	s := &cs.Setup
	qp := &wrcheck.QP{
		Type: mlx.QPRC, SendOps: s.Caps.SendOps.Value, MlxSendOps: s.Caps.Mlx5SendOps.Value,
		MaxInlineData: s.SQ.MaxInlineData, MaxSendSGE: s.SQ.MaxGS, MaxPost: s.SQ.MaxPost,
		MaxMemcpy: s.Device.DMAMMOMaxSize, MkeyTagSupported: s.Device.MkeyUpdateTagSupported,
		CryptoSingleBlock: s.Device.CryptoEngines.Value&uint64(mlx.MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS_SINGLE_BLOCK) != 0,
		CryptoMultiBlock:  s.Device.CryptoEngines.Value&uint64(mlx.MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS_MULTI_BLOCK) != 0,
	}
	if s.DCI() {
		qp.Type = mlx.QPDCI
	}
	mkeys := map[string]*wrcheck.Mkey{}
	for _, m := range s.Mkeys {
		flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
		if m.Signature != nil {
			flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
		}
		if m.Crypto != nil {
			flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
		}
		mk := wrcheck.NewMkey(m.Lkey, flags, m.MaxEntries)
		mk.NumDesc = m.NumDesc
		mkeys[m.Name] = mk
	}
	c := wrcheck.New(qp)
	var wrFlags uint32
	for _, call := range cs.Calls[b.Calls[0] : b.Calls[1]+1] {
		if err := jsonCall(t, c, mkeys, &wrFlags, call); err != nil {
			return err
		}
	}
	return nil
}

// jargs reads vector arguments, failing the test on malformed ones.
type jargs struct {
	t *testing.T
	a vectors.Args
}

func (j jargs) has(k string) bool { return j.a != nil && j.a.Has(k) }

func (j jargs) u(k string) uint64 {
	if !j.has(k) {
		return 0
	}
	v, err := j.a.Uint(k)
	if err != nil {
		j.t.Fatalf("%s: %v", k, err)
	}
	return v
}

func (j jargs) s(k string) string {
	v, err := j.a.String(k)
	if err != nil {
		j.t.Fatalf("%s: %v", k, err)
	}
	return v
}

func (j jargs) o(k string) jargs {
	if !j.has(k) {
		return jargs{t: j.t}
	}
	v, err := j.a.Object(k)
	if err != nil {
		j.t.Fatalf("%s: %v", k, err)
	}
	return jargs{j.t, v}
}

func (j jargs) l(k string) []jargs {
	v, err := j.a.List(k)
	if err != nil {
		j.t.Fatalf("%s: %v", k, err)
	}
	out := make([]jargs, len(v))
	for i := range v {
		out[i] = jargs{j.t, v[i]}
	}
	return out
}

func jsonCall(t *testing.T, c *wrcheck.Chain, mkeys map[string]*wrcheck.Mkey, wrFlags *uint32, call vectors.Call) error {
	a := jargs{t, vectors.Args(call.Args)}
	u := a.u
	fn := func() mlx.Func {
		for i := range mlx.Funcs {
			if mlx.Funcs[i].Name == call.Fn {
				return mlx.Func(i)
			}
		}
		t.Fatalf("no function %s", call.Fn)
		return 0
	}
	switch call.Fn {
	case "ibv_wr_start":
		return c.Start()
	case "ibv_wr_complete":
		_, err := c.Complete(mlx.FnIbvWrComplete)
		return err
	case "ibv_wr_abort":
		c.Abort()
		return nil
	case "ibv_qp_ex.wr_flags":
		*wrFlags = uint32(u("value"))
		return nil
	case "ibv_qp_ex.wr_id":
		return nil
	}
	if strings.HasPrefix(call.Fn, "(simulated)") {
		return nil
	}
	f := fn()
	mkey := func() *wrcheck.Mkey { return mkeys[a.s("mkey")] }
	sum := func(list, field string) (int, uint64) {
		l := a.l(list)
		var s uint64
		for _, e := range l {
			s += e.u(field)
		}
		return len(l), s
	}
	switch call.Fn {
	case "mlx5dv_wr_mkey_configure":
		attr := &mlx.Mlx5dvMkeyConfAttr{}
		if o := a.o("attr"); o.a != nil {
			attr.ConfFlags = mlx.Mlx5dvMkeyConfFlags(o.u("conf_flags"))
			attr.CompMask = o.u("comp_mask")
		}
		return c.MkeyConfigure(f, *wrFlags, mkey(), int(u("num_setters")), attr)
	case "mlx5dv_wr_mr_list":
		n, l := sum("sge", "length")
		return c.MR(f, *wrFlags, mkey(), uint32(u("access_flags")), n, l, false)
	case "mlx5dv_wr_mr_interleaved":
		n, l := sum("data", "bytes_count")
		return c.MR(f, *wrFlags, mkey(), uint32(u("access_flags")), n, u("repeat_count")*l, true)
	case "mlx5dv_wr_memcpy":
		return c.Memcpy(f, *wrFlags, u("length"))
	case "mlx5dv_wr_raw_wqe":
		wqe, err := a.a.Hex("wqe_hex")
		if err != nil {
			t.Fatal(err)
		}
		return c.RawWQE(f, *wrFlags, wqe)
	case "mlx5dv_wr_set_mkey_access_flags":
		return c.MkeyAccess(f, uint32(u("access_flags")))
	case "mlx5dv_wr_set_mkey_layout_list":
		n, l := sum("sge", "length")
		return c.MkeyLayout(f, n, l, false)
	case "mlx5dv_wr_set_mkey_layout_interleaved":
		n, l := sum("data", "bytes_count")
		return c.MkeyLayout(f, n, u("repeat_count")*l, true)
	case "mlx5dv_wr_set_mkey_sig_block":
		return c.MkeySigBlock(f, sigAttr(a.o("attr")))
	case "mlx5dv_wr_set_mkey_crypto":
		return c.MkeyCrypto(f, cryptoAttr(a.o("attr")))
	case "ibv_wr_set_sge":
		return c.Data(f, 1, 0)
	case "ibv_wr_set_sge_list":
		return c.Data(f, len(a.l("sg_list")), 0)
	case "ibv_wr_set_inline_data":
		return c.Data(f, 0, int(u("length")))
	case "ibv_wr_set_inline_data_list":
		_, l := sum("buf_list", "length")
		return c.Data(f, 0, int(l))
	case "mlx5dv_wr_set_dc_addr":
		return c.DCAddr(f, -1)
	case "mlx5dv_wr_set_dc_addr_stream":
		return c.DCAddr(f, int(u("stream_id")))
	}
	if mlx.Funcs[f].Kind == mlx.KindBuilder {
		return c.Builder(f, *wrFlags)
	}
	return fmt.Errorf("the rejects driver does not know %s", call.Fn)
}

var opaque [8]byte

func sigDomain(o jargs) *mlx.Mlx5dvSigBlockDomain {
	if o.a == nil {
		return nil
	}
	d := &mlx.Mlx5dvSigBlockDomain{
		SigType:   mlx.Mlx5dvSigType(o.u("sig_type")),
		BlockSize: mlx.Mlx5dvBlockSize(o.u("block_size")),
		CompMask:  o.u("comp_mask"),
	}
	sig := o.o("sig")
	if dif := sig.o("t10dif"); dif.a != nil {
		d.SetSigDif(&mlx.Mlx5dvSigT10dif{
			BgType: mlx.Mlx5dvSigT10difBgType(dif.u("bg_type")),
			Bg:     uint16(dif.u("bg")),
			AppTag: uint16(dif.u("app_tag")),
			RefTag: uint32(dif.u("ref_tag")),
			Flags:  uint16(dif.u("flags")),
		})
	}
	if crc := sig.o("crc"); crc.a != nil {
		d.SetSigCrc(&mlx.Mlx5dvSigCrc{Type: mlx.Mlx5dvSigCrcType(crc.u("type")), Seed: crc.u("seed")})
	}
	return d
}

func sigAttr(o jargs) *mlx.Mlx5dvSigBlockAttr {
	return &mlx.Mlx5dvSigBlockAttr{
		Mem:       sigDomain(o.o("mem")),
		Wire:      sigDomain(o.o("wire")),
		Flags:     mlx.Mlx5dvSigBlockAttrFlags(o.u("flags")),
		CheckMask: uint8(o.u("check_mask")),
		CopyMask:  uint8(o.u("copy_mask")),
		CompMask:  o.u("comp_mask"),
	}
}

func cryptoAttr(o jargs) *mlx.Mlx5dvCryptoAttr {
	a := &mlx.Mlx5dvCryptoAttr{
		CryptoStandard:       mlx.Mlx5dvCryptoStandard(o.u("crypto_standard")),
		EncryptOnTx:          o.u("encrypt_on_tx") != 0,
		SignatureCryptoOrder: mlx.Mlx5dvSignatureCryptoOrder(o.u("signature_crypto_order")),
		DataUnitSize:         mlx.Mlx5dvBlockSize(o.u("data_unit_size")),
		CompMask:             o.u("comp_mask"),
	}
	if o.has("dek") {
		a.Dek = unsafe.Pointer(&opaque)
	}
	return a
}
