//go:build cgo

package verbs

import (
	"runtime"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

type vqp struct {
	c    *vctx
	qp   mv.IBVQP
	kind device.QPKind
	mem  device.QPMemory
}

// dvAttr is the mlx5dv_qp_init_attr of cfg.
func dvAttr(cfg device.QPConfig) mlx.QPInitAttr {
	var dv mlx.QPInitAttr
	if cfg.MlxSendOps != 0 {
		dv.CompMask |= uint64(mlx.MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS)
		dv.SendOpsFlags = uint64(cfg.MlxSendOps)
	}
	if cfg.CreateFlags != 0 {
		dv.CompMask |= uint64(mlx.MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS)
		dv.CreateFlags = cfg.CreateFlags
	}
	if cfg.Kind == device.DCT {
		dv.CompMask |= uint64(mlx.MLX5DV_QP_INIT_ATTR_MASK_DC)
		dv.DCInitAttr.DCType = mlx.MLX5DV_DCTYPE_DCT
		dv.DCInitAttr.SetDCTAccessKey(cfg.DCAccessKey)
	}
	if cfg.Kind == device.DCI {
		dv.CompMask |= uint64(mlx.MLX5DV_QP_INIT_ATTR_MASK_DC)
		dv.DCInitAttr.DCType = mlx.MLX5DV_DCTYPE_DCI
		if cfg.LogNumConcurent != 0 {
			dv.CompMask |= uint64(mlx.MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS)
			*dv.DCInitAttr.DCIStreams() = mlx.DCIStreams{LogNumConcurent: uint8(cfg.LogNumConcurent), LogNumErrored: uint8(cfg.LogNumErrored)}
		}
	}
	return dv
}

// CreateQP creates an RC QP, a DCI or a DCT with mlx5dv_create_qp and
// maps its queues with mlx5dv_init_obj. A DCT (which receives through
// srq, and has no queue of its own) is not mapped.
func (p *vpd) CreateQP(cfg device.QPConfig, send, recv device.BackendCQ, srq device.BackendSRQ) (device.BackendQP, error) {
	var s mv.IBVSRQ
	if srq != nil {
		s = srq.(*vsrq).srq
	}
	want := qpCaps{uint32(cfg.MaxSendWR), uint32(cfg.MaxRecvWR), uint32(cfg.MaxSendSGE), uint32(cfg.MaxRecvSGE), uint32(cfg.MaxInlineData)}
	attr, err := newQPAttr(unsafe.Pointer(p.pd), send.(*vcq).cq, recv.(*vcq).cq, s, want, cfg.SigAll, uint64(cfg.SendOps), cfg.Kind != device.RC)
	if err != nil {
		return nil, err
	}
	defer attr.free()
	dv := dvAttr(cfg)
	qp, err := mv.CreateQP(p.c.ctx, attr.handle(), &dv)
	if err != nil {
		return nil, err
	}
	if cfg.Kind == device.DCT {
		return &vqp{c: p.c, qp: qp, kind: cfg.Kind, mem: device.QPMemory{QPN: qpNum(qp.Ptr())}}, nil
	}
	var out mlx.QP
	var pin runtime.Pinner
	pin.Pin(&out)
	err = mv.InitObj(&mlx.Obj{QPIn: qp.Ptr(), QPOut: &out}, uint64(mlx.MLX5DV_OBJ_QP))
	pin.Unpin()
	if err != nil {
		mv.DestroyQP(qp)
		return nil, err
	}
	q := &vqp{c: p.c, qp: qp, kind: cfg.Kind}
	q.mem = qpMemory(&out, qpNum(qp.Ptr()), attr.caps(), cfg, p.c.info.Caps)
	return q, nil
}

// qpMemory maps what mlx5dv_init_obj reported: the rings and doorbell
// record libmlx5 allocated and the UAR page the kernel mapped (Device: it
// is written with runtime/mmio).
func qpMemory(out *mlx.QP, qpn uint32, got qpCaps, cfg device.QPConfig, caps device.Caps) device.QPMemory {
	dbr := unsafe.Slice((*byte)(out.Dbrec), 8)
	bfLen := max(2*int(out.BFSize), 8)
	m := device.QPMemory{
		QPN: qpn,
		SQ: &qmem.Memory{
			SQ:     unsafe.Slice((*byte)(out.SQBuf), int(out.SQWQECnt)*int(out.SQStride)),
			DBR:    dbr,
			BF:     unsafe.Slice((*byte)(out.BFReg), bfLen),
			BFSize: int(out.BFSize),
			Device: true,
		},
		BF: sq.BlueFlame{Size: int(out.BFSize)},
		QP: sq.QP{Type: mlx.QPRC, SendOps: cfg.SendOps, MlxSendOps: cfg.MlxSendOps,
			MaxInlineData: int(got.inline), MaxSendSGE: int(got.sendSGE), MaxPost: int(out.SQWQECnt),
			Streams: cfg.LogNumConcurent != 0, LogNumConcurent: cfg.LogNumConcurent,
			MaxMemcpy: caps.MaxMemcpy, CryptoSingleBlock: caps.CryptoSingleBlock, CryptoMultiBlock: caps.CryptoMultiBlock},
		SigAll: cfg.SigAll,
	}
	if out.BFSize > 0 {
		m.BF.UUARN = 1 // a register with BlueFlame buffers
	}
	if cfg.Kind == device.DCI {
		m.QP.Type = mlx.QPDCI
	}
	if out.RQWQECnt > 0 {
		m.RQ = rq.Memory{Ring: unsafe.Slice((*byte)(out.RQBuf), int(out.RQWQECnt)*int(out.RQStride)), DBR: (*[4]byte)(dbr[0:4])}
		m.RQStride, m.RQMaxPost = int(out.RQStride), int(out.RQWQECnt)
	}
	return m
}

func (q *vqp) Memory() device.QPMemory { return q.mem }
func (q *vqp) Close() error            { return mv.DestroyQP(q.qp) }

// Modify moves the QP with the attributes ibv_modify_qp(3) requires for
// the transition of its kind.
func (q *vqp) Modify(state mlx.QPState, a device.QPAttr) error {
	attr, mask := modifyAttr(q.kind, state, a)
	return mv.ModifyQP(q.qp, &attr, mask)
}

// modifyAttr and ah are the API's (device.ModifyAttr, device.AHAttr):
// the attributes validated are the ones the C call gets.
func modifyAttr(kind device.QPKind, state mlx.QPState, a device.QPAttr) (mlx.QPAttr, mlx.QPAttrMask) {
	return device.ModifyAttr(kind, state, a)
}

func ah(remote device.Endpoint) mlx.AHAttr { return device.AHAttr(remote) }
