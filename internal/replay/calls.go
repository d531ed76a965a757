package replay

import (
	"fmt"
	"slices"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/internal/vectors"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
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
	if ctl := controls[c.Fn]; ctl != nil {
		if e := ctl(r, a); e != nil {
			return e
		}
		return err
	}
	b := builders[c.Fn]
	if b == nil {
		return fmt.Errorf("replay does not know this function")
	}
	call := b(r, a)
	if err != nil {
		return err
	}
	_ = call() // its error is latched and reported by ibv_wr_complete
	return nil
}

// Functions lists every call a vector may make that the replay drives:
// the builders and setters of runtime/sq by their C names, the batch
// calls, the caller's field assignments and the simulated events.
func Functions() []string {
	var out []string
	for fn := range controls {
		out = append(out, fn)
	}
	for fn := range builders {
		out = append(out, fn)
	}
	slices.Sort(out)
	return out
}

// controls are the calls that do not build: batches, ibv_qp_ex fields,
// and the events a device would cause.
var controls = map[string]func(r *run, a args) error{
	"ibv_wr_start":    func(r *run, _ args) error { return r.q.Start() },
	"ibv_wr_complete": func(r *run, _ args) error { r.completeErr = r.q.Complete(); return nil },
	"ibv_wr_abort":    func(r *run, _ args) error { r.q.Abort(); return nil },
	"ibv_qp_ex.wr_id": func(r *run, a args) error { r.q.SetWRID(a.u("value")); return nil },
	"ibv_qp_ex.wr_flags": func(r *run, a args) error {
		r.q.SetWRFlags(mlx.SendFlags(a.u("value")))
		return nil
	},
	"(simulated) all outstanding send completions polled": func(r *run, _ args) error {
		return r.q.Completed(r.q.Outstanding())
	},
	"(simulated) signature-error CQE polled for the mkey": func(r *run, a args) error {
		if mk := r.mkey(a); mk != nil {
			mk.SigError()
		}
		return nil
	},
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
// call to make.
type builder func(r *run, a args) func() error

// builders are runtime/sq's builders and setters by their C names.
var builders = map[string]builder{
	"ibv_wr_send": func(r *run, a args) func() error { return r.q.Send },
	"ibv_wr_send_imm": func(r *run, a args) func() error {
		imm := mlx.ToBE32(uint32(a.u("imm_data_host")))
		return func() error { return r.q.SendImm(imm) }
	},
	"ibv_wr_send_inv": func(r *run, a args) func() error {
		rkey := uint32(a.u("invalidate_rkey"))
		return func() error { return r.q.SendInv(rkey) }
	},
	"ibv_wr_rdma_write": func(r *run, a args) func() error {
		rkey, raddr := uint32(a.u("rkey")), a.u("remote_addr")
		return func() error { return r.q.RDMAWrite(rkey, raddr) }
	},
	"ibv_wr_rdma_write_imm": func(r *run, a args) func() error {
		rkey, raddr, imm := uint32(a.u("rkey")), a.u("remote_addr"), mlx.ToBE32(uint32(a.u("imm_data_host")))
		return func() error { return r.q.RDMAWriteImm(rkey, raddr, imm) }
	},
	"ibv_wr_rdma_read": func(r *run, a args) func() error {
		rkey, raddr := uint32(a.u("rkey")), a.u("remote_addr")
		return func() error { return r.q.RDMARead(rkey, raddr) }
	},
	"ibv_wr_atomic_cmp_swp": func(r *run, a args) func() error {
		rkey, raddr, cmp, swp := uint32(a.u("rkey")), a.u("remote_addr"), a.u("compare"), a.u("swap")
		return func() error { return r.q.AtomicCmpSwp(rkey, raddr, cmp, swp) }
	},
	"ibv_wr_atomic_fetch_add": func(r *run, a args) func() error {
		rkey, raddr, add := uint32(a.u("rkey")), a.u("remote_addr"), a.u("add")
		return func() error { return r.q.AtomicFetchAdd(rkey, raddr, add) }
	},
	"ibv_wr_local_inv": func(r *run, a args) func() error {
		rkey := uint32(a.u("invalidate_rkey"))
		return func() error { return r.q.LocalInv(rkey) }
	},
	"ibv_wr_bind_mw": (*run).bindMW,
	"ibv_wr_set_sge": func(r *run, a args) func() error {
		lkey, addr, length := uint32(a.u("lkey")), a.u("addr"), uint32(a.u("length"))
		return func() error { return r.q.SetSGE(lkey, addr, length) }
	},
	"ibv_wr_set_sge_list": func(r *run, a args) func() error {
		sges := sgeList(a.l("sg_list"))
		return func() error { return r.q.SetSGEList(sges) }
	},
	"ibv_wr_set_inline_data": func(r *run, a args) func() error {
		data := a.hex("data_hex")
		return func() error { return r.q.SetInlineData(data) }
	},
	"ibv_wr_set_inline_data_list": func(r *run, a args) func() error {
		var bufs [][]byte
		for _, b := range a.l("buf_list") {
			bufs = append(bufs, b.hex("data_hex"))
		}
		return func() error { return r.q.SetInlineDataList(bufs) }
	},
	"mlx5dv_wr_set_dc_addr":        func(r *run, a args) func() error { return r.dcAddr(a, false) },
	"mlx5dv_wr_set_dc_addr_stream": func(r *run, a args) func() error { return r.dcAddr(a, true) },
	"mlx5dv_wr_memcpy": func(r *run, a args) func() error {
		dl, da, sl, sa, n := uint32(a.u("dest_lkey")), a.u("dest_addr"), uint32(a.u("src_lkey")), a.u("src_addr"), a.u("length")
		return func() error { return r.q.Memcpy(dl, da, sl, sa, n) }
	},
	"mlx5dv_wr_raw_wqe": func(r *run, a args) func() error {
		wqe := a.hex("wqe_hex")
		return func() error { return r.q.RawWQE(wqe) }
	},
	"mlx5dv_wr_mkey_configure": func(r *run, a args) func() error {
		mk, n64 := r.mkey(a), a.u("num_setters")
		if n64 > 0xff {
			a.fail("num_setters", fmt.Errorf("%d does not fit the C uint8_t", n64))
		}
		n := uint8(n64)
		attr := &mlx.MkeyConfAttr{}
		if o, ok := a.o("attr"); ok {
			attr.ConfFlags = mlx.MkeyConfFlags(o.opt("conf_flags"))
			attr.CompMask = o.opt("comp_mask")
		}
		return func() error { return r.q.MkeyConfigure(mk, n, attr) }
	},
	"mlx5dv_wr_set_mkey_access_flags": func(r *run, a args) func() error {
		acc := mlx.AccessFlags(a.u("access_flags"))
		return func() error { return r.q.SetMkeyAccessFlags(acc) }
	},
	"mlx5dv_wr_set_mkey_layout_list": func(r *run, a args) func() error {
		sges := sgeList(a.l("sge"))
		return func() error { return r.q.SetMkeyLayoutList(sges) }
	},
	"mlx5dv_wr_set_mkey_layout_interleaved": func(r *run, a args) func() error {
		rep, data := uint32(a.u("repeat_count")), interleaved(a.l("data"))
		return func() error { return r.q.SetMkeyLayoutInterleaved(rep, data) }
	},
	"mlx5dv_wr_mr_list": func(r *run, a args) func() error {
		mk, acc, sges := r.mkey(a), mlx.AccessFlags(a.u("access_flags")), sgeList(a.l("sge"))
		return func() error { return r.q.MRList(mk, acc, sges) }
	},
	"mlx5dv_wr_mr_interleaved": func(r *run, a args) func() error {
		mk, acc, rep, data := r.mkey(a), mlx.AccessFlags(a.u("access_flags")), uint32(a.u("repeat_count")), interleaved(a.l("data"))
		return func() error { return r.q.MRInterleaved(mk, acc, rep, data) }
	},
	"mlx5dv_wr_set_mkey_sig_block": func(r *run, a args) func() error {
		o, _ := a.o("attr")
		attr := sigAttr(o)
		return func() error { return r.q.SetMkeySigBlock(attr) }
	},
	"mlx5dv_wr_set_mkey_crypto": func(r *run, a args) func() error {
		o, _ := a.o("attr")
		attr := r.cryptoAttr(o)
		return func() error { return r.q.SetMkeyCrypto(attr) }
	},
}

func (r *run) dcAddr(a args, stream bool) func() error {
	ah := r.ahs[a.s("ah")]
	if ah == nil {
		a.fail("ah", fmt.Errorf("no such address handle in the setup"))
	}
	dctn, key := uint32(a.u("remote_dctn")), a.u("remote_dc_key")
	if !stream {
		return func() error { return r.q.SetDCAddr(ah, dctn, key) }
	}
	id := uint16(a.u("stream_id"))
	return func() error { return r.q.SetDCAddrStream(ah, dctn, key, id) }
}

// bindMW decodes ibv_wr_bind_mw(mw, rkey, bind_info): the window and
// bind_info.mr are setup objects, by name (or given inline with their
// rkey and lkey).
func (r *run) bindMW(a args) func() error {
	mw := r.mw(a)
	rkey := uint32(a.u("rkey"))
	info := &sq.MWBindInfo{}
	if o, ok := a.o("bind_info"); ok {
		info.Addr, info.Length = o.opt("addr"), o.opt("length")
		info.AccessFlags = mlx.AccessFlags(o.opt("mw_access_flags"))
		switch {
		case o.a.Has("mr"):
			info.LKey = r.mrLKey(o)
		case info.Length != 0:
			// libmlx5 reads bind_info->mr->lkey for a bind with a length.
			o.fail("bind_info.mr", fmt.Errorf("missing, with a length of %d", info.Length))
		}
	} else {
		a.fail("bind_info", fmt.Errorf("missing"))
	}
	return func() error { return r.q.BindMW(mw, rkey, info) }
}

// mw is the memory window argument: a setup name, or an object with its
// rkey.
func (r *run) mw(a args) *sq.MW {
	if o, err := a.a.Object("mw"); err == nil && o != nil {
		if o.Has("rkey") {
			return &sq.MW{RKey: uint32(args{o, a.err}.u("rkey"))}
		}
		name, _ := o.String("name")
		return r.mwNamed(a, name)
	}
	return r.mwNamed(a, a.s("mw"))
}

func (r *run) mwNamed(a args, name string) *sq.MW {
	mw := r.mws[name]
	if mw == nil {
		a.fail("mw", fmt.Errorf("no memory window %q in the setup", name))
		return &sq.MW{}
	}
	return mw
}

// mrLKey is bind_info.mr's lkey: a setup name, or an object with it.
func (r *run) mrLKey(o args) uint32 {
	if m, err := o.a.Object("mr"); err == nil && m != nil {
		if m.Has("lkey") {
			return uint32(args{m, o.err}.u("lkey"))
		}
		name, _ := m.String("name")
		return r.mrNamed(o, name)
	}
	return r.mrNamed(o, o.s("mr"))
}

func (r *run) mrNamed(o args, name string) uint32 {
	lkey, ok := r.mrs[name]
	if !ok {
		o.fail("bind_info.mr", fmt.Errorf("no memory region %q in the setup", name))
	}
	return lkey
}

func sgeList(l []args) []mlx.SGE {
	out := make([]mlx.SGE, len(l))
	for i, e := range l {
		out[i] = mlx.SGE{Addr: e.u("addr"), Length: uint32(e.u("length")), LKey: uint32(e.u("lkey"))}
	}
	return out
}

func interleaved(l []args) []mlx.MRInterleaved {
	out := make([]mlx.MRInterleaved, len(l))
	for i, e := range l {
		out[i] = mlx.MRInterleaved{Addr: e.u("addr"), BytesCount: uint32(e.u("bytes_count")), BytesSkip: uint32(e.u("bytes_skip")), LKey: uint32(e.u("lkey"))}
	}
	return out
}

func sigDomain(o args, ok bool) *mlx.SigBlockDomain {
	if !ok {
		return nil
	}
	d := &mlx.SigBlockDomain{
		SigType:   mlx.SigType(o.u("sig_type")),
		BlockSize: mlx.BlockSize(o.u("block_size")),
		CompMask:  o.opt("comp_mask"),
	}
	sig, _ := o.o("sig")
	if dif, ok := sig.o("t10dif"); ok {
		d.SetSigDif(&mlx.SigT10DIF{
			BGType: mlx.SigT10DIFBGType(dif.u("bg_type")),
			BG:     uint16(dif.u("bg")),
			AppTag: uint16(dif.u("app_tag")),
			RefTag: uint32(dif.u("ref_tag")),
			Flags:  uint16(dif.opt("flags")),
		})
	}
	if crc, ok := sig.o("crc"); ok {
		d.SetSigCRC(&mlx.SigCRC{Type: mlx.SigCRCType(crc.u("type")), Seed: crc.u("seed")})
	}
	return d
}

func sigAttr(o args) *mlx.SigBlockAttr {
	return &mlx.SigBlockAttr{
		Mem:       sigDomain(o.o("mem")),
		Wire:      sigDomain(o.o("wire")),
		Flags:     mlx.SigBlockAttrFlags(o.opt("flags")),
		CheckMask: uint8(o.opt("check_mask")),
		CopyMask:  uint8(o.opt("copy_mask")),
		CompMask:  o.opt("comp_mask"),
	}
}

func (r *run) cryptoAttr(o args) *mlx.CryptoAttr {
	c := &mlx.CryptoAttr{
		CryptoStandard:       mlx.CryptoStandard(o.u("crypto_standard")),
		EncryptOnTx:          o.u("encrypt_on_tx") != 0,
		SignatureCryptoOrder: mlx.SignatureCryptoOrder(o.u("signature_crypto_order")),
		DataUnitSize:         mlx.BlockSize(o.u("data_unit_size")),
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
			c.DEK = unsafe.Pointer(d)
		}
	}
	return c
}
