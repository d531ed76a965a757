package cref

/*
#cgo CFLAGS: -O2
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <infiniband/mlx5dv.h>

// The barrier libmlx5 puts between seeing a CQE's owner bit and reading
// the rest of it (rdma-core's udma_from_device_barrier).
static inline void from_device_barrier(void) {
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("lfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ volatile("dmb oshld" ::: "memory");
#else
	__sync_synchronize();
#endif
}

#define CQB_SLOTS 256

// cq_bench is the state of a requester-only poller: the CQ ring, its
// consumer index and doorbell record, one QP, and the send queue's
// per-slot bookkeeping (wr_id and WQE head by wqe_counter).
struct cq_bench {
	unsigned char *buf;
	uint32_t mask, shift, ci;
	volatile uint32_t *dbrec;
	uint32_t qpn;
	uint32_t sq_tail;
	uint64_t sink;
	uint64_t wrid[CQB_SLOTS];
	uint32_t wqe_head[CQB_SLOTS];
};

static struct cq_bench *cqb_new(void *buf, uint32_t ncqe, void *dbrec, uint32_t qpn) {
	struct cq_bench *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->buf = buf;
	q->mask = ncqe - 1;
	while ((1u << q->shift) < ncqe)
		q->shift++;
	q->dbrec = dbrec;
	q->qpn = qpn;
	return q;
}

// cqb_complete fills wc from a requester CQE as libmlx5 does: the QP by
// QPN, the wr_id and WQE head by wqe_counter (the send queue's tail moves
// past it), the opcode from the CQE's send opcode, every ibv_wc field
// defined. It returns 0, or -1 for a CQE it does not handle.
static inline int cqb_complete(struct cq_bench *q, struct mlx5_cqe64 *cqe, struct ibv_wc *w) {
	uint32_t sop_qpn = be32toh(cqe->sop_drop_qpn);
	if (mlx5dv_get_cqe_opcode(cqe) != MLX5_CQE_REQ || (sop_qpn & 0xffffff) != q->qpn)
		return -1;
	memset(w, 0, sizeof(*w));
	uint32_t idx = be16toh(cqe->wqe_counter) & (CQB_SLOTS - 1);
	w->wr_id = q->wrid[idx];
	q->sq_tail = q->wqe_head[idx] + 1;
	w->qp_num = sop_qpn & 0xffffff;
	switch (sop_qpn >> 24) {
	case MLX5_OPCODE_RDMA_WRITE_IMM:
		w->wc_flags |= IBV_WC_WITH_IMM;
		// fallthrough
	case MLX5_OPCODE_RDMA_WRITE:
		w->opcode = IBV_WC_RDMA_WRITE;
		break;
	case MLX5_OPCODE_SEND_IMM:
		w->wc_flags |= IBV_WC_WITH_IMM;
		// fallthrough
	case MLX5_OPCODE_SEND:
	case MLX5_OPCODE_SEND_INVAL:
		w->opcode = IBV_WC_SEND;
		break;
	case MLX5_OPCODE_RDMA_READ:
		w->opcode = IBV_WC_RDMA_READ;
		w->byte_len = be32toh(cqe->byte_cnt);
		break;
	}
	w->status = IBV_WC_SUCCESS;
	return 0;
}

static inline struct mlx5_cqe64 *cqb_sw_cqe(struct cq_bench *q, uint32_t n) {
	struct mlx5_cqe64 *cqe = (void *)(q->buf + ((size_t)(n & q->mask) << 6));
	if (mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_INVALID || mlx5dv_get_cqe_owner(cqe) != ((n >> q->shift) & 1))
		return NULL;
	return cqe;
}

// cqb_poll polls up to n requester CQEs into wc as ibv_poll_cq does with
// libmlx5: per CQE, the owner bit against the consumer index's pass, then
// the barrier, then the body; then SET_CI in the doorbell record. It
// returns the completions polled, or -1 at a CQE it does not handle.
static int cqb_poll(struct cq_bench *q, struct ibv_wc *wc, int n) {
	int i;
	for (i = 0; i < n; i++) {
		struct mlx5_cqe64 *cqe = cqb_sw_cqe(q, q->ci);
		if (!cqe)
			break;
		q->ci++;
		from_device_barrier();
		if (cqb_complete(q, cqe, &wc[i]) < 0) {
			*q->dbrec = htobe32(q->ci & 0xffffff);
			return -1;
		}
	}
	*q->dbrec = htobe32(q->ci & 0xffffff);
	return i;
}

// cqb_poll_batched is cqb_poll ordered as runtime/cq's fast path: the
// owner bits of up to n CQEs first, one barrier, then their bodies.
static int cqb_poll_batched(struct cq_bench *q, struct ibv_wc *wc, int n) {
	int k = 0, i;
	while (k < n && cqb_sw_cqe(q, q->ci + k))
		k++;
	if (k)
		from_device_barrier();
	for (i = 0; i < k; i++) {
		struct mlx5_cqe64 *cqe = (void *)(q->buf + ((size_t)((q->ci) & q->mask) << 6));
		q->ci++;
		if (cqb_complete(q, cqe, &wc[i]) < 0) {
			*q->dbrec = htobe32(q->ci & 0xffffff);
			return -1;
		}
	}
	*q->dbrec = htobe32(q->ci & 0xffffff);
	return i;
}

// cqb_run polls batches of up to batch (at most 16) completions polls
// times, adding up the wr_ids (so that nothing is optimised away); it
// returns the completions polled, or -1. batched selects
// cqb_poll_batched.
static int64_t cqb_run(struct cq_bench *q, uint64_t polls, int batch, int batched) {
	struct ibv_wc wc[16];
	int64_t total = 0;
	if (batch > 16)
		batch = 16;
	for (uint64_t p = 0; p < polls; p++) {
		int n = batched ? cqb_poll_batched(q, wc, batch) : cqb_poll(q, wc, batch);
		if (n < 0)
			return -1;
		for (int i = 0; i < n; i++)
			q->sink += wc[i].wr_id;
		total += n;
	}
	return total;
}
*/
import "C"

