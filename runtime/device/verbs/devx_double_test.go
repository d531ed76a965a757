//go:build mlx5gen_double && cgo

package verbs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"syscall"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// These tests run the backend's DEVX calls against the generated test
// double (go test -tags mlx5gen_double), which records the arguments C
// receives: the command buffers reach libmlx5 as the caller's own bytes
// (their first byte's address and their exact length, no copy, no
// truncation), and its errno comes back wrapped.

// args is what the double records for pointers and sizes.
type args []byte

func (a args) ptr(p unsafe.Pointer) args {
	return binary.NativeEndian.AppendUint64(a, uint64(uintptr(p)))
}
func (a args) u64(v uint64) args { return binary.NativeEndian.AppendUint64(a, v) }

// oneCall checks the one recorded call: fn with the bytes want.
func oneCall(t *testing.T, fn mlx.Func, want []byte) {
	t.Helper()
	calls := mv.DoubleCalls()
	if len(calls) != 1 || mv.DoubleOverflow() {
		t.Fatalf("%d calls recorded, want 1", len(calls))
	}
	if calls[0].Func != int(fn) || !bytes.Equal(calls[0].Args, want) {
		t.Fatalf("C got function %d\n% x\nwant %d\n% x", calls[0].Func, calls[0].Args, fn, want)
	}
}

func devxCtx(t *testing.T) (*vctx, unsafe.Pointer) {
	p := mv.DoubleAlloc(8)
	t.Cleanup(func() { mv.DoubleFree(p) })
	return &vctx{ctx: mv.IBVContextFrom(p), devx: true}, p
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

func bufArgs(a args, in, out []byte) args {
	return a.ptr(unsafe.Pointer(&in[0])).u64(uint64(len(in))).ptr(unsafe.Pointer(&out[0])).u64(uint64(len(out)))
}

// TestDevxGeneralCmdDouble: mlx5dv_devx_general_cmd gets the context and
// the caller's buffers; EREMOTEIO comes back matching syscall.EREMOTEIO;
// a context opened without DEVX calls nothing.
func TestDevxGeneralCmdDouble(t *testing.T) {
	c, ctxp := devxCtx(t)
	in, out := pattern(40, 1), pattern(24, 2)
	keep := bytes.Clone(in)
	mv.DoubleReset(0, 0)
	if err := c.DevxGeneralCmd(in, out); err != nil {
		t.Fatal(err)
	}
	oneCall(t, mlx.FnDevxGeneralCmd, bufArgs(args{}.ptr(ctxp), in, out))
	if !bytes.Equal(in, keep) {
		t.Fatal("the call changed in")
	}
	mv.DoubleReset(int64(syscall.EREMOTEIO), 0)
	if err := c.DevxGeneralCmd(in, out); !errors.Is(err, syscall.EREMOTEIO) {
		t.Fatalf("%v, want EREMOTEIO", err)
	}
	c.devx = false
	mv.DoubleReset(0, 0)
	if err := c.DevxGeneralCmd(in, out); !errors.Is(err, device.ErrNoDevx) || len(mv.DoubleCalls()) != 0 {
		t.Fatalf("without DEVX: %v, %d calls", err, len(mv.DoubleCalls()))
	}
}

// TestDevxObjDouble: create passes the buffers and returns libmlx5's
// handle; query, modify and destroy pass that handle and their buffers;
// a failed create returns no object.
func TestDevxObjDouble(t *testing.T) {
	c, ctxp := devxCtx(t)
	in, out := pattern(64, 3), pattern(16, 4)
	h := mv.DoubleAlloc(8)
	defer mv.DoubleFree(h)
	mv.DoubleReset(int64(uintptr(h)), 0)
	o, err := c.DevxObjCreate(in, out)
	if err != nil {
		t.Fatal(err)
	}
	oneCall(t, mlx.FnDevxObjCreate, bufArgs(args{}.ptr(ctxp), in, out))
	qin, qout := pattern(16, 5), pattern(128, 6)
	for _, step := range []struct {
		fn   mlx.Func
		call func() error
		want args
	}{
		{mlx.FnDevxObjQuery, func() error { return o.Query(qin, qout) }, bufArgs(args{}.ptr(h), qin, qout)},
		{mlx.FnDevxObjModify, func() error { return o.Modify(in, out) }, bufArgs(args{}.ptr(h), in, out)},
		{mlx.FnDevxObjDestroy, o.Close, args{}.ptr(h)},
	} {
		mv.DoubleReset(0, 0)
		if err := step.call(); err != nil {
			t.Fatal(err)
		}
		oneCall(t, step.fn, step.want)
	}
	mv.DoubleReset(0, syscall.EREMOTEIO)
	if o, err := c.DevxObjCreate(in, out); o != nil || !errors.Is(err, syscall.EREMOTEIO) {
		t.Fatalf("a failed create: %v, %v", o, err)
	}
}

// TestPDNDouble: PDN asks mlx5dv_init_obj for MLX5DV_OBJ_PD with the PD
// in pd.in and a struct to fill in pd.out.
func TestPDNDouble(t *testing.T) {
	pdp := mv.DoubleAlloc(64)
	defer mv.DoubleFree(pdp)
	p := &vpd{pd: (*mlx.IBVPD)(pdp)}
	mv.DoubleReset(0, 0)
	if _, err := p.PDN(); err != nil {
		t.Fatal(err)
	}
	calls := mv.DoubleCalls()
	if len(calls) != 1 || calls[0].Func != int(mlx.FnInitObj) {
		t.Fatalf("calls %v, want one mlx5dv_init_obj", calls)
	}
	a := calls[0].Args[8:] // after the address of the mlx5dv_obj: its bytes, then obj_type
	var o mlx.Obj
	pdIn := unsafe.Offsetof(o.PDIn)
	if got := binary.NativeEndian.Uint64(a[pdIn:]); got != uint64(uintptr(pdp)) {
		t.Errorf("pd.in %#x, want the PD %p", got, pdp)
	}
	if binary.NativeEndian.Uint64(a[unsafe.Offsetof(o.PDOut):]) == 0 {
		t.Error("pd.out is NULL")
	}
	if got := binary.NativeEndian.Uint64(a[unsafe.Sizeof(o):]); got != uint64(mlx.MLX5DV_OBJ_PD) {
		t.Errorf("obj_type %#x, want MLX5DV_OBJ_PD", got)
	}
	mv.DoubleReset(int64(syscall.EINVAL), 0)
	if _, err := p.PDN(); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a failed init_obj: %v", err)
	}
}
