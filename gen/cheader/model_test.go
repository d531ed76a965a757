package cheader_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

func loadVersion(t testing.TB, v string) *cheader.Model {
	t.Helper()
	root, err := rdmacore.IncludeRoot(".", v)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cheader.Load(cheader.Config{IncludeRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestModelContents checks what the model says about declarations the
// generator depends on, in every supported release.
func TestModelContents(t *testing.T) {
	for _, v := range rdmacore.Versions {
		t.Run(v, func(t *testing.T) {
			m := loadVersion(t, v)

			ctrl := m.Struct("mlx5_wqe_ctrl_seg")
			if ctrl == nil {
				t.Fatal("no struct mlx5_wqe_ctrl_seg")
			}
			if ctrl.Size != 16 || ctrl.Align != 4 || !ctrl.Packed || ctrl.Aligned != 4 {
				t.Errorf("ctrl seg: size %d align %d packed %v aligned %d", ctrl.Size, ctrl.Align, ctrl.Packed, ctrl.Aligned)
			}
			if ctrl.Pos.File != "infiniband/mlx5dv.h" || ctrl.Pos.Line == 0 {
				t.Errorf("ctrl seg position %v", ctrl.Pos)
			}
			var got []string
			for _, f := range ctrl.Fields {
				got = append(got, fmt.Sprintf("%s@%d:%s:%v", f.Name, f.Offset(), f.Type.Name, f.Type.Endian))
			}
			want := "opmod_idx_opcode@0:__be32:big-endian qpn_ds@4:__be32:big-endian signature@8:uint8_t:host " +
				"dci_stream_channel_id@9:__be16:big-endian fm_ce_se@11:uint8_t:host imm@12:__be32:big-endian"
			if strings.Join(got, " ") != want {
				t.Errorf("ctrl seg fields:\n got %s\nwant %s", strings.Join(got, " "), want)
			}
			if tds := ctrl.Fields[0].Type.Typedefs; strings.Join(tds, ",") != "__be32,__u32" {
				t.Errorf("typedef chain of opmod_idx_opcode: %v", tds)
			}

			qpex := m.Struct("mlx5dv_qp_ex")
			n := 0
			for _, f := range qpex.Fields {
				if f.Type.IsFuncPointer() {
					n++
				}
			}
			if n != 12 {
				t.Errorf("struct mlx5dv_qp_ex has %d function pointers, want 12", n)
			}
			sig := qpex.Fields[1].Type.Elem.Func
			if qpex.Fields[1].Name != "wr_set_dc_addr" || len(sig.Params) != 4 || sig.Params[2].Name != "remote_dctn" || sig.Params[2].Type.Name != "uint32_t" {
				t.Errorf("wr_set_dc_addr: %s %s", qpex.Fields[1].Name, qpex.Fields[1].Type.Spelling())
			}

			av := m.Struct("mlx5_wqe_av")
			var paths []string
			for _, mb := range av.Members() {
				paths = append(paths, fmt.Sprintf("%s@%d", mb.Path, mb.Offset))
			}
			if !strings.HasPrefix(strings.Join(paths, " "), "key@0 key.qkey@0 key.qkey.qkey@0 key.qkey.reserved@4 key.dc_key@0 dqp_dct@8") {
				t.Errorf("mlx5_wqe_av members: %v", paths)
			}

			rep := m.Struct("mlx5_wqe_umr_repeat_block_seg")
			last := rep.Fields[len(rep.Fields)-1]
			if last.Name != "entries" || last.Type.Kind != cheader.Array || last.Type.Len != 0 || last.Type.Elem.Record.Tag != "mlx5_wqe_umr_repeat_ent_seg" {
				t.Errorf("repeat block entries: %+v", last.Type)
			}
			hdr := m.Struct("mlx5_ib_uapi_devx_async_cmd_hdr")
			if f := hdr.Fields[1]; f.Type.Len != -1 || f.Offset() != 8 {
				t.Errorf("flexible out_data: len %d offset %d", f.Type.Len, f.Offset())
			}

			f := m.Func("mlx5dv_set_ctrl_seg")
			if f == nil || !f.Static || !f.Inline || !f.Body {
				t.Fatalf("mlx5dv_set_ctrl_seg: %+v", f)
			}
			var params []string
			for _, p := range f.Type.Params {
				params = append(params, p.Type.Spelling()+" "+p.Name)
			}
			if strings.Join(params, ", ") != "struct mlx5_wqe_ctrl_seg * seg, uint16_t pi, uint8_t opcode, uint8_t opmod, uint32_t qp_num, uint8_t fm_ce_se, uint8_t ds, uint8_t signature, uint32_t imm" {
				t.Errorf("mlx5dv_set_ctrl_seg params: %s", strings.Join(params, ", "))
			}
			cq := m.Func("mlx5dv_create_qp")
			if cq == nil || cq.Body || cq.Type.Result.Kind != cheader.Pointer || cq.Type.Result.Elem.Record.Tag != "ibv_qp" || len(cq.Type.Params) != 3 {
				t.Errorf("mlx5dv_create_qp: %+v", cq)
			}

			for name, want := range map[string]uint64{
				"MLX5_OPCODE_RDMA_WRITE": 8, "MLX5_WQE_CTRL_CQ_UPDATE": 8, "MLX5_SEND_WQE_BB": 64,
				"IBV_SEND_INLINE": 8, "MLX5DV_RES_TYPE_QP": 1<<32 | 1,
			} {
				c := m.Constant(name)
				if c == nil || c.ConstValue().Uint64() != want {
					t.Errorf("%s = %v, want %d", name, c, want)
				}
			}
			if c := m.Constant("MLX5DV_RES_TYPE_QP"); c.ConstType().Kind != cheader.ULong {
				t.Errorf("MLX5DV_RES_TYPE_QP type %v (%v)", c.ConstType().Spelling(), c.ConstType().Kind)
			}
			reasons := map[string]cheader.SkipReason{}
			for _, s := range m.Skipped {
				reasons[s.Name] = s.Reason
			}
			for name, want := range map[string]cheader.SkipReason{
				"_MLX5DV_H_": cheader.SkipGuard, "MLX5DV_ALWAYS_INLINE": cheader.SkipAlias,
				"__devx_nullp": cheader.SkipFunctionLike, "IBV_ALLOCATOR_USE_DEFAULT": cheader.SkipPointer,
			} {
				if reasons[name] != want {
					t.Errorf("macro %s skipped as %v, want %v", name, reasons[name], want)
				}
			}
			if !contains(m.Files, "infiniband/verbs.h") || !contains(m.Files, "infiniband/mlx5_api.h") || !contains(m.Files, "rdma/ib_user_verbs.h") {
				t.Errorf("files: %v", m.Files)
			}
		})
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// Two loads of the same header give the same model, in the same order.
func TestModelDeterministic(t *testing.T) {
	a, b := loadVersion(t, "65.0"), loadVersion(t, "65.0")
	sa, sb := summary(a), summary(b)
	if sa != sb {
		t.Error("two loads differ")
	}
}

func summary(m *cheader.Model) string {
	var b strings.Builder
	for _, r := range append(m.Records, m.External...) {
		fmt.Fprintf(&b, "%s %v %d %d\n", r.CName(), r.Pos, r.Size, r.Align)
		for _, mb := range r.Members() {
			fmt.Fprintf(&b, "  %s %d %s\n", mb.Path, mb.BitOffset, mb.Field.Type.Spelling())
		}
	}
	for _, c := range m.Constants() {
		fmt.Fprintf(&b, "%s %v %s\n", c.ConstName(), c.ConstValue(), c.ConstType().Spelling())
	}
	for _, f := range m.Funcs {
		fmt.Fprintf(&b, "%s %v %s\n", f.Name, f.Pos, f.Type.Result.Spelling())
	}
	for _, s := range m.Skipped {
		fmt.Fprintf(&b, "%s %v\n", s.Name, s.Reason)
	}
	return b.String()
}