import "unsafe"

// CQPollSlots is the send queue size of the C poller's bookkeeping.
const CQPollSlots = C.CQB_SLOTS

// CQPoller is a C loop polling requester CQEs with mlx5dv.h's CQE helpers
// (mlx5dv_get_cqe_owner, mlx5dv_get_cqe_opcode, struct mlx5_cqe64), the
// baseline of runtime/cq's Poll. Its state lives in C memory.
type CQPoller struct{ p *C.struct_cq_bench }

// NewCQPoller makes a poller on a CQ of ncqe 64-byte CQEs at buf (not Go
// memory) with its doorbell record at dbrec, for the QP qpn; Close frees it.
func NewCQPoller(buf unsafe.Pointer, ncqe uint32, dbrec unsafe.Pointer, qpn uint32) *CQPoller {
	p := C.cqb_new(buf, C.uint32_t(ncqe), dbrec, C.uint32_t(qpn))
	if p == nil {
		return nil
	}
	return &CQPoller{p}
}

// SetSlot sets the send queue's bookkeeping of slot i: the wr_id and the
// WQE head a completion of the WQE at i takes.
func (q *CQPoller) SetSlot(i uint32, wrID uint64, wqeHead uint32) {
	q.p.wrid[i%CQPollSlots] = C.uint64_t(wrID)
	q.p.wqe_head[i%CQPollSlots] = C.uint32_t(wqeHead)
}

// Run polls batches of up to batch completions polls times in C and
// returns how many it polled (-1 at a CQE it does not handle): with
// batched false a barrier per CQE as libmlx5, with true one per batch
// after its owner bits, as runtime/cq's fast path.
func (q *CQPoller) Run(polls uint64, batch int, batched bool) int64 {
	b := C.int(0)
	if batched {
		b = 1
	}
	return int64(C.cqb_run(q.p, C.uint64_t(polls), C.int(batch), b))
}

// Poll polls one batch into wrIDs (at most 16) and returns the count.
func (q *CQPoller) Poll(wrIDs []uint64, batched bool) int {
	var wc [16]C.struct_ibv_wc
	var n int
	if batched {
		n = int(C.cqb_poll_batched(q.p, &wc[0], C.int(min(len(wrIDs), 16))))
	} else {
		n = int(C.cqb_poll(q.p, &wc[0], C.int(min(len(wrIDs), 16))))
	}
	for i := 0; i < n; i++ {
		wrIDs[i] = uint64(wc[i].wr_id)
	}
	return n
}

// State returns the consumer index, the send queue's tail and the sum of
// the wr_ids Run polled.
func (q *CQPoller) State() (ci, sqTail uint32, sink uint64) {
	return uint32(q.p.ci), uint32(q.p.sq_tail), uint64(q.p.sink)
}

// Close frees the C state.
func (q *CQPoller) Close() {
	C.free(unsafe.Pointer(q.p))
	q.p = nil
}
