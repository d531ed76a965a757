//go:build mlx5gen_double && cgo

package verbs

import (
	"encoding/binary"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// lastCall is the one recorded call's arguments, checked to be fn.
func lastCall(t *testing.T, fn mlx.Func) []byte {
	t.Helper()
	calls := mv.DoubleCalls()
	if len(calls) != 1 || calls[0].Func != int(fn) {
		t.Fatalf("calls %v, want one %v", calls, fn)
	}
	return calls[0].Args
}

// TestFlowDouble: CreateFlowMatcher passes struct mlx5dv_flow_matcher_attr
// as the device API's configuration says (an FDB table through
// comp_mask and ft_type), CreateFlow passes the matcher, the values, and
// the actions with the QP's struct ibv_qp * and the tag in the union, and
// Close destroys the rule with ibv_destroy_flow.
func TestFlowDouble(t *testing.T) {
	c, p := devxCtx(t)
	res := mv.DoubleAlloc(8)
	defer mv.DoubleFree(res)
	mv.DoubleReset(int64(uintptr(res)), 0)
	cfg := device.FlowMatcherConfig{TableType: mlx.MLX5_IB_UAPI_FLOW_TABLE_TYPE_FDB, Priority: 7, CriteriaEnable: 1, Mask: make([]byte, 16)}
	bm, err := c.CreateFlowMatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := lastCall(t, mlx.FnCreateFlowMatcher)
	if got := binary.NativeEndian.Uint64(a); got != uint64(uintptr(p)) {
		t.Fatalf("context %#x, want %p", got, p)
	}
	var attr mlx.FlowMatcherAttr
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&attr)), unsafe.Sizeof(attr)), a[16:])
	if attr.Type != mlx.IBV_FLOW_ATTR_NORMAL || attr.Flags != 0 || attr.Priority != 7 || attr.MatchCriteriaEnable != 1 ||
		attr.MatchMask == nil || attr.CompMask != uint64(mlx.MLX5DV_FLOW_MATCHER_MASK_FT_TYPE) || attr.FtType != cfg.TableType {
		t.Fatalf("matcher attr %+v", attr)
	}
	qpp := mv.DoubleAlloc(64)
	defer mv.DoubleFree(qpp)
	mv.DoubleReset(int64(uintptr(res)), 0)
	f, err := bm.CreateFlow(make([]byte, 16), []device.BackendFlowAction{
		{Kind: device.FlowToQP, QP: &vqp{qp: mv.IBVQPFrom(qpp)}}, {Kind: device.FlowTag, Tag: 0xabcd}})
	if err != nil {
		t.Fatal(err)
	}
	a = lastCall(t, mlx.FnCreateFlow)
	if n := binary.NativeEndian.Uint64(a[16:]); n != 2 {
		t.Fatalf("num_actions %d, want 2", n)
	}
	act := a[32:] // the first action's 16 bytes, after its address
	if binary.NativeEndian.Uint32(act) != uint32(mlx.MLX5DV_FLOW_ACTION_DEST_IBV_QP) || binary.NativeEndian.Uint64(act[8:]) != uint64(uintptr(qpp)) {
		t.Fatalf("action 0 % x, want DEST_IBV_QP and the QP %p", act[:16], qpp)
	}
	mv.DoubleReset(0, 0)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := binary.NativeEndian.Uint64(lastCall(t, mlx.FnDestroyFlow)); got != uint64(uintptr(res)) {
		t.Fatalf("ibv_destroy_flow of %#x, want the rule %p", got, res)
	}
}
