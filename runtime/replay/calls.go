package replay

import (
	"fmt"
	"strings"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
	"github.com/mlx5gen/mlx5gen/runtime/vectors"
)

// args reads a call's arguments; the first malformed one is kept in err.
type args struct {
	a   vectors.Args
	err *error
}

func (a args) fail(name string, err error) {
	if *a.err == nil {
		*a.err = fmt.Errorf("argument %s: %w", name, err)
	}
}

func (a args) u(name string) uint64 {
	if a.a == nil || !a.a.Has(name) {
		a.fail(name, fmt.Errorf("missing"))
		return 0
	}
	v, err := a.a.Uint(name)
	if err != nil {
		a.fail(name, err)
	}
	return v
}

// opt reads an optional number (0 when absent).
func (a args) opt(name string) uint64 {
	if a.a == nil || !a.a.Has(name) {
		return 0
	}
	return a.u(name)
}

func (a args) s(name string) string {
	v, err := a.a.String(name)
	if err != nil {
		a.fail(name, err)
	}
	return v
}

func (a args) hex(name string) []byte {
	v, err := a.a.Hex(name)
	if err != nil {
		a.fail(name, err)
	}
	return v
}

// o reads an object; ok is false for an absent or null one.
func (a args) o(name string) (args, bool) {
	if a.a == nil || !a.a.Has(name) {
		return args{err: a.err}, false
	}
	v, err := a.a.Object(name)
	if err != nil {
		a.fail(name, err)
	}
	return args{v, a.err}, true
}

func (a args) l(name string) []args {
	v, err := a.a.List(name)
	if err != nil {
		a.fail(name, err)
	}
	out := make([]args, len(v))
	for i := range v {
		out[i] = args{v[i], a.err}
	}
	return out
}

// call makes one call of a case. A call the writer rejects is not an
// error here (the batch's result is compared); a call the replay cannot
// make is.
func (r *run) call(c *vectors.Call) (err error) {
	a := args{vectors.Args(c.Args), &err}
	q := r.q
	switch c.Fn {
	case "ibv_wr_start":
		if e := q.Start(); e != nil {
			return e
		}
		return nil
	case "ibv_wr_complete":
		r.completeErr = q.Complete()
		return nil
	case "ibv_wr_abort":
		q.Abort()
		return nil
	case "ibv_qp_ex.wr_id":
		q.SetWRID(a.u("value"))
		return err
	case "ibv_qp_ex.wr_flags":
		q.SetWRFlags(mlx.IbvSendFlags(a.u("value")))
		return err
	case "(simulated) all outstanding send completions polled":
		return q.Completed(q.Outstanding())
	case "(simulated) signature-error CQE polled for the mkey":
		mk := r.mkey(a)
		if err == nil {
			mk.SigError()
		}
		return err
	}
	if strings.HasPrefix(c.Fn, "(simulated)") {
		return fmt.Errorf("unknown simulated event")
	}
	call := r.builder(c.Fn, a)
	if call == nil {
		if err == nil {
			err = fmt.Errorf("replay does not know this function")
		}
		return err
	}
	if err != nil {
		return err
	}
	_ = call() // its error is latched and reported by ibv_wr_complete
	return nil
}

func (r *run) mkey(a args) *sq.Mkey {
	name := a.s("mkey")
	mk := r.mkeys[name]
	if mk == nil {
		a.fail("mkey", fmt.Errorf("no mkey %q in the setup", name))
	}
	return mk
}

