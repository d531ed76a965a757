package gen_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// undescribed is what each supported release's header declares that no
// descriptor in spec/api covers (issue 27 takes it to none). The list only
// shrinks: a new header item, or a descriptor file lost, fails
// TestUndescribed with the item's name, and an item described since fails
// it until it is taken off here, so the figure is never stale.
var undescribed = map[string][]string{
	"44.0": append(devxFuncs(), devxStructs...),
	"56.1": append(devxFuncs(), append([]string{"struct mlx5dv_devx"}, devxStructs...)...),
	"65.0": append(devxFuncs("mlx5dv_devx_obj_export()", "mlx5dv_devx_obj_import()", "mlx5dv_devx_obj_unimport()", "mlx5dv_devx_uar_export_dmabuf_fd()"),
		append([]string{"struct mlx5dv_devx"}, devxStructs...)...),
}

// devxStructs are the DEVX structs of every release without a descriptor.
var devxStructs = []string{"struct mlx5dv_devx_cmd_comp", "struct mlx5dv_devx_eq", "struct mlx5dv_devx_event_channel",
	"struct mlx5dv_devx_msi_vector", "struct mlx5dv_devx_uar"}

// devxFuncs are the DEVX functions of every release without a descriptor,
// and those of one release given.
func devxFuncs(more ...string) []string {
	return append([]string{
		"mlx5dv_devx_alloc_msi_vector()", "mlx5dv_devx_alloc_uar()", "mlx5dv_devx_cq_modify()", "mlx5dv_devx_cq_query()",
		"mlx5dv_devx_create_cmd_comp()", "mlx5dv_devx_create_eq()", "mlx5dv_devx_create_event_channel()",
		"mlx5dv_devx_destroy_cmd_comp()", "mlx5dv_devx_destroy_eq()", "mlx5dv_devx_destroy_event_channel()",
		"mlx5dv_devx_free_msi_vector()", "mlx5dv_devx_free_uar()", "mlx5dv_devx_get_async_cmd_comp()",
		"mlx5dv_devx_get_event()", "mlx5dv_devx_ind_tbl_modify()", "mlx5dv_devx_ind_tbl_query()",
		"mlx5dv_devx_obj_query_async()", "mlx5dv_devx_qp_modify()", "mlx5dv_devx_qp_query()", "mlx5dv_devx_query_eqn()",
		"mlx5dv_devx_srq_modify()", "mlx5dv_devx_srq_query()", "mlx5dv_devx_subscribe_devx_event()",
		"mlx5dv_devx_subscribe_devx_event_fd()", "mlx5dv_devx_wq_modify()", "mlx5dv_devx_wq_query()",
	}, more...)
}

// TestUndescribed holds each release's undescribed items to the list above.
func TestUndescribed(t *testing.T) {
	for _, v := range rdmacore.Versions {
		t.Run(v, func(t *testing.T) {
			want, ok := undescribed[v]
			if !ok {
				t.Fatalf("rdma-core %s: no entry in undescribed", v)
			}
			got := generate(t, v).Package.API.Uncovered
			var added, gone []string
			for _, n := range got {
				if !slices.Contains(want, n) {
					added = append(added, n)
				}
			}
			for _, n := range want {
				if !slices.Contains(got, n) {
					gone = append(gone, n)
				}
			}
			if len(added) > 0 {
				t.Errorf("rdma-core %s: %d items of the header have no descriptor: %s (describe them in spec/api; a struct Go cannot mirror takes opaque: with the reason)",
					v, len(added), strings.Join(added, ", "))
			}
			if len(gone) > 0 {
				t.Errorf("rdma-core %s: described now, take them off undescribed in gen/undescribed_test.go: %s", v, strings.Join(gone, ", "))
			}
		})
	}
}
