//go:build !mlx5gen_double

package verbslink

import (
	"debug/elf"
	"os"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
)

// TestLinked checks that this test binary, which links the bindings, imports
// every bound function that is a symbol of libibverbs or libmlx5 (the
// static inline ones are compiled into the shims), and that both libraries
// are loaded into the running process.
func TestLinked(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.ImportedSymbols()
	if err != nil {
		t.Fatal(err)
	}
	imported := map[string]string{}
	for _, s := range syms {
		imported[s.Name] = s.Library
	}
	n := 0
	for _, b := range mlx5verbs.Bound {
		if b.Inline {
			continue
		}
		n++
		if _, ok := imported[b.Name]; !ok {
			t.Errorf("%s: bound, but the test binary does not import it", b.Name)
		}
	}
	if n == 0 {
		t.Fatal("no bound function is a library symbol")
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	for _, lib := range []string{"libibverbs.so", "libmlx5.so"} {
		if !strings.Contains(strings.Join(libs, " "), lib) {
			t.Errorf("the test binary does not need %s (needs %v)", lib, libs)
		}
		if !strings.Contains(string(maps), "/"+lib) {
			t.Errorf("%s is not loaded into the running test", lib)
		}
	}
	t.Logf("%d bound library functions imported from %v", n, libs)
}
