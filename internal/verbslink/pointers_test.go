//go:build mlx5gen_double

package verbslink

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
)

// sigAttr is a valid signature attribute whose memory domain and CRC
// parameters are Go memory: the attribute holds Go pointers.
func sigAttr() (*mlx5dv.SigBlockAttr, *mlx5dv.SigBlockDomain, *mlx5dv.SigCRC) {
	crc := &mlx5dv.SigCRC{Type: mlx5dv.MLX5DV_SIG_CRC_TYPE_CRC32, Seed: 0xffffffff}
	mem := &mlx5dv.SigBlockDomain{SigType: mlx5dv.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx5dv.MLX5DV_BLOCK_SIZE_512}
	mem.SetSigCRC(crc)
	return &mlx5dv.SigBlockAttr{Mem: mem}, mem, crc
}

// TestPinnedPointers passes a struct holding Go pointers whose targets are
// pinned: cgo accepts it, and C receives the struct as Go laid it out.
func TestPinnedPointers(t *testing.T) {
	attr, mem, crc := sigAttr()
	var pin runtime.Pinner
	pin.Pin(mem)
	pin.Pin(crc)
	defer pin.Unpin()
	qp := mlx5verbs.QPExFrom(mlx5verbs.DoubleAlloc(8))
	defer mlx5verbs.DoubleFree(qp.Ptr())
	mlx5verbs.DoubleReset(0, 0)
	if err := mlx5verbs.WRSetMkeySigBlock(qp, attr); err != nil {
		t.Fatal(err)
	}
	calls := mlx5verbs.DoubleCalls()
	if len(calls) != 1 {
		t.Fatalf("%d calls, want 1", len(calls))
	}
	got := calls[0].Args[16:] // after the two pointers: the attribute's bytes
	want := unsafe.Slice((*byte)(unsafe.Pointer(attr)), unsafe.Sizeof(*attr))
	if string(got) != string(want) {
		t.Fatalf("C received % x, want % x", got, want)
	}
}

// TestUnpinnedPointerPanics passes the same struct without pinning: cgo's
// check refuses the call before C runs, so the rule is enforced, not assumed.
func TestUnpinnedPointerPanics(t *testing.T) {
	if strings.Contains(os.Getenv("GODEBUG"), "cgocheck=0") {
		t.Fatal("cgocheck is off (GODEBUG=cgocheck=0): the pointer rules cannot be tested")
	}
	attr, _, _ := sigAttr()
	qp := mlx5verbs.QPExFrom(mlx5verbs.DoubleAlloc(8))
	defer mlx5verbs.DoubleFree(qp.Ptr())
	mlx5verbs.DoubleReset(0, 0)
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(panicText(r), "unpinned Go pointer") {
			t.Fatalf("recovered %v, want cgo's unpinned Go pointer panic", r)
		}
		if n := len(mlx5verbs.DoubleCalls()); n != 0 {
			t.Fatalf("C was called %d times", n)
		}
	}()
	mlx5verbs.WRSetMkeySigBlock(qp, attr)
}

func panicText(r any) string {
	if e, ok := r.(error); ok {
		return e.Error()
	}
	if s, ok := r.(string); ok {
		return s
	}
	return ""
}

// TestCgocheck2Active proves, in the re-run of TestCgocheck2, that the
// binary was built with GOEXPERIMENT=cgocheck2: storing a Go pointer into C
// memory is a fatal error only then, so a child process of this binary
// must die of it.
func TestCgocheck2Active(t *testing.T) {
	if os.Getenv(innerEnv) == "" {
		return // only the re-run is built with the experiment
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStoreGoPointer$")
	cmd.Env = append(os.Environ(), storeEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "unpinned Go pointer stored into non-Go memory") {
		t.Fatalf("storing a Go pointer into C memory did not fail as cgocheck2 makes it (err %v):\n%s", err, out)
	}
}

const storeEnv = "MLX5GEN_STORE_GO_POINTER"

// TestStoreGoPointer breaks cgo's rules on purpose, in the child process of
// TestCgocheck2Active only.
func TestStoreGoPointer(t *testing.T) {
	if os.Getenv(storeEnv) == "" {
		return
	}
	p := (*unsafe.Pointer)(mlx5verbs.DoubleAlloc(8))
	*p = unsafe.Pointer(new(int))
	t.Fatal("the store of a Go pointer into C memory was not caught")
}

// TestNoDeviceDouble: only the errnos of ibv_get_device_list that mean
// "no device" match ErrNoDevice; the errno stays reachable either way.
func TestNoDeviceDouble(t *testing.T) {
	for _, c := range []struct {
		errno    syscall.Errno
		noDevice bool
	}{{syscall.ENOSYS, true}, {syscall.ENODEV, true}, {syscall.ENOMEM, false}} {
		mlx5verbs.DoubleReset(0, c.errno)
		_, err := mlx5verbs.GetDeviceList(nil)
		if errors.Is(err, mlx5verbs.ErrNoDevice) != c.noDevice || !errors.Is(err, c.errno) {
			t.Errorf("errno %v: %v: ErrNoDevice %v, want %v", c.errno, err, errors.Is(err, mlx5verbs.ErrNoDevice), c.noDevice)
		}
	}
	mlx5verbs.DoubleReset(0, syscall.ENOSYS)
	if _, err := mlx5verbs.OpenDevice(mlx5verbs.DeviceFrom(nil), nil); errors.Is(err, mlx5verbs.ErrNoDevice) {
		t.Errorf("%v: another function's ENOSYS is not ErrNoDevice", err)
	}
}

// TestValidatedBeforeC: a binding checks its arguments with the generated
// validators and, on a violation, returns the *RuleError (wrapping the
// errno libmlx5 would give) without calling C.
func TestValidatedBeforeC(t *testing.T) {
	ctx := mlx5verbs.IBVContextFrom(mlx5verbs.DoubleAlloc(8))
	defer mlx5verbs.DoubleFree(ctx.Ptr())
	qp := mlx5verbs.QPExFrom(ctx.Ptr())
	for name, call := range map[string]func() error{
		"argument rule (DevxUmemReg access)": func() error {
			_, err := mlx5verbs.DevxUmemReg(ctx, nil, 4096, 1<<30)
			return err
		},
		"struct rule (WRSetMkeySigBlock with no domain)": func() error {
			return mlx5verbs.WRSetMkeySigBlock(qp, &mlx5dv.SigBlockAttr{})
		},
	} {
		mlx5verbs.DoubleReset(0, 0)
		err := call()
		var re *mlx5dv.RuleError
		if !errors.As(err, &re) || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%s: %v, want a *RuleError wrapping EINVAL", name, err)
		}
		if n := len(mlx5verbs.DoubleCalls()); n != 0 {
			t.Errorf("%s: C was called %d times after a violation", name, n)
		}
	}
}
