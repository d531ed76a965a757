package cheader_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// TestPackFormsOnMLX5DV rewrites rdma-core 65.0's mlx5_wqe_ctrl_seg without
// its attributes and under each #pragma pack form of issue 9 (which once
// gave 20 bytes where gcc says 16), then compares the whole header with gcc.
func TestPackFormsOnMLX5DV(t *testing.T) {
	src, err := rdmacore.IncludeRoot(".", "65.0")
	if err != nil {
		t.Fatal(err)
	}
	const attrs = "} __attribute__((__packed__)) __attribute__((__aligned__(4)));"
	const head = "struct mlx5_wqe_ctrl_seg {"
	forms := []struct {
		name, before, after, extra string
		size                       int64
	}{
		{"push 1, push 4, pop", "#pragma pack(push,1)\n#pragma pack(push,4)\n#pragma pack(pop)\n", "#pragma pack(pop)\n", "", 16},
		{"_Pragma", "_Pragma(\"pack(1)\")\n", "_Pragma(\"pack()\")\n", "", 16},
		{"_Pragma from a macro", "#define PACKED_BEGIN _Pragma(\"pack(push, 1)\")\n#define PACKED_END _Pragma(\"pack(pop)\")\nPACKED_BEGIN\n", "PACKED_END\n", "", 16},
		{"set in an included header", "#include <infiniband/pack1.h>\n", "#pragma pack()\n", "#pragma pack(1)\n", 16},
		{"pack 1, push 8, pop", "#pragma pack(1)\n#pragma pack(push, 8)\n#pragma pack(pop)\n", "#pragma pack()\n", "", 16},
		{"bare push", "#pragma pack(push)\n", "#pragma pack(pop)\n", "", 20},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if err := os.CopyFS(root, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(root, "infiniband", "mlx5dv.h")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			h := string(b)
			i := strings.Index(h, head)
			j := i + strings.Index(h[i:], attrs)
			if i < 0 || j < i {
				t.Fatal("mlx5_wqe_ctrl_seg not found as expected")
			}
			h = h[:i] + f.before + h[i:j] + "};\n" + f.after + h[j+len(attrs):]
			if err := os.WriteFile(path, []byte(h), 0o644); err != nil {
				t.Fatal(err)
			}
			if f.extra != "" {
				if err := os.WriteFile(filepath.Join(root, "infiniband", "pack1.h"), []byte(f.extra), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m, err := cheader.Load(cheader.Config{IncludeRoot: root})
			if err != nil {
				t.Fatal(err)
			}
			if r := m.Struct("mlx5_wqe_ctrl_seg"); r.Size != f.size {
				t.Errorf("mlx5_wqe_ctrl_seg: %d bytes, want %d", r.Size, f.size)
			}
			_, bad := compareWithGCC(t, m, cheader.DefaultHeader)
			report(t, bad)
		})
	}
}
