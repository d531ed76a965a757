package resolve_test

import (
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/resolve"
	"github.com/mlx5gen/mlx5gen/gen/spec"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

var (
	once sync.Once
	cm   *cheader.Model
	cerr error
)

func header(t *testing.T) *cheader.Model {
	t.Helper()
	once.Do(func() {
		root, err := rdmacore.IncludeRoot(".", "44.0")
		if err != nil {
			cerr = err
			return
		}
		cm, cerr = cheader.Load(cheader.Config{IncludeRoot: root})
	})
	if cerr != nil {
		t.Fatal(cerr)
	}
	return cm
}

// build runs Build on the real spec plus extra files (an empty one leaves
// that descriptor file out), for the 44.0 header.
func build(t *testing.T, extra map[string]string) (*model.Package, error) {
	t.Helper()
	return buildAs(t, header(t).Version, extra)
}

// buildAs is build with the header's release replaced by version ("" =
// unknown, as for a tree without libibverbs.pc).
func buildAs(t *testing.T, version string, extra map[string]string) (*model.Package, error) {
	t.Helper()
	c := *header(t)
	c.Version = version
	fsys := fstest.MapFS{}
	for _, dir := range []string{"enums", "hw", "api"} {
		entries, _ := specfiles.FS.ReadDir(dir)
		for _, e := range entries {
			b, _ := specfiles.FS.ReadFile(dir + "/" + e.Name())
			fsys["spec/"+dir+"/"+e.Name()] = &fstest.MapFile{Data: b}
		}
	}
	for name, src := range extra {
		if src == "" {
			// The descriptor file is left out, so that a test can
			// describe its items its own way.
			delete(fsys, "spec/"+name)
			continue
		}
		fsys["spec/"+name] = &fstest.MapFile{Data: []byte(src)}
	}
	s, err := spec.Load(fsys, "spec", "spec")
	if err != nil {
		return nil, err
	}
	return resolve.Build(&c, s, resolve.Config{})
}

func TestBuild(t *testing.T) {
	p, err := build(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*model.Segment{}
	for _, s := range p.Segments {
		byName[s.CName] = s
	}
	ctrl := byName["mlx5_wqe_ctrl_seg"]
	if ctrl == nil || ctrl.Size != 16 || ctrl.GoName != "WQECtrlSeg" || len(ctrl.Fields) != 6 {
		t.Fatalf("ctrl: %+v", ctrl)
	}
	if f := ctrl.Fields[0]; f.CName != "opmod_idx_opcode" || f.Endian != model.Big || len(f.Parts) != 3 || f.Parts[0].Enum.GoName != "Opcode" {
		t.Errorf("opmod_idx_opcode: %+v", f)
	}
	if f := byName["mlx5_wqe_inl_data_seg"].Fields[0]; f.Endian != model.Big {
		t.Error("the spec's endian override was not applied to inl_data_seg.byte_count")
	}
	if s := byName["mlx5_bsf"]; s == nil || s.Private == "" || s.Fields[0].Nested != byName["mlx5_bsf_basic"] {
		t.Errorf("private mlx5_bsf: %+v", s)
	}
	if av := byName["mlx5_wqe_av"]; av.Fields[0].CName != "key.qkey.qkey" || av.Fields[0].GoName != "KeyQkeyQkey" {
		t.Errorf("nested member path: %+v", av.Fields[0])
	}
	var flags, values int
	for _, e := range p.Enums {
		if e.Flags {
			flags++
		} else {
			values++
		}
	}
	if flags < 40 || values < 20 {
		t.Errorf("%d flag sets, %d value enums", flags, values)
	}
}

func TestBuildErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"no such enum", "enums:\n  - {c: ibv_nonsense, kind: flags}\n", "spec/x.yaml:2:5: enum ibv_nonsense: not in infiniband/mlx5dv.h (rdma-core 44.0)"},
		{"no such enumerator", "enums:\n  - {anonymous: NOPE, go: Nope, kind: values}\n", "spec/x.yaml:2:5: an enum with enumerator NOPE: not in"},
		{"described twice", "enums:\n  - {c: ibv_send_flags, kind: values}\n", "spec/x.yaml:2:5: enum ibv_send_flags described twice (first at spec/enums/verbs.yaml:9:5)"},
		{"meaning of a non-member", "enums:\n  - {c: mlx5dv_dc_type, kind: values, members: [{name: MLX5DV_DCTYPE_DCT, meaning: ok}, {name: MLX5_OPCODE_NOP, meaning: not ours}]}\n", "spec/x.yaml:2:89: enum mlx5dv_dc_type: MLX5_OPCODE_NOP is not one of its members"},
		{"no such segment", "segments:\n  - c: mlx5_nonsense\n", "spec/x.yaml:2:5: segment mlx5_nonsense: no struct mlx5_nonsense in infiniband/mlx5dv.h"},
		{"no such field", "segments:\n  - c: mlx5_wqe_srq_next_seg\n    fields:\n      - name: colour\n", "spec/x.yaml:4:9: segment mlx5_wqe_srq_next_seg: struct mlx5_wqe_srq_next_seg has no field colour"},
		{"part too wide", "segments:\n  - c: mlx5_wqe_srq_next_seg\n    fields:\n      - name: next_wqe_index\n        parts: [{name: k, shift: 14, width: 4}]\n", "spec/x.yaml:5:17: struct mlx5_wqe_srq_next_seg.next_wqe_index: part k (bits 14..17) does not fit the 16-bit field"},
		{"enum too wide", "segments:\n  - c: mlx5_wqe_tm_seg\n    fields:\n      - {name: opcode, enum: AccessFlags}\n", "IBV_ACCESS_RELAXED_ORDERING = 1048576 does not fit in 8 bits"},
		{"unknown enum", "segments:\n  - c: mlx5_wqe_tm_seg\n    fields:\n      - {name: opcode, enum: Colour}\n", "no enum type Colour"},
		{"overlap", "segments:\n  - c: s_priv\n    private: x.h\n    size: 8\n    fields:\n      - {name: a, type: be32, offset: 0}\n      - {name: b, type: be32, offset: 2}\n", "spec/x.yaml:7:9: s_priv.b overlaps a"},
		{"outside", "segments:\n  - c: s_priv\n    private: x.h\n    size: 4\n    fields:\n      - {name: a, type: be64, offset: 0}\n", "s_priv.a: bytes 0..7 are outside the 4-byte segment"},
		{"accessor clash", "segments:\n  - c: s_priv\n    private: x.h\n    size: 4\n    fields:\n      - {name: string, type: be32, offset: 0}\n", "field string would be named String, which every segment already has"},
		{"initialism clash", "segments:\n  - c: mlx5_qp_n_seg\n    private: x.h\n    size: 4\n    fields:\n      - {name: a, type: be32, offset: 0}\n  - c: mlx5_qpn_seg\n    private: x.h\n    size: 4\n    fields:\n      - {name: a, type: be32, offset: 0}\n",
			"spec/x.yaml:7:5: Go name QPNSeg of segment mlx5_qpn_seg is already used by segment mlx5_qp_n_seg (spec/x.yaml:2:5)"},
		{"accessor initialism clash", "segments:\n  - c: s_priv\n    private: x.h\n    size: 8\n    fields:\n      - {name: qp_n, type: be32, offset: 0}\n      - {name: qpn, type: be32, offset: 4}\n",
			"spec/x.yaml:7:9: segment s_priv: field qpn and field qp_n both want the accessor QPN"},
		{"go name clash", "segments:\n  - c: s_priv\n    go: WQEDataSeg\n    private: x.h\n    size: 4\n    fields:\n      - {name: a, type: be32, offset: 0}\n", "Go name WQEDataSeg of segment"},
		{"part name not an identifier", "segments:\n  - c: mlx5_wqe_srq_next_seg\n    fields:\n      - name: next_wqe_index\n        parts: [{name: 1k, shift: 0, width: 4}]\n", "spec/x.yaml:5:17: segment mlx5_wqe_srq_next_seg: part 1k of next_wqe_index would be named \"1k\", which is not a Go identifier"},
		{"field name not an identifier", "segments:\n  - c: s_priv\n    private: x.h\n    size: 4\n    fields:\n      - {name: a-b, type: be32, offset: 0}\n", "spec/x.yaml:6:9: segment s_priv: field a-b would be named \"A-b\", which is not a Go identifier"},
		{"segment go name not an identifier", "segments:\n  - c: s_priv\n    go: Bad-Name\n    private: x.h\n    size: 4\n    fields:\n      - {name: a, type: be32, offset: 0}\n", "spec/x.yaml:2:5: Go name \"Bad-Name\" of segment s_priv is not a Go identifier"},
		{"bad opcode", "wqe_formats:\n  - {name: f, opcodes: [IBV_SEND_INLINE], segments: [data*]}\n", "wqe format f: IBV_SEND_INLINE is not an MLX5_OPCODE_* constant"},
		{"opcode twice", "wqe_formats:\n  - {name: f, opcodes: [MLX5_OPCODE_SEND], segments: [data*]}\n", "MLX5_OPCODE_SEND already belongs to format send"},
		{"data last", "wqe_formats:\n  - {name: f, opcodes: [MLX5_OPCODE_TSO], segments: [data*, mlx5_wqe_eth_seg]}\n", "wqe format f: data* must come last"},
		{"no such function", "man: x(3)\nfunctions:\n  - {name: mlx5dv_nonsense, kind: verb, returns: errno}\n", "spec/x.yaml:3:5: function mlx5dv_nonsense: not in infiniband/mlx5dv.h (rdma-core 44.0)"},
		{"param type", "man: x(3)\nfunctions:\n  - name: mlx5dv_get_clock_info\n    kind: verb\n    returns: errno\n    result: int\n    params:\n      - {name: context, type: struct ibv_context *}\n      - {name: clock_info, type: struct mlx5dv_cq *}\n",
			"spec/x.yaml:9:9: function mlx5dv_get_clock_info: parameter clock_info has type \"struct mlx5dv_clock_info *\" in the header, not \"struct mlx5dv_cq *\""},
		{"result type", "man: x(3)\nfunctions:\n  - name: mlx5dv_get_clock_info\n    kind: verb\n    returns: errno\n    params:\n      - {name: context, type: struct ibv_context *}\n      - {name: clock_info, type: struct mlx5dv_clock_info *}\n",
			"function mlx5dv_get_clock_info: result \"void\", but infiniband/mlx5dv.h has \"int\""},
		{"param name", "man: x(3)\nfunctions:\n  - name: mlx5dv_get_clock_info\n    kind: verb\n    returns: errno\n    result: int\n    params:\n      - {name: ctx, type: struct ibv_context *}\n      - {name: clock_info, type: struct mlx5dv_clock_info *}\n",
			"function mlx5dv_get_clock_info: parameter 1 is context in the header, not ctx"},
		{"field type", "man: x(3)\nstructs:\n  - name: mlx5dv_striding_rq_init_attr\n    fields:\n      - {name: single_stride_log_num_of_bytes, type: uint32_t}\n      - {name: single_wqe_log_num_of_strides, type: uint16_t}\n      - {name: two_byte_shift_en, type: uint8_t}\n",
			"spec/x.yaml:6:9: struct mlx5dv_striding_rq_init_attr: field single_wqe_log_num_of_strides has type \"uint32_t\" in the header, not \"uint16_t\""},
		{"opaque struct not declared", "man: x(3)\nstructs:\n  - {name: mlx5dv_nonsense, opaque: no mirror}\n", "spec/x.yaml:3:5: struct mlx5dv_nonsense: opaque, but infiniband/mlx5dv.h (rdma-core 44.0) does not declare it"},
		{"missing field", "man: x(3)\nstructs:\n  - name: mlx5dv_striding_rq_init_attr\n    fields:\n      - {name: single_stride_log_num_of_bytes, type: uint32_t}\n      - {name: single_wqe_log_num_of_strides, type: uint32_t}\n",
			"struct mlx5dv_striding_rq_init_attr: the header has field two_byte_shift_en (uint8_t), which the spec does not list (rdma-core 44.0)"},
		{"unknown chain check", "man: x(3)\nrules:\n  - id: x.y\n    section: S\n    says: s\n    kind: chain\n    errno: EINVAL\n    funcs: [ibv_wr_send]\n    check: {chain: colour}\n    tests: {good: [], bad: []}\n",
			"spec/x.yaml:9:12: rule x.y: unknown chain check \"colour\""},
		{"unknown constant", "man: x(3)\nrules:\n  - id: x.z\n    section: S\n    says: s\n    kind: argument\n    errno: EINVAL\n    funcs: [mlx5dv_wr_set_mkey_sig_block]\n    check: {struct: mlx5dv_sig_crc, field: seed, one_of: [MLX5_NONSENSE]}\n    tests: {good: {}, bad: {}}\n",
			"rule x.z: no constant MLX5_NONSENSE in infiniband/mlx5dv.h"},
		{"max -1 on a uint64", "man: x(3)\nrules:\n  - id: x.m\n    section: S\n    says: s\n    kind: argument\n    errno: EINVAL\n    funcs: [ibv_wr_bind_mw]\n    check: {struct: ibv_mw_bind_info, field: length, max: \"-1\"}\n    tests: {good: {}, bad: {}}\n",
			"spec/x.yaml:9:12: rule x.m: max -1 is outside the type of length (uint64: 0 to 18446744073709551615)"},
		{"max 2^63 on an int64", "man: x(3)\nrules:\n  - id: x.n\n    section: S\n    says: s\n    kind: argument\n    errno: EINVAL\n    funcs: [mlx5dv_init_obj]\n    check: {struct: mlx5dv_qp, field: uar_mmap_offset, max: \"9223372036854775808\"}\n    tests: {good: {}, bad: {}}\n",
			"spec/x.yaml:9:12: rule x.n: max 9223372036854775808 is outside the type of uar_mmap_offset (int64: -9223372036854775808 to 9223372036854775807)"},
		{"one_of negative on a uint32", "man: x(3)\nrules:\n  - id: x.o\n    section: S\n    says: s\n    kind: argument\n    errno: EINVAL\n    funcs: [mlx5dv_init_obj]\n    check: {struct: mlx5dv_qp, field: tirn, one_of: [\"-2\"]}\n    tests: {good: {}, bad: {}}\n",
			"spec/x.yaml:9:12: rule x.o: one_of -2 is outside the type of tirn (uint32: 0 to 4294967295)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := build(t, map[string]string{"x.yaml": c.src, "api/mlx5dv_get_clock_info.yaml": "", "api/mlx5dv_create_wq.yaml": ""})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant an error containing %q", err, c.want)
			}
		})
	}
}
