package cheader

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestDetectVersion finds libibverbs.pc wherever an rdma-core install puts
// it, and says "unknown" (no release) for a tree without one.
func TestDetectVersion(t *testing.T) {
	pc := "prefix=/usr\nName: libibverbs\nVersion: 1.14.%s\n"
	tests := []struct {
		name    string
		files   map[string]string // path under the prefix -> content
		want    string
		wantSrc string
	}{
		{"debian multiarch", map[string]string{"lib/x86_64-linux-gnu/pkgconfig/libibverbs.pc": sprintfPC(pc, "44.0")}, "44.0", "pkg-config lib/x86_64-linux-gnu/pkgconfig/libibverbs.pc"},
		{"lib", map[string]string{"lib/pkgconfig/libibverbs.pc": sprintfPC(pc, "57.0")}, "57.0", "pkg-config lib/pkgconfig/libibverbs.pc"},
		{"lib64", map[string]string{"lib64/pkgconfig/libibverbs.pc": sprintfPC(pc, "52.0")}, "52.0", "pkg-config lib64/pkgconfig/libibverbs.pc"},
		{"none", nil, "", NoPC},
		{"other pc only", map[string]string{"lib/pkgconfig/libmlx5.pc": sprintfPC(pc, "52.0")}, "", NoPC},
		{"malformed version", map[string]string{"lib/pkgconfig/libibverbs.pc": "Version: 44\n"}, "", NoPC},
		{"not digits", map[string]string{"lib/pkgconfig/libibverbs.pc": "Version: 1.14.x.0\n"}, "", NoPC},
		{"first valid wins", map[string]string{
			"lib/pkgconfig/libibverbs.pc":   "Version: junk\n",
			"lib64/pkgconfig/libibverbs.pc": sprintfPC(pc, "60.0"),
		}, "60.0", "pkg-config lib64/pkgconfig/libibverbs.pc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := t.TempDir()
			root := filepath.Join(prefix, "include")
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			for p, c := range tt.files {
				path := filepath.Join(prefix, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			v, src := detectVersion(root + "/")
			if v != tt.want || src != tt.wantSrc {
				t.Errorf("detectVersion = %q, %q; want %q, %q", v, src, tt.want, tt.wantSrc)
			}
		})
	}
}

func sprintfPC(format, v string) string { return fmt.Sprintf(format, v) }
