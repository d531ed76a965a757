package wrcheck_test

import (
	"github.com/mlx5gen/mlx5gen/runtime/internal/ruletest"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
)

// TestSettersAnswerWhole: a setter's answer says when its work request has
// all it needs, the moment the writer finishes the WQE: on RC after the
// data; on a DCI after the second of the data and the address, in either
// order.
func TestSettersAnswerWhole(t *testing.T) {
	var ah [64]byte
	data := func(c *wrcheck.Chain) (bool, error) { return c.Data(mlx.FnWRSetSGE, 1, 0) }
	addr := func(c *wrcheck.Chain) (bool, error) {
		return c.DCAddr(mlx.FnWRSetDCAddr, unsafe.Pointer(&ah), -1)
	}
	for name, tc := range map[string]struct {
		qp    mlx.QPType
		calls []func(*wrcheck.Chain) (bool, error)
		whole []bool
	}{
		"RC":             {mlx.QPRC, []func(*wrcheck.Chain) (bool, error){data}, []bool{true}},
		"DCI data first": {mlx.QPDCI, []func(*wrcheck.Chain) (bool, error){data, addr}, []bool{false, true}},
		"DCI addr first": {mlx.QPDCI, []func(*wrcheck.Chain) (bool, error){addr, data}, []bool{false, true}},
	} {
		c := wrcheck.New(&wrcheck.QP{Type: tc.qp, SendOps: ruletest.RCSendOps, MaxSendSGE: 1})
		c.Start()
		if err := c.Builder(mlx.FnWRRDMAWrite, 0); err != nil {
			t.Fatal(name, err)
		}
		for i, call := range tc.calls {
			if whole, err := call(c); err != nil || whole != tc.whole[i] {
				t.Errorf("%s: setter %d answers whole=%v, %v; want %v", name, i, whole, err, tc.whole[i])
			}
		}
		if _, err := c.Complete(mlx.FnWRComplete); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestUMRAnsweredByTheFinishingCall: only the call that finishes an mkey
// configuration answers with its UMR, which names the mkey and says what
// the writer writes; a failed batch answers nothing.
func TestUMRAnsweredByTheFinishingCall(t *testing.T) {
	c := wrcheck.New(&wrcheck.QP{Type: mlx.QPRC, MlxSendOps: ruletest.RCMlxSendOps, MaxInlineData: 316})
	m := wrcheck.NewMkey(0x100, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 8)
	inline := uint32(mlx.IBV_SEND_INLINE)
	c.Start()
	if u, err := c.MkeyConfigure(mlx.FnWRMkeyConfigure, inline, m, 2, &mlx.MkeyConfAttr{}); err != nil || u != nil {
		t.Fatalf("configure: %+v, %v; want no UMR yet", u, err)
	}
	if u, err := c.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, uint32(mlx.IBV_ACCESS_LOCAL_WRITE)); err != nil || u != nil {
		t.Fatalf("access: %+v, %v; want no UMR yet", u, err)
	}
	u, err := c.MkeyLayout(mlx.FnWRSetMkeyLayoutList, wrcheck.Layout{Entries: 5, Length: 5 << 12})
	if want := (wrcheck.UMR{Mkey: m, Xlat: 128, WRs: 1}); err != nil || u == nil || *u != want {
		t.Fatalf("layout: %+v, %v; want %+v", u, err, want)
	}
	if _, err := c.Complete(mlx.FnWRComplete); err != nil {
		t.Fatal(err)
	}
	// A configuration with too many entries fails: no UMR, and the
	// batch's later calls answer its error.
	c.Start()
	c.MkeyConfigure(mlx.FnWRMkeyConfigure, inline, m, 1, &mlx.MkeyConfAttr{})
	if u, err := c.MkeyLayout(mlx.FnWRSetMkeyLayoutList, wrcheck.Layout{Entries: 9, Length: 9 << 12}); err == nil || u != nil {
		t.Fatalf("9 entries of an mkey of 8: %+v, %v", u, err)
	}
	if open, err := c.Complete(mlx.FnWRComplete); !open || err == nil {
		t.Fatalf("Complete: open %v, %v; want the batch's error", open, err)
	}
	if open, err := c.Complete(mlx.FnWRComplete); open || err == nil {
		t.Fatalf("Complete outside a batch: open %v, %v", open, err)
	}
	if c.Abort() {
		t.Fatal("Abort outside a batch says one was open")
	}
}
