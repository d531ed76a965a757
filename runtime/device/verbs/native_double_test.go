//go:build mlx5gen_double && cgo

package verbs

import (
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
)

// TestNativeDouble: each backend object hands out the C object it was
// made from, and a binding given it through its handle constructor passes
// that pointer to C (the double records mlx5dv_devx_general_cmd's
// context argument).
func TestNativeDouble(t *testing.T) {
	c, p := devxCtx(t)
	if got := c.Native(); got != p {
		t.Fatalf("vctx.Native %p, want %p", got, p)
	}
	objs := make([]unsafe.Pointer, 4)
	for i := range objs {
		objs[i] = mv.DoubleAlloc(64)
		defer mv.DoubleFree(objs[i])
	}
	for name, got := range map[string]unsafe.Pointer{
		"vpd":  (&vpd{pd: (*mlx.IBVPD)(objs[0])}).Native(),
		"vcq":  (&vcq{cq: mv.IBVCQFrom(objs[1])}).Native(),
		"vqp":  (&vqp{qp: mv.IBVQPFrom(objs[2])}).Native(),
		"vsrq": (&vsrq{srq: mv.IBVSRQFrom(objs[3])}).Native(),
	} {
		want := map[string]unsafe.Pointer{"vpd": objs[0], "vcq": objs[1], "vqp": objs[2], "vsrq": objs[3]}[name]
		if got != want {
			t.Errorf("%s.Native %p, want %p", name, got, want)
		}
	}
	in, out := pattern(16, 1), make([]byte, 16)
	mv.DoubleReset(0, 0)
	if err := mv.DevxGeneralCmd(mv.IBVContextFrom(c.Native()), unsafe.Pointer(&in[0]), uint64(len(in)), unsafe.Pointer(&out[0]), uint64(len(out))); err != nil {
		t.Fatal(err)
	}
	oneCall(t, mlx.FnDevxGeneralCmd, bufArgs(args{}.ptr(p), in, out))
}
