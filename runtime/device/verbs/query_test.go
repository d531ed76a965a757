//go:build cgo

package verbs

import (
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// TestQPInfo: what ibv_query_qp writes reads back as the attributes the
// transitions' ibv_qp_attr set (modifyAttr's inverse), with the
// capabilities from its cap.
func TestQPInfo(t *testing.T) {
	remote := device.Endpoint{QPN: 0x42, PSN: 0x777, LID: 9}
	set := device.QPAttr{Access: mlx.IBV_ACCESS_REMOTE_WRITE | mlx.IBV_ACCESS_REMOTE_READ, PKeyIdx: 2, MTU: mlx.IBV_MTU_2048,
		Remote: remote, SQPSN: 5, MinRNR: 12, Timeout: 14, Retry: 6, RNRRetry: 7, RdAtomic: 4}
	var got mlx.QPAttr // as the device reports a QP in RTS: every transition's fields
	for _, s := range []mlx.QPState{mlx.IBV_QPS_INIT, mlx.IBV_QPS_RTR, mlx.IBV_QPS_RTS} {
		a, mask := modifyAttr(device.RC, s, set)
		if mask&^queryMask&^mlx.IBV_QP_STATE != 0 {
			t.Errorf("-> %v sets %v, which Query does not ask for", s, mask&^queryMask)
		}
		switch s {
		case mlx.IBV_QPS_INIT:
			got.QPAccessFlags, got.PkeyIndex = a.QPAccessFlags, a.PkeyIndex
		case mlx.IBV_QPS_RTR:
			got.PathMTU, got.AHAttr, got.MinRnrTimer = a.PathMTU, a.AHAttr, a.MinRnrTimer
			got.DestQPNum, got.RQPsn, got.MaxDestRdAtomic = a.DestQPNum, a.RQPsn, a.MaxDestRdAtomic
		case mlx.IBV_QPS_RTS:
			got.Timeout, got.RetryCnt, got.RnrRetry, got.SQPsn, got.MaxRdAtomic = a.Timeout, a.RetryCnt, a.RnrRetry, a.SQPsn, a.MaxRdAtomic
		}
	}
	got.QPState = mlx.IBV_QPS_ERR
	got.Cap = mlx.QPCap{MaxSendWR: 64, MaxRecvWR: 32, MaxSendSGE: 2, MaxRecvSGE: 1, MaxInlineData: 60}
	info := qpInfo(&got)
	if info.State != mlx.IBV_QPS_ERR || info.Attr != set || info.DestRdAtomic != 4 {
		t.Errorf("qpInfo: state %v, %+v, dest rd atomic %d; want IBV_QPS_ERR, %+v, 4", info.State, info.Attr, info.DestRdAtomic, set)
	}
	if want := (device.QPCaps{MaxSendWR: 64, MaxRecvWR: 32, MaxSendSGE: 2, MaxRecvSGE: 1, MaxInlineData: 60}); info.Caps != want {
		t.Errorf("qpInfo caps %+v, want %+v", info.Caps, want)
	}
	roce := device.Endpoint{QPN: 1, GID: [16]byte{0xfe, 0x80, 15: 1}, Ethernet: true}
	got.AHAttr = ah(roce)
	if r := qpInfo(&got).Attr.Remote; r.GID != roce.GID || !r.Ethernet {
		t.Errorf("a RoCE path reads back as %+v", r)
	}
}

// TestOverrunRecorded: a CQ_ERR event read for one of the context's CQs
// marks that CQ overrun (and no other), until the CQ is forgotten.
func TestOverrunRecorded(t *testing.T) {
	var a, b [8]byte
	pa, pb := unsafe.Pointer(&a), unsafe.Pointer(&b)
	c := &vctx{cqs: map[unsafe.Pointer]uint32{pa: 1, pb: 2}}
	qa, qb := &vcq{c: c, cq: mv.IBVCQFrom(pa)}, &vcq{c: c, cq: mv.IBVCQFrom(pb)}
	defer overruns.Delete(pa)
	if qa.Overrun() || qb.Overrun() {
		t.Fatal("a new CQ reports an overrun")
	}
	var stranger [8]byte
	c.markOverrun(unsafe.Pointer(&stranger)) // not the context's CQ
	c.markOverrun(pa)
	if !qa.Overrun() || qb.Overrun() {
		t.Fatalf("after CQ_ERR of CQ 1: overrun %v and %v, want true and false", qa.Overrun(), qb.Overrun())
	}
	if _, ok := overruns.Load(unsafe.Pointer(&stranger)); ok {
		t.Fatal("a CQ of no context was recorded")
	}
}
