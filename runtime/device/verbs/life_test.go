//go:build cgo

package verbs

import (
	"errors"
	"runtime"
	"testing"
	"time"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
)

// standIns replaces libibverbs' registration calls for the test. The
// stand-ins keep nothing of the address (an unsafe.Pointer would keep the
// buffer alive itself, and the test could not fail).
func standIns(t *testing.T) {
	r, d, u, ud := regMR, deregMR, umemReg, umemDereg
	t.Cleanup(func() { regMR, deregMR, umemReg, umemDereg = r, d, u, ud })
	regMR = func(_ *mlx.IBVPD, _ unsafe.Pointer, n uint64, _ mlx.AccessFlags) (*mlx.MR, error) {
		return &mlx.MR{LKey: 0x11, RKey: 0x22, Length: n}, nil
	}
	deregMR = func(*mlx.MR) error { return nil }
	umemReg = func(mv.IBVContext, unsafe.Pointer, uint64, mlx.AccessFlags) (*mlx.DevxUmem, error) {
		return &mlx.DevxUmem{UmemID: 7}, nil
	}
	umemDereg = func(*mlx.DevxUmem) error { return nil }
}

type closer interface{ Close() error }

const heapSize = 1 << 16

// register registers a fresh Go heap buffer through reg and returns the
// backend object and a channel closed when the collector frees the
// buffer. Not inlined, so that no stack slot of the caller holds the
// buffer.
//
//go:noinline
func register(t *testing.T, reg func([]byte) (closer, error)) (closer, chan struct{}) {
	b := new([heapSize]byte)
	freed := make(chan struct{})
	runtime.SetFinalizer(b, func(*[heapSize]byte) { close(freed) })
	obj, err := reg(b[:])
	if err != nil {
		t.Fatal(err)
	}
	return obj, freed
}

// checkHeld: the buffer survives collections while obj is registered,
// and is freed once obj is closed (which shows the test can see a
// collection at all).
func checkHeld(t *testing.T, what string, reg func([]byte) (closer, error)) {
	obj, freed := register(t, reg)
	for i := 0; i < 4; i++ {
		runtime.GC()
	}
	select {
	case <-freed:
		t.Fatalf("%s: the collector freed the buffer while it was registered", what)
	case <-time.After(50 * time.Millisecond):
	}
	if err := obj.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		select {
		case <-freed:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("%s: the buffer was never freed after Close: the backend keeps it too long, or the test cannot observe collection", what)
}

// TestRegistrationHoldsBuffer: the backend's MR and umem keep their
// buffer reachable until deregistered, so the collector cannot free memory
// the device may still write (the API's documented rule is to register
// runtime/dma or C memory; this is the guard for a mistake).
func TestRegistrationHoldsBuffer(t *testing.T) {
	standIns(t)
	pd := &vpd{}
	checkHeld(t, "MR", func(b []byte) (closer, error) { return pd.RegMR(b, mlx.IBV_ACCESS_LOCAL_WRITE) })
	c := &vctx{devx: true}
	checkHeld(t, "umem", func(b []byte) (closer, error) { return c.RegUmem(b, mlx.IBV_ACCESS_LOCAL_WRITE) })
}

// TestRegistrationFailedCloseHolds: a deregistration that fails leaves
// the memory with the device, so the backend object keeps the buffer.
func TestRegistrationFailedCloseHolds(t *testing.T) {
	standIns(t)
	deregMR = func(*mlx.MR) error { return errBusy }
	buf := make([]byte, 64)
	m, err := (&vpd{}).RegMR(buf, mlx.IBV_ACCESS_LOCAL_WRITE)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != errBusy {
		t.Fatalf("Close: %v, want the deregistration's error", err)
	}
	if v := m.(*vmr); unsafe.SliceData(v.buf) != unsafe.SliceData(buf) {
		t.Fatal("the MR let its buffer go after a failed deregistration")
	}
}

var errBusy = errors.New("ibv_dereg_mr: EBUSY (stand-in)")
