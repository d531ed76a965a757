package gen_test

import (
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// TestVersionOverride: Config.Version replaces the release libibverbs.pc
// gives, gates are cross-checked against it (warnings), and a malformed
// release is an error before anything is read.
func TestVersionOverride(t *testing.T) {
	root, err := rdmacore.IncludeRoot(".", "44.0")
	if err != nil {
		t.Fatal(err)
	}
	res, err := gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS, Version: "65", VersionSource: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res.C.Version != "65.0" || res.C.VersionSource != "test" || res.Package.Version != "65.0" {
		t.Errorf("version %q from %q, package %q", res.C.Version, res.C.VersionSource, res.Package.Version)
	}
	var lacks int
	for _, w := range res.Package.Warnings {
		if strings.Contains(w.Msg, "the rdma-core 65.0 header does not declare it; left out") {
			lacks++
		}
	}
	// ibv_wr_flush, the three umem export calls, 4 OOO_DP and 5 export
	// rules; mlx5dv_reg_dmabuf_mr and its 4 rules; _mlx5dv_create_flow
	// and 4 flow rules (type, bulk_obj, 2 ib_port); 10 struct fields
	// (ibv_port_attr 1, mlx5dv_context_attr 1, mlx5dv_context 4,
	// mlx5dv_obj 2, mlx5dv_flow_action_attr 1, mlx5dv_flow_matcher_attr 1);
	// the VAR export calls and mlx5dv_get_export_sizes (4), struct
	// mlx5dv_export_sizes and 7 VAR rules (63.0);
	// mlx5dv_get_data_direct_sysfs_path and its 2 rules (54.0); struct
	// mlx5dv_ooo_recv_wrs_caps (55.0); the DEVX object export calls (3) and
	// their 5 rules (63.0); mlx5dv_devx_uar_export_dmabuf_fd and its 2 rules
	// (62.0); struct mlx5dv_devx (54.0).
	if lacks != 61 {
		t.Errorf("%d warnings of items missing, want 61: %v", lacks, res.Package.Warnings)
	}
	if !strings.Contains(string(res.Files[0].Content), "(rdma-core 65.0)") {
		t.Errorf("%s does not name the given release", res.Files[0].Name)
	}
	if _, err := gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS, Version: "newest"}); err == nil || !strings.Contains(err.Error(), `"newest" is not a release like 56.1`) {
		t.Errorf("malformed release: %v", err)
	}
}
