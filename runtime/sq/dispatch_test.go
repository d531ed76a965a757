package sq_test

import (
	"encoding/hex"
	"errors"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/runtime/internal/ruletest"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// errNoMethod is a call of a builder or setter the writer's QP types do
// not offer: it has no method, so no program can make the call.
var errNoMethod = errors.New("no method: not offered on RC or DCI")

// call runs one step through its entry point.
func (r *runner) call(s step) error {
	switch s.name {
	case "@burst":
		return r.burst(s)
	case "@template":
		return r.template(s)
	case "@onecall":
		return r.oneCall(s)
	case "@post":
		return r.post(s)
	case "@posttemplate":
		return r.templateOf(s.parts[1], true)
	}
	r.last = entryOf(s.name)
	if r.last == "" {
		if fn, ok := ruletest.Fn(s.name); ok && mlx5rules.Funcs[fn].QPTypes&sqTypes == 0 {
			return errNoMethod // the writer's QP types do not offer it
		}
		r.t.Fatalf("line %d: no entry point implements %s", s.line, s.name)
	}
	q := r.q
	switch s.name {
	case "ibv_wr_start":
		return q.Start()
	case "ibv_wr_complete":
		return q.Complete()
	case "ibv_wr_abort":
		q.Abort()
		return nil
	case "ibv_qp_ex.wr_flags":
		return q.SetWRFlags(mlx.SendFlags(r.arg(s, "value", 0)))
	case "ibv_qp_ex.wr_id":
		q.SetWRID(r.arg(s, "value", 0))
		return nil
	}
	if err, ok := r.dataCall(s); ok {
		return err
	}
	return r.mkeyCall(s)
}

// entryOf is the per-call entry point of a C function.
func entryOf(fn string) string {
	for _, name := range implementing(fn) {
		if entryPoints[name].form == formCalls {
			return name
		}
	}
	return ""
}

// dataCall runs the builders and setters that are not mkey calls.
func (r *runner) dataCall(s step) (error, bool) {
	q := r.q
	rkey, raddr := uint32(r.arg(s, "rkey", 0x200)), r.arg(s, "remote_addr", 0x20000)
	switch s.name {
	case "ibv_wr_send":
		return q.Send(), true
	case "ibv_wr_send_imm":
		return q.SendImm(mlx.BE32(r.arg(s, "imm_data", 0))), true
	case "ibv_wr_send_inv":
		return q.SendInv(uint32(r.arg(s, "invalidate_rkey", 0))), true
	case "ibv_wr_rdma_write":
		return q.RDMAWrite(rkey, raddr), true
	case "ibv_wr_rdma_write_imm":
		return q.RDMAWriteImm(rkey, raddr, mlx.BE32(r.arg(s, "imm_data", 0))), true
	case "ibv_wr_rdma_read":
		return q.RDMARead(rkey, raddr), true
	case "ibv_wr_atomic_cmp_swp":
		return q.AtomicCmpSwp(rkey, raddr, r.arg(s, "compare", 0), r.arg(s, "swap", 0)), true
	case "ibv_wr_atomic_fetch_add":
		return q.AtomicFetchAdd(rkey, raddr, r.arg(s, "add", 0)), true
	case "ibv_wr_local_inv":
		return q.LocalInv(uint32(r.arg(s, "invalidate_rkey", 0))), true
	case "ibv_wr_bind_mw":
		var mw *sq.MW
		if n := s.args["mw"]; n == nil || n.Tag != "!!null" {
			mw = &sq.MW{RKey: 0x300}
		}
		return q.BindMW(mw, rkey, r.bindInfo(s)), true
	case "ibv_wr_set_sge":
		return q.SetSGE(r.lkey(s, "lkey"), r.arg(s, "addr", 0x10000), uint32(r.arg(s, "length", 64))), true
	case "ibv_wr_set_sge_list":
		return q.SetSGEList(r.sges(s, "sg_list", "num_sge", 64)), true
	case "ibv_wr_set_inline_data":
		return q.SetInlineData(make([]byte, r.arg(s, "length", 0))), true
	case "ibv_wr_set_inline_data_list":
		k, nodes := r.list(s, "buf_list", "num_buf")
		bufs := make([][]byte, k)
		for i := range bufs {
			if nodes != nil {
				bufs[i] = make([]byte, r.v.Sum(nodes[i:i+1], "length", 0))
			}
		}
		return q.SetInlineDataList(bufs), true
	case "mlx5dv_wr_set_dc_addr", "mlx5dv_wr_set_dc_addr_stream":
		var ah *sq.AH
		if n := s.args["ah"]; n == nil || n.Tag != "!!null" {
			ah = &sq.AH{}
		}
		dctn, key := uint32(r.arg(s, "remote_dctn", 0x20)), r.arg(s, "remote_dc_key", 0x1234)
		if s.name == "mlx5dv_wr_set_dc_addr" {
			return q.SetDCAddr(ah, dctn, key), true
		}
		return q.SetDCAddrStream(ah, dctn, key, uint16(r.arg(s, "stream_id", 0))), true
	case "mlx5dv_wr_memcpy":
		return q.Memcpy(uint32(r.arg(s, "dest_lkey", 0x100)), r.arg(s, "dest_addr", 0x10000),
			uint32(r.arg(s, "src_lkey", 0x100)), r.arg(s, "src_addr", 0x20000), r.arg(s, "length", 64)), true
	case "mlx5dv_wr_raw_wqe":
		wqe := []byte{0, 0, 0, 8, 0, 0x12, 0x34, 1, 0, 0, 0, 8, 0, 0, 0, 0}
		if n := s.args["wqe_hex"]; n != nil {
			var err error
			if wqe, err = hex.DecodeString(n.Value); err != nil {
				r.t.Fatalf("line %d: wqe_hex: %v", n.Line, err)
			}
		}
		return q.RawWQE(wqe), true
	}
	return nil, false
}

// mkeyCall runs the mkey builders and setters.
func (r *runner) mkeyCall(s step) error {
	q := r.q
	acc := mlx.AccessFlags(r.arg(s, "access_flags", 0))
	switch s.name {
	case "mlx5dv_wr_mkey_configure":
		attr := &mlx.MkeyConfAttr{}
		if s.args["attr"] != nil {
			attr = fill[mlx.MkeyConfAttr](r, s, "attr")
		}
		return q.MkeyConfigure(r.mkey(s), uint8(r.arg(s, "num_setters", 0)), attr)
	case "mlx5dv_wr_set_mkey_access_flags":
		return q.SetMkeyAccessFlags(acc)
	case "mlx5dv_wr_set_mkey_layout_list":
		return q.SetMkeyLayoutList(r.sges(s, "sge", "num_sges", 4096))
	case "mlx5dv_wr_set_mkey_layout_interleaved":
		return q.SetMkeyLayoutInterleaved(uint32(r.arg(s, "repeat_count", 1)), r.interleaved(s))
	case "mlx5dv_wr_set_mkey_sig_block":
		return q.SetMkeySigBlock(fill[mlx.SigBlockAttr](r, s, "attr"))
	case "mlx5dv_wr_set_mkey_crypto":
		return q.SetMkeyCrypto(fill[mlx.CryptoAttr](r, s, "attr"))
	case "mlx5dv_wr_mr_list":
		return q.MRList(r.mkey(s), acc, r.sges(s, "sge", "num_sges", 4096))
	case "mlx5dv_wr_mr_interleaved":
		return q.MRInterleaved(r.mkey(s), acc, uint32(r.arg(s, "repeat_count", 1)), r.interleaved(s))
	}
	r.t.Fatalf("line %d: the driver cannot call %s", s.line, s.name)
	return nil
}

// oneCall runs a builder and ibv_wr_set_sge as the builder's one-call
// form.
func (r *runner) oneCall(s step) error {
	r.last = oneCallOf[s.parts[0].name]
	return r.oneCallOf(s.parts[0], s.parts[1], false)
}

// post runs start, a builder with a Post form, set_sge and complete as
// that Post method.
func (r *runner) post(s step) error {
	r.last = postOf[s.parts[1].name]
	return r.oneCallOf(s.parts[1], s.parts[2], true)
}

// oneCallOf calls builder b's one-call form (post: its Post form) with
// the arguments of b and of its ibv_wr_set_sge g.
func (r *runner) oneCallOf(b, g step, post bool) error {
	rkey, raddr := uint32(r.arg(b, "rkey", 0x200)), r.arg(b, "remote_addr", 0x20000)
	lkey, addr, length := r.lkey(g, "lkey"), r.arg(g, "addr", 0x10000), uint32(r.arg(g, "length", 64))
	return oneCallForm(r.q, b.name, post, rkey, raddr, lkey, addr, length)
}

// burst runs rdma_write + set_sge pairs as one RDMAWriteBurst.
func (r *runner) burst(s step) error {
	r.last = "RDMAWriteBurst"
	reqs := make([]sq.RDMAWriteReq, 0, len(s.parts)/2)
	for i := 0; i+1 < len(s.parts); i += 2 {
		w, g := s.parts[i], s.parts[i+1]
		reqs = append(reqs, sq.RDMAWriteReq{RKey: uint32(r.arg(w, "rkey", 0x200)), Raddr: r.arg(w, "remote_addr", 0x20000),
			LKey: r.lkey(g, "lkey"), Addr: r.arg(g, "addr", 0x10000), Length: uint32(r.arg(g, "length", 64))})
	}
	return r.q.RDMAWriteBurst(reqs)
}

// template runs an mkey configuration as NewMkeyTemplate + ConfigureMkey:
// parts are mlx5dv_wr_mkey_configure and its access, list layout and
// (optional) signature setters, or a lone configuration with a NULL mkey
// or attr.
func (r *runner) template(s step) error { return r.templateOf(s, false) }

// templateOf runs the configuration of template step s through
// ConfigureMkey, or with post (a batch of its own) PostConfigureMkey.
func (r *runner) templateOf(s step, post bool) error {
	configure, name := r.q.ConfigureMkey, "ConfigureMkey"
	if post {
		configure, name = r.q.PostConfigureMkey, "PostConfigureMkey"
	}
	conf := s.parts[0]
	mk := r.mkey(conf)
	sges := []mlx.SGE{{Addr: 0x10000, Length: 4096, LKey: 0x100}}
	if len(s.parts) == 1 {
		r.last = name
		var t *sq.MkeyTemplate
		if !ruletest.IsNull(conf.args["attr"]) {
			var err error
			if t, err = sq.NewMkeyTemplate(0, nil); err != nil {
				r.t.Fatal(err)
			}
		}
		return configure(mk, t, sges)
	}
	var acc mlx.AccessFlags
	var sig *mlx.SigBlockAttr
	for _, p := range s.parts[1:] {
		switch p.name {
		case "mlx5dv_wr_set_mkey_access_flags":
			acc = mlx.AccessFlags(r.arg(p, "access_flags", 0))
		case "mlx5dv_wr_set_mkey_layout_list":
			sges = r.sges(p, "sge", "num_sges", 4096)
		case "mlx5dv_wr_set_mkey_sig_block":
			if sig = fill[mlx.SigBlockAttr](r, p, "attr"); sig == nil {
				r.t.Fatalf("line %d: a template cannot hold a NULL signature", p.line)
			}
		}
	}
	r.last = "NewMkeyTemplate"
	r.used[r.last] = true
	t, err := sq.NewMkeyTemplate(acc, sig)
	if err != nil {
		return err
	}
	r.last = name
	return configure(mk, t, sges)
}
