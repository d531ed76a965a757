//go:build cgo

package verbs

/*
#include <stdlib.h>
#include <infiniband/verbs.h>

// ibv_qp_init_attr is opaque to generated/mlx5verbs: ibv_query_qp writes
// one, in C memory, which Query does not read (ibv_qp_attr.cap has the
// capabilities).
static struct ibv_qp_init_attr *mlx5gen_qp_init_attr_new(void) {
	return calloc(1, sizeof(struct ibv_qp_init_attr));
}
*/
import "C"

import (
	"errors"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// queryMask names every attribute device.QPInfo reports (ibv_query_qp(3):
// a hint; mlx5 returns them all).
const queryMask = mlx.IBV_QP_STATE | mlx.IBV_QP_PKEY_INDEX | mlx.IBV_QP_PORT | mlx.IBV_QP_ACCESS_FLAGS |
	mlx.IBV_QP_PATH_MTU | mlx.IBV_QP_AV | mlx.IBV_QP_DEST_QPN | mlx.IBV_QP_RQ_PSN | mlx.IBV_QP_MAX_DEST_RD_ATOMIC |
	mlx.IBV_QP_MIN_RNR_TIMER | mlx.IBV_QP_SQ_PSN | mlx.IBV_QP_TIMEOUT | mlx.IBV_QP_RETRY_CNT | mlx.IBV_QP_RNR_RETRY |
	mlx.IBV_QP_MAX_QP_RD_ATOMIC | mlx.IBV_QP_CAP

// Query reads the QP's state and attributes with ibv_query_qp (a system
// call: the kernel asks the device).
func (q *vqp) Query() (device.QPInfo, error) {
	init := C.mlx5gen_qp_init_attr_new()
	if init == nil {
		return device.QPInfo{}, errors.New("verbs: out of C memory for ibv_qp_init_attr")
	}
	defer C.free(unsafe.Pointer(init))
	var attr mlx.QPAttr
	if err := mv.QueryQP(q.qp, &attr, queryMask, mv.IBVQPInitAttrFrom(unsafe.Pointer(init))); err != nil {
		return device.QPInfo{}, err
	}
	return qpInfo(&attr), nil
}

// qpInfo is what ibv_query_qp wrote, in runtime/device's terms: the
// inverse of modifyAttr, with the primary path's destination as the
// remote endpoint (Ethernet: it routes by GID, is_global).
func qpInfo(a *mlx.QPAttr) device.QPInfo {
	return device.QPInfo{
		State: a.QPState,
		Attr: device.QPAttr{
			Access: a.QPAccessFlags, PKeyIdx: a.PkeyIndex, MTU: a.PathMTU,
			Remote: device.Endpoint{QPN: a.DestQPNum, PSN: a.RQPsn, LID: a.AHAttr.Dlid, GID: a.AHAttr.GRH.Dgid,
				GIDIndex: int(a.AHAttr.GRH.SgidIndex), Ethernet: a.AHAttr.IsGlobal != 0},
			SQPSN: a.SQPsn, MinRNR: a.MinRnrTimer, Timeout: a.Timeout, Retry: a.RetryCnt, RNRRetry: a.RnrRetry,
			RdAtomic: a.MaxRdAtomic,
		},
		DestRdAtomic: a.MaxDestRdAtomic,
		Caps: device.QPCaps{MaxSendWR: int(a.Cap.MaxSendWR), MaxRecvWR: int(a.Cap.MaxRecvWR), MaxSendSGE: int(a.Cap.MaxSendSGE),
			MaxRecvSGE: int(a.Cap.MaxRecvSGE), MaxInlineData: int(a.Cap.MaxInlineData)},
	}
}
