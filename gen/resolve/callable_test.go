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