// builder decodes the arguments of a builder or setter and returns the
// call to make, or nil for an unknown function.
func (r *run) builder(fn string, a args) func() error {
	q := r.q
	switch fn {
	case "ibv_wr_send":
		return q.Send
	case "ibv_wr_send_imm":
		imm := mlx.ToBE32(uint32(a.u("imm_data_host")))
		return func() error { return q.SendImm(imm) }
	case "ibv_wr_send_inv":
		rkey := uint32(a.u("invalidate_rkey"))
		return func() error { return q.SendInv(rkey) }
	case "ibv_wr_rdma_write":
		rkey, raddr := uint32(a.u("rkey")), a.u("remote_addr")
		return func() error { return q.RDMAWrite(rkey, raddr) }
	case "ibv_wr_rdma_write_imm":
		rkey, raddr, imm := uint32(a.u("rkey")), a.u("remote_addr"), mlx.ToBE32(uint32(a.u("imm_data_host")))
		return func() error { return q.RDMAWriteImm(rkey, raddr, imm) }
	case "ibv_wr_rdma_read":
		rkey, raddr := uint32(a.u("rkey")), a.u("remote_addr")
		return func() error { return q.RDMARead(rkey, raddr) }
	case "ibv_wr_atomic_cmp_swp":
		rkey, raddr, cmp, swp := uint32(a.u("rkey")), a.u("remote_addr"), a.u("compare"), a.u("swap")
		return func() error { return q.AtomicCmpSwp(rkey, raddr, cmp, swp) }
	case "ibv_wr_atomic_fetch_add":
		rkey, raddr, add := uint32(a.u("rkey")), a.u("remote_addr"), a.u("add")
		return func() error { return q.AtomicFetchAdd(rkey, raddr, add) }
	case "ibv_wr_local_inv":
		rkey := uint32(a.u("invalidate_rkey"))
		return func() error { return q.LocalInv(rkey) }
	case "ibv_wr_set_sge":
		lkey, addr, length := uint32(a.u("lkey")), a.u("addr"), uint32(a.u("length"))
		return func() error { return q.SetSGE(lkey, addr, length) }
	case "ibv_wr_set_sge_list":
		sges := sgeList(a.l("sg_list"))
		return func() error { return q.SetSGEList(sges) }
	case "ibv_wr_set_inline_data":
		data := a.hex("data_hex")
		return func() error { return q.SetInlineData(data) }
	case "ibv_wr_set_inline_data_list":
		var bufs [][]byte
		for _, b := range a.l("buf_list") {
			bufs = append(bufs, b.hex("data_hex"))
		}
		return func() error { return q.SetInlineDataList(bufs) }
	case "mlx5dv_wr_set_dc_addr", "mlx5dv_wr_set_dc_addr_stream":
		ah := r.ahs[a.s("ah")]
		if ah == nil {
			a.fail("ah", fmt.Errorf("no such address handle in the setup"))
		}
		dctn, key := uint32(a.u("remote_dctn")), a.u("remote_dc_key")
		if fn == "mlx5dv_wr_set_dc_addr" {
			return func() error { return q.SetDCAddr(ah, dctn, key) }
		}
		stream := uint16(a.u("stream_id"))
		return func() error { return q.SetDCAddrStream(ah, dctn, key, stream) }
	case "mlx5dv_wr_memcpy":
		dl, da, sl, sa, n := uint32(a.u("dest_lkey")), a.u("dest_addr"), uint32(a.u("src_lkey")), a.u("src_addr"), a.u("length")
		return func() error { return q.Memcpy(dl, da, sl, sa, n) }
	case "mlx5dv_wr_raw_wqe":
		wqe := a.hex("wqe_hex")
		return func() error { return q.RawWQE(wqe) }
	case "mlx5dv_wr_mkey_configure":
		mk, n64 := r.mkey(a), a.u("num_setters")
		if n64 > 0xff {
			a.fail("num_setters", fmt.Errorf("%d does not fit the C uint8_t", n64))
		}
		n := uint8(n64)
		attr := &mlx.Mlx5dvMkeyConfAttr{}
		if o, ok := a.o("attr"); ok {
			attr.ConfFlags = mlx.Mlx5dvMkeyConfFlags(o.opt("conf_flags"))
			attr.CompMask = o.opt("comp_mask")
		}
		return func() error { return q.MkeyConfigure(mk, n, attr) }
	case "mlx5dv_wr_set_mkey_access_flags":
		acc := mlx.IbvAccessFlags(a.u("access_flags"))
		return func() error { return q.SetMkeyAccessFlags(acc) }
	case "mlx5dv_wr_set_mkey_layout_list":
		sges := sgeList(a.l("sge"))
		return func() error { return q.SetMkeyLayoutList(sges) }
	case "mlx5dv_wr_set_mkey_layout_interleaved":
		rep, data := uint32(a.u("repeat_count")), interleaved(a.l("data"))
		return func() error { return q.SetMkeyLayoutInterleaved(rep, data) }
	case "mlx5dv_wr_mr_list":
		mk, acc, sges := r.mkey(a), mlx.IbvAccessFlags(a.u("access_flags")), sgeList(a.l("sge"))
		return func() error { return q.MRList(mk, acc, sges) }
	case "mlx5dv_wr_mr_interleaved":
		mk, acc, rep, data := r.mkey(a), mlx.IbvAccessFlags(a.u("access_flags")), uint32(a.u("repeat_count")), interleaved(a.l("data"))
		return func() error { return q.MRInterleaved(mk, acc, rep, data) }
	case "mlx5dv_wr_set_mkey_sig_block":
		o, _ := a.o("attr")
		attr := sigAttr(o)
		return func() error { return q.SetMkeySigBlock(attr) }
	case "mlx5dv_wr_set_mkey_crypto":
		o, _ := a.o("attr")
		attr := r.cryptoAttr(o)
		return func() error { return q.SetMkeyCrypto(attr) }
	}
	return nil
}

