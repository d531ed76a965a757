package resolve_test

import (
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

func hasFunc(p *model.Package, name string) bool {
	for _, f := range p.API.Funcs {
		if f.Name == name {
			return true
		}
	}
	return false
}

func hasRule(p *model.Package, id string) bool {
	for _, r := range p.API.Rules {
		if r.ID == id {
			return true
		}
	}
	return false
}

func warnings(p *model.Package) string {
	var b strings.Builder
	for _, w := range p.Warnings {
		b.WriteString(w.Error() + "\n")
	}
	return b.String()
}

// TestGatesFollowHeader: the 44.0 header, described as several releases,
// generates without a problem; what is generated follows what the header
// declares, and a gate the known release contradicts is a warning.
func TestGatesFollowHeader(t *testing.T) {
	for _, tc := range []struct {
		version string
		warns   []string // substrings, in order
	}{
		// No libibverbs.pc: the header alone decides, nothing to cross-check.
		{"", nil},
		// The gates are upstream releases: 44.0 has none of the gated items.
		{"44.0", nil},
		// A header said to be 56.1 that lacks what 45.0 and 55.0 added.
		{"56.1", []string{
			"spec/api/ibv_wr_post.yaml:232:5: function ibv_wr_flush is gated to rdma-core 45.0 and later, but the rdma-core 56.1 header does not declare it; left out",
			"rule create_qp.flags.ooo_dp (if_declared MLX5DV_QP_CREATE_OOO_DP) is gated to rdma-core 55.0 and later, but the rdma-core 56.1 header does not declare it; left out",
		}},
	} {
		t.Run("version="+tc.version, func(t *testing.T) {
			p, err := buildAs(t, tc.version, nil)
			if err != nil {
				t.Fatalf("the 44.0 header as rdma-core %q: %v", tc.version, err)
			}
			got := warnings(p)
			if tc.warns == nil && got != "" {
				t.Errorf("unexpected warnings:\n%s", got)
			}
			rest := got
			for _, w := range tc.warns {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("no warning %q in\n%s", w, got)
					continue
				}
				rest = rest[i+len(w):]
			}
			for _, fn := range []string{"ibv_wr_flush", "mlx5dv_devx_umem_export", "mlx5dv_devx_umem_import"} {
				if hasFunc(p, fn) {
					t.Errorf("%s generated, but the 44.0 header does not declare it", fn)
				}
			}
			if !hasFunc(p, "mlx5dv_wr_set_mkey_crypto") || !hasRule(p, "crypto.job_size") {
				t.Error("ungated items missing")
			}
			for _, id := range []string{"create_qp.flags.ooo_dp", "umem.export.buffer"} {
				if hasRule(p, id) {
					t.Errorf("rule %s generated, but the 44.0 header lacks its if_declared name", id)
				}
			}
		})
	}
}

// TestGatedItemsDeclaredEarly: items the header declares before their
// gate are generated, with a warning when the release is known.
func TestGatedItemsDeclaredEarly(t *testing.T) {
	extra := map[string]string{"x.yaml": `man: x(3)
enums:
  - {c: mlx5dv_dc_type, kind: values, since: "56.1"}
structs:
  - name: mlx5dv_striding_rq_init_attr
    fields:
      - {name: single_stride_log_num_of_bytes, type: uint32_t}
      - {name: single_wqe_log_num_of_strides, type: uint32_t}
      - {name: two_byte_shift_en, type: uint8_t, since: "56.1"}
      - {name: colour, type: int, since: "40.0"}
      - {name: shade, type: int, since: "40.0"}
rules:
  - id: x.dc
    section: S
    says: s
    kind: info
    if_declared: MLX5DV_DCTYPE_DCT
    since: "60.0"
  - id: x.nothing
    section: S
    says: s
    kind: info
    if_declared: MLX5DV_NO_SUCH_THING
  - id: x.flush
    section: S
    says: s
    kind: use
    funcs: [ibv_wr_flush]
`, "api/mlx5dv_create_wq.yaml": ""}
	for _, tc := range []struct {
		version string
		warns   []string
	}{
		{"", nil},
		{"44.0", []string{
			"spec/x.yaml:3:5: enum mlx5dv_dc_type is gated to rdma-core 56.1 and later, but the rdma-core 44.0 header declares it; generated from the header",
			"spec/x.yaml:9:9: struct mlx5dv_striding_rq_init_attr: field two_byte_shift_en is gated to rdma-core 56.1 and later, but the rdma-core 44.0 header declares it; generated from the header",
			"spec/x.yaml:10:9: struct mlx5dv_striding_rq_init_attr: field colour is gated to rdma-core 40.0 and later, but the rdma-core 44.0 header does not declare it; left out",
			"spec/x.yaml:11:9: struct mlx5dv_striding_rq_init_attr: field shade is gated to rdma-core 40.0 and later, but the rdma-core 44.0 header does not declare it; left out",
			"spec/x.yaml:13:5: rule x.dc (if_declared MLX5DV_DCTYPE_DCT) is gated to rdma-core 60.0 and later, but the rdma-core 44.0 header declares it; generated from the header",
		}},
	} {
		t.Run("version="+tc.version, func(t *testing.T) {
			p, err := buildAs(t, tc.version, extra)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := warnings(p), strings.Join(tc.warns, "\n"); strings.TrimSpace(got) != want {
				t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
			}
			if !hasRule(p, "x.dc") || hasRule(p, "x.nothing") || hasRule(p, "x.flush") {
				t.Errorf("rules: x.dc follows MLX5DV_DCTYPE_DCT, x.nothing and x.flush name what the header lacks")
			}
			var dc bool
			for _, e := range p.Enums {
				dc = dc || e.GoName == "DCType"
			}
			if !dc {
				t.Error("enum mlx5dv_dc_type not generated")
			}
			fields := -1
			for _, m := range p.API.Mirrors {
				if m.CName == "mlx5dv_striding_rq_init_attr" {
					fields = len(m.Fields)
				}
			}
			if fields != 3 {
				t.Errorf("mlx5dv_striding_rq_init_attr mirror has %d fields, want 3", fields)
			}
		})
	}
}
