//go:build !mlx5gen_double

package verbslink

import (
	"debug/elf"
	"errors"
	"os"
	"strings"
	"syscall"
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

// TestNoDevice calls the real ibv_get_device_list. Without
// /sys/class/infiniband (this machine, CI) libibverbs fails with ENOSYS,
// and the binding's error says there is no RDMA device and why, matches
// ErrNoDevice and keeps the errno. With devices, the list is released.
func TestNoDevice(t *testing.T) {
	var n int32 = -1
	list, err := mlx5verbs.GetDeviceList(&n)
	if _, statErr := os.Stat("/sys/class/infiniband"); statErr == nil {
		if err != nil {
			t.Fatalf("/sys/class/infiniband exists, but %v", err)
		}
		t.Logf("%d RDMA devices", n)
		mlx5verbs.FreeDeviceList(list)
		return
	}
	if err == nil {
		mlx5verbs.FreeDeviceList(list)
		t.Fatalf("ibv_get_device_list succeeded (%d devices) without /sys/class/infiniband", n)
	}
	if !errors.Is(err, mlx5verbs.ErrNoDevice) || !errors.Is(err, syscall.ENOSYS) {
		t.Fatalf("%v: want ErrNoDevice wrapping ENOSYS", err)
	}
	for _, want := range []string{"ibv_get_device_list", "no RDMA device", "/sys/class/infiniband"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	t.Log(err)
}
