package resolve_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestMacroAndInline: a descriptor's macro and inline keys are held to the
// header both ways (44.0: ibv_reg_mr_iova is a function-like macro calling
// the static inline __ibv_reg_mr_iova; ibv_query_device is a plain
// prototype; ibv_create_wq is static inline).
func TestMacroAndInline(t *testing.T) {
	const iova = `
  - name: ibv_reg_mr_iova
    kind: verb
    returns: pointer-errno
    result: struct ibv_mr *
%s
    params:
      - {name: pd, type: struct ibv_pd *}
      - {name: addr, type: void *}
      - {name: length, type: size_t}
      - {name: iova, type: uint64_t}
%s`
	const intAccess = "      - {name: access, type: int}\n"
	const fwd = "      - {name: access, type: unsigned int}\n      - {name: is_access_const, type: int}\n"
	const qdev = `
  - name: ibv_query_device
    kind: verb
    returns: errno
    result: int
%s
    params:
      - {name: context, type: struct ibv_context *}
      - {name: device_attr, type: struct ibv_device_attr *}
`
	const wq = `
  - name: ibv_create_wq
    kind: verb
    returns: pointer-errno
    result: struct ibv_wq *
%s
    params:
      - {name: context, type: struct ibv_context *}
      - {name: wq_init_attr, type: struct ibv_wq_init_attr *}
`
	for _, tc := range []struct {
		name, fn, want string // want: "" = builds
	}{
		{"macro keeps the prototype", sprintf(iova, "    macro: ibv_reg_mr_iova", intAccess), ""},
		{"macro forwards", sprintf(iova, "    macro: __ibv_reg_mr_iova\n    inline: true", fwd), ""},
		{"macro missing", sprintf(iova, "", intAccess), "defines ibv_reg_mr_iova as a function-like macro (__ibv_reg_mr_iova at infiniband/verbs.h:"},
		{"macro calls another", sprintf(iova, "    macro: ibv_reg_mr_iova2", intAccess), "macro: ibv_reg_mr_iova2, but the macro at infiniband/verbs.h:"},
		{"forward needs inline", sprintf(iova, "    macro: __ibv_reg_mr_iova", fwd), "__ibv_reg_mr_iova at infiniband/verbs.h:2568:64 is static inline (rdma-core 44.0); say inline: true"},
		{"no macro", sprintf(qdev, "    macro: ibv_query_device"), "macro: ibv_query_device, but infiniband/mlx5dv.h (rdma-core 44.0) defines no function-like macro ibv_query_device"},
		{"not inline", sprintf(qdev, "    inline: true"), "inline: true, but ibv_query_device at infiniband/verbs.h:2354:5 is not a static inline definition"},
		{"plain", sprintf(qdev, ""), ""},
		{"inline missing", sprintf(wq, ""), "function ibv_create_wq: ibv_create_wq at infiniband/verbs.h:"},
		{"inline", sprintf(wq, "    inline: true"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := build(t, map[string]string{"api/zz.yaml": "man: ibv_reg_mr(3)\nfunctions:" + tc.fn})
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && err == nil:
				t.Fatalf("built; want an error with %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %v\nwant %q", err, tc.want)
			}
		})
	}
}

func sprintf(format string, args ...any) string {
	return strings.TrimRight(fmt.Sprintf(format, args...), "\n") + "\n"
}

// TestUntaggedStructMembers: the members of an untagged struct member are
// fields of their own, named struct.member at their offset in the outer
// struct (44.0: mlx5dv_qp's sq, rq and bf; mlx5dv_obj's in/out pairs).
func TestUntaggedStructMembers(t *testing.T) {
	p, err := build(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int64{
		"mlx5dv_qp":  {"dbrec": 0, "sq.buf": 8, "sq.wqe_cnt": 16, "sq.stride": 20, "rq.buf": 24, "bf.reg": 40, "bf.size": 48, "comp_mask": 56},
		"mlx5dv_obj": {"qp.in": 0, "qp.out": 8, "cq.in": 16, "pd.out": 104},
	}
	for _, m := range p.API.Mirrors {
		w := want[m.CName]
		if w == nil {
			continue
		}
		got := map[string]int64{}
		for _, f := range m.Fields {
			got[f.CName] = f.Offset
		}
		for name, off := range w {
			if o, ok := got[name]; !ok || o != off {
				t.Errorf("%s.%s: offset %d (present %v), want %d", m.CName, name, o, ok, off)
			}
		}
		if _, ok := got["sq"]; ok {
			t.Errorf("%s: the untagged struct sq is a field of its own", m.CName)
		}
		delete(want, m.CName)
	}
	if len(want) > 0 {
		t.Errorf("no mirrors for %v", want)
	}
	bad := "man: x(3)\nstructs:\n" +
		"  - name: mlx5dv_rwq\n    fields:\n      - {name: buf, type: void *}\n      - {name: dbrec, type: __be32 *}\n      - {name: sq.wqe_cnt, type: uint32_t}\n      - {name: stride, type: uint32_t}\n      - {name: comp_mask, type: uint64_t}\n"
	if _, err := build(t, map[string]string{"api/zz.yaml": bad, "api/mlx5dv_init_obj_dm_rwq.yaml": ""}); err == nil || !strings.Contains(err.Error(), "struct mlx5dv_rwq: field 3 is wqe_cnt in the header, not sq.wqe_cnt") {
		t.Errorf("a wrong member name: %v", err)
	}
}