func sgeList(l []args) []mlx.IbvSge {
	out := make([]mlx.IbvSge, len(l))
	for i, e := range l {
		out[i] = mlx.IbvSge{Addr: e.u("addr"), Length: uint32(e.u("length")), Lkey: uint32(e.u("lkey"))}
	}
	return out
}

func interleaved(l []args) []mlx.Mlx5dvMrInterleaved {
	out := make([]mlx.Mlx5dvMrInterleaved, len(l))
	for i, e := range l {
		out[i] = mlx.Mlx5dvMrInterleaved{Addr: e.u("addr"), BytesCount: uint32(e.u("bytes_count")), BytesSkip: uint32(e.u("bytes_skip")), Lkey: uint32(e.u("lkey"))}
	}
	return out
}

func sigDomain(o args, ok bool) *mlx.Mlx5dvSigBlockDomain {
	if !ok {
		return nil
	}
	d := &mlx.Mlx5dvSigBlockDomain{
		SigType:   mlx.Mlx5dvSigType(o.u("sig_type")),
		BlockSize: mlx.Mlx5dvBlockSize(o.u("block_size")),
		CompMask:  o.opt("comp_mask"),
	}
	sig, _ := o.o("sig")
	if dif, ok := sig.o("t10dif"); ok {
		d.SetSigDif(&mlx.Mlx5dvSigT10dif{
			BgType: mlx.Mlx5dvSigT10difBgType(dif.u("bg_type")),
			Bg:     uint16(dif.u("bg")),
			AppTag: uint16(dif.u("app_tag")),
			RefTag: uint32(dif.u("ref_tag")),
			Flags:  uint16(dif.opt("flags")),
		})
	}
	if crc, ok := sig.o("crc"); ok {
		d.SetSigCrc(&mlx.Mlx5dvSigCrc{Type: mlx.Mlx5dvSigCrcType(crc.u("type")), Seed: crc.u("seed")})
	}
	return d
}

func sigAttr(o args) *mlx.Mlx5dvSigBlockAttr {
	return &mlx.Mlx5dvSigBlockAttr{
		Mem:       sigDomain(o.o("mem")),
		Wire:      sigDomain(o.o("wire")),
		Flags:     mlx.Mlx5dvSigBlockAttrFlags(o.opt("flags")),
		CheckMask: uint8(o.opt("check_mask")),
		CopyMask:  uint8(o.opt("copy_mask")),
		CompMask:  o.opt("comp_mask"),
	}
}

func (r *run) cryptoAttr(o args) *mlx.Mlx5dvCryptoAttr {
	c := &mlx.Mlx5dvCryptoAttr{
		CryptoStandard:       mlx.Mlx5dvCryptoStandard(o.u("crypto_standard")),
		EncryptOnTx:          o.u("encrypt_on_tx") != 0,
		SignatureCryptoOrder: mlx.Mlx5dvSignatureCryptoOrder(o.u("signature_crypto_order")),
		DataUnitSize:         mlx.Mlx5dvBlockSize(o.u("data_unit_size")),
		CompMask:             o.opt("comp_mask"),
	}
	copy(c.InitialTweak[:], o.hex("initial_tweak_hex"))
	copy(c.Keytag[:], o.hex("keytag_hex"))
	if o.a.Has("dek") {
		name := o.s("dek")
		d := r.deks[name]
		if d == nil {
			o.fail("dek", fmt.Errorf("no DEK %q in the setup", name))
		} else {
			c.Dek = unsafe.Pointer(d)
		}
	}
	return c
}
