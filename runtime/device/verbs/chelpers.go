//go:build cgo

package verbs

/*
#include <stdint.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

// ibv_qp_init_attr_ex is opaque to generated/mlx5verbs: these helpers
// fill one in C memory and read back the capabilities the QP got.
static struct ibv_qp_init_attr_ex *mlx5gen_qp_attr_new(struct ibv_pd *pd,
		struct ibv_cq *scq, struct ibv_cq *rcq, struct ibv_srq *srq, uint32_t max_send_wr,
		uint32_t max_recv_wr, uint32_t max_send_sge, uint32_t max_recv_sge,
		uint32_t max_inline, int sig_all, uint64_t send_ops, int driver) {
	struct ibv_qp_init_attr_ex *a = calloc(1, sizeof(*a));
	if (a == NULL)
		return NULL;
	a->send_cq = scq;
	a->recv_cq = rcq;
	a->srq = srq;
	a->cap.max_send_wr = max_send_wr;
	a->cap.max_recv_wr = max_recv_wr;
	a->cap.max_send_sge = max_send_sge;
	a->cap.max_recv_sge = max_recv_sge;
	a->cap.max_inline_data = max_inline;
	a->sq_sig_all = sig_all;
	a->qp_type = driver ? IBV_QPT_DRIVER : IBV_QPT_RC;
	a->pd = pd;
	a->comp_mask = IBV_QP_INIT_ATTR_PD;
	if (send_ops) {
		a->comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a->send_ops_flags = send_ops;
	}
	return a;
}

static void mlx5gen_qp_attr_caps(struct ibv_qp_init_attr_ex *a, uint32_t *out) {
	out[0] = a->cap.max_send_wr;
	out[1] = a->cap.max_recv_wr;
	out[2] = a->cap.max_send_sge;
	out[3] = a->cap.max_recv_sge;
	out[4] = a->cap.max_inline_data;
}

static struct ibv_cq *mlx5gen_cq_ex_to_cq(struct ibv_cq_ex *c) { return ibv_cq_ex_to_cq(c); }
static int mlx5gen_async_fd(struct ibv_context *c) { return c->async_fd; }
static uint32_t mlx5gen_qp_num(struct ibv_qp *qp) { return qp->qp_num; }
*/
import "C"

import (
	"errors"
	"unsafe"

	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
)

// qpAttr is an ibv_qp_init_attr_ex in C memory.
type qpAttr struct{ p *C.struct_ibv_qp_init_attr_ex }

type qpCaps struct{ sendWR, recvWR, sendSGE, recvSGE, inline uint32 }

func newQPAttr(pd unsafe.Pointer, send, recv mv.IBVCQ, srq mv.IBVSRQ, c qpCaps, sigAll bool, sendOps uint64, driver bool) (qpAttr, error) {
	b := func(v bool) C.int {
		if v {
			return 1
		}
		return 0
	}
	p := C.mlx5gen_qp_attr_new((*C.struct_ibv_pd)(pd), (*C.struct_ibv_cq)(send.Ptr()), (*C.struct_ibv_cq)(recv.Ptr()),
		(*C.struct_ibv_srq)(srq.Ptr()), C.uint32_t(c.sendWR), C.uint32_t(c.recvWR), C.uint32_t(c.sendSGE), C.uint32_t(c.recvSGE), C.uint32_t(c.inline),
		b(sigAll), C.uint64_t(sendOps), b(driver))
	if p == nil {
		return qpAttr{}, errors.New("verbs: out of C memory for ibv_qp_init_attr_ex")
	}
	return qpAttr{p}, nil
}

func (a qpAttr) handle() mv.QPInitAttrEx { return mv.QPInitAttrExFrom(unsafe.Pointer(a.p)) }

// caps returns the capabilities mlx5dv_create_qp wrote back.
func (a qpAttr) caps() qpCaps {
	var out [5]C.uint32_t
	C.mlx5gen_qp_attr_caps(a.p, &out[0])
	return qpCaps{uint32(out[0]), uint32(out[1]), uint32(out[2]), uint32(out[3]), uint32(out[4])}
}

func (a qpAttr) free() { C.free(unsafe.Pointer(a.p)) }

func cqOfEx(c mv.CQEx) mv.IBVCQ {
	return mv.IBVCQFrom(unsafe.Pointer(C.mlx5gen_cq_ex_to_cq((*C.struct_ibv_cq_ex)(c.Ptr()))))
}

func asyncFD(c mv.IBVContext) int {
	return int(C.mlx5gen_async_fd((*C.struct_ibv_context)(c.Ptr())))
}

func qpNum(qp unsafe.Pointer) uint32 { return uint32(C.mlx5gen_qp_num((*C.struct_ibv_qp)(qp))) }
