//go:build cgo && !mlx5gen_double

package verbs

// TestOpenNoDevice is about the real libibverbs: under the test double
// (tag mlx5gen_double, which the DEVX double tests run with) the device
// list is whatever the double answers, so it is left out there.

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// TestOpenNoDevice: without RDMA hardware, Open and List fail with an
// error matching device.ErrNoDevice (and the binding's ErrNoDevice) that
// says why; with hardware, the first device opens.
func TestOpenNoDevice(t *testing.T) {
	c, err := device.Open("")
	if len(sysDevices()) > 0 {
		if err != nil {
			t.Fatalf("Open of the first of %d devices: %v", len(sysDevices()), err)
		}
		c.Close()
		return
	}
	if err == nil {
		c.Close()
		t.Fatal("Open succeeded with no /sys/class/infiniband device")
	}
	if !errors.Is(err, device.ErrNoDevice) || !errors.Is(err, mv.ErrNoDevice) {
		t.Fatalf("Open: %v, want device.ErrNoDevice and mlx5verbs.ErrNoDevice", err)
	}
	if !strings.Contains(err.Error(), "/sys/class/infiniband") || !strings.Contains(err.Error(), "no RDMA device") {
		t.Errorf("Open: %q does not say why (no /sys/class/infiniband)", err)
	}
	if _, serr := os.Stat("/sys/class/infiniband"); serr != nil && !errors.Is(err, syscall.ENOSYS) {
		t.Errorf("Open: %v, want ENOSYS without /sys/class/infiniband", err)
	}
	if _, err := device.List(""); !errors.Is(err, device.ErrNoDevice) {
		t.Errorf("List: %v, want ErrNoDevice", err)
	}
	if _, err := device.Open("mlx5_7"); !errors.Is(err, device.ErrNoDevice) {
		t.Errorf("Open(mlx5_7): %v, want ErrNoDevice", err)
	}
}
