package device_test

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// Native of the fake context: the fixture stands for a C object by its
// own address, as the verbs backend hands out its struct ibv_context *.
func (c *fakeCtx) Native() unsafe.Pointer { return unsafe.Pointer(c) }

// TestNative: Native hands out what the backend's object stands for; an
// object whose backend has none is refused with ErrNoNative (also
// errors.ErrUnsupported) naming the object; a closed one with ErrClosed.
func TestNative(t *testing.T) {
	c := openFake(t)
	fakes.Lock()
	fc := fakes.last
	fakes.Unlock()
	p, err := c.Native()
	if err != nil || p != unsafe.Pointer(fc) {
		t.Fatalf("Context.Native: %p, %v; want the backend's %p", p, err, fc)
	}
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	if p, err := pd.Native(); p != nil || !errors.Is(err, device.ErrNoNative) || !errors.Is(err, errors.ErrUnsupported) ||
		!strings.Contains(err.Error(), "PD") {
		t.Fatalf("PD.Native of a backend PD without a C object: %p, %v; want ErrNoNative naming the PD", p, err)
	}
	cq, err := c.CreateCQ(device.CQConfig{CQEs: 8})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cq.Native(); !errors.Is(err, device.ErrNoNative) {
		t.Fatalf("CQ.Native: %v, want ErrNoNative", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func() (unsafe.Pointer, error){"Context": c.Native, "PD": pd.Native, "CQ": cq.Native} {
		if p, err := f(); p != nil || !errors.Is(err, device.ErrClosed) {
			t.Errorf("%s.Native after Close: %p, %v; want ErrClosed", name, p, err)
		}
	}
}
