//go:build libmlx5

// harness.c runs libmlx5's own work-request builders (ibv_wr_* and
// mlx5dv_wr_* through the function pointers libmlx5's
// mlx5_qp_fill_wr_pfns installs, and ibv_post_send's mlx5_post_send) on a
// queue pair that lives in plain memory: the method of
// testdata/vectors/README.md, written here from mlx5.h's structures and
// qp.c's behaviour. It is compiled only against a user-supplied rdma-core
// source tree (scripts/bench.sh -rdma-core-src DIR): no rdma-core file is
// part of this project. The ring, doorbell record and doorbell register are
// the Go side's queue memory, so Go can compare them with runtime/sq's.
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlx5.h"
#include "harness.h"

// mlx5_qp_fill_wr_pfns is libmlx5-internal (declared in mlx5.h of some
// trees only), so it is declared here as qp.c defines it.
int mlx5_qp_fill_wr_pfns(struct mlx5_qp *mqp, const struct ibv_qp_init_attr_ex *attr,
			 const struct mlx5dv_qp_init_attr *mlx5_attr);
int mlx5_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);

// The objects create_qp would allocate, in one block. The context is only
// read (debug stream, BlueFlame policy, capabilities): zero is a device
// with no crypto, no MKEY tag update, prefer_bf and shut_up_bf off.
struct lm5 {
	struct mlx5_context ctx;
	struct mlx5_cq cq;
	struct mlx5_bf bf;
	struct mlx5_qp qp;
	struct ibv_send_wr wrs[64];
	struct ibv_sge sges[64];
};

struct lm5_mkey {
	struct mlx5_mkey mkey;
	struct mlx5_sig_ctx sig;
	struct mlx5_psv mem, wire;
};

static int geom_error(const struct lm5_geom *g, char *err, size_t errlen)
{
	if (!g->ring || !g->dbr || !g->bf)
		return snprintf(err, errlen, "ring, doorbell record and register must be given"), 1;
	if (g->wqebbs == 0 || (g->wqebbs & (g->wqebbs - 1)))
		return snprintf(err, errlen, "%u WQEBBs: not a power of two", g->wqebbs), 1;
	if (g->max_post == 0 || g->max_post > g->wqebbs)
		return snprintf(err, errlen, "max_post %u outside 1..%u", g->max_post, g->wqebbs), 1;
	return 0;
}

struct lm5 *lm5_new(const struct lm5_geom *g, char *err, size_t errlen)
{
	struct ibv_qp_init_attr_ex attr = {.qp_type = IBV_QPT_RC, .send_ops_flags = g->send_ops};
	struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS,
					 .send_ops_flags = g->mlx5_ops};
	struct lm5 *h;
	struct mlx5_qp *qp;
	int ret;

	if (geom_error(g, err, errlen))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return snprintf(err, errlen, "out of memory"), NULL;
	qp = &h->qp;
	h->ctx.dbg_fp = stderr;
	h->cq.verbs_cq.cq.context = &h->ctx.ibv_ctx.context;
	mlx5_spinlock_init(&h->cq.lock, 0);

	// The doorbell register: create_qp's bfreg for a QP with its own UAR
	// (no BlueFlame lock, as in the reference vectors).
	h->bf.reg = g->bf;
	h->bf.buf_size = g->bf_size;
	h->bf.uuarn = g->uuarn;
	mlx5_spinlock_init(&h->bf.lock, 0);

	qp->ibv_qp = &qp->verbs_qp.qp;
	qp->verbs_qp.qp.context = &h->ctx.ibv_ctx.context;
	qp->verbs_qp.qp.qp_num = g->qpn;
	qp->verbs_qp.qp.qp_type = IBV_QPT_RC;
	qp->verbs_qp.qp.state = IBV_QPS_RTS;
	qp->verbs_qp.qp.send_cq = &h->cq.verbs_cq.cq;
	qp->bf = &h->bf;
	qp->db = g->dbr;
	qp->sq_start = g->ring;
	qp->max_inline_data = g->max_inline;
	qp->atomics_enabled = 1;
	qp->sq.wqe_cnt = g->wqebbs;
	qp->sq.wqe_shift = MLX5_SEND_WQE_SHIFT;
	qp->sq.max_post = g->max_post;
	qp->sq.max_gs = g->max_gs;
	qp->sq.qp_state_max_gs = g->max_gs; // the QP is in RTS
	qp->sq.qend = (char *)g->ring + ((size_t)g->wqebbs << MLX5_SEND_WQE_SHIFT);
	qp->sq.wrid = calloc(g->wqebbs, sizeof(*qp->sq.wrid));
	qp->sq.wqe_head = calloc(g->wqebbs, sizeof(*qp->sq.wqe_head));
	qp->sq.wr_data = calloc(g->wqebbs, sizeof(*qp->sq.wr_data));
	if (!qp->sq.wrid || !qp->sq.wqe_head || !qp->sq.wr_data) {
		lm5_free(h);
		return snprintf(err, errlen, "out of memory"), NULL;
	}
	mlx5_spinlock_init(&qp->sq.lock, g->sq_lock);
	ret = mlx5_qp_fill_wr_pfns(qp, &attr, &dv);
	if (ret) {
		lm5_free(h);
		return snprintf(err, errlen, "mlx5_qp_fill_wr_pfns: %s", strerror(ret)), NULL;
	}
	return h;
}

void lm5_free(struct lm5 *h)
{
	if (!h)
		return;
	free(h->qp.sq.wrid);
	free(h->qp.sq.wqe_head);
	free(h->qp.sq.wr_data);
	free(h);
}

uint32_t lm5_cur_post(const struct lm5 *h) { return h->qp.sq.cur_post; }
uint32_t lm5_bf_offset(const struct lm5 *h) { return h->bf.offset; }

// completed stands in for the CQ poller: every posted work request is
// complete (sq.tail = sq.head), as the Go twin's Completed calls say.
static inline void completed(struct lm5 *h) { h->qp.sq.tail = h->qp.sq.head; }

int lm5_post_writes(struct lm5 *h, const struct lm5_write *w, uint64_t n, uint32_t batch)
{
	struct ibv_qp_ex *qx = &h->qp.verbs_qp.qp_ex;
	uint64_t delta = w->raddr - w->addr;
	uint64_t a = w->addr;
	int err;

	qx->wr_id = 0;
	qx->wr_flags = 0;
	for (uint64_t done = 0; done < n;) {
		uint64_t k = n - done < batch ? n - done : batch;

		ibv_wr_start(qx);
		for (uint64_t i = 0; i < k; i++, a += w->len) {
			ibv_wr_rdma_write(qx, w->rkey, a + delta);
			ibv_wr_set_sge(qx, w->lkey, a, w->len);
		}
		err = ibv_wr_complete(qx);
		if (err)
			return err;
		completed(h);
		done += k;
	}
	return 0;
}

// lm5_post_send_chain posts the same writes with the older ibv_post_send:
// a chain of batch prepared work requests per call.
int lm5_post_send_chain(struct lm5 *h, const struct lm5_write *w, uint64_t n, uint32_t batch)
{
	struct ibv_send_wr *bad;
	uint64_t delta = w->raddr - w->addr;
	uint64_t a = w->addr;
	int err;

	if (batch == 0 || batch > sizeof(h->wrs) / sizeof(h->wrs[0]))
		return EINVAL;
	for (uint32_t i = 0; i < batch; i++) {
		h->sges[i] = (struct ibv_sge){.lkey = w->lkey, .length = w->len};
		h->wrs[i] = (struct ibv_send_wr){.sg_list = &h->sges[i], .num_sge = 1,
						 .opcode = IBV_WR_RDMA_WRITE,
						 .next = i + 1 < batch ? &h->wrs[i + 1] : NULL};
		h->wrs[i].wr.rdma.rkey = w->rkey;
	}
	for (uint64_t done = 0; done < n;) {
		uint64_t k = n - done < batch ? n - done : batch;

		for (uint64_t i = 0; i < k; i++, a += w->len) {
			h->sges[i].addr = a;
			h->wrs[i].wr.rdma.remote_addr = a + delta;
		}
		h->wrs[k - 1].next = NULL;
		err = mlx5_post_send(h->qp.ibv_qp, h->wrs, &bad);
		if (k < batch)
			h->wrs[k - 1].next = &h->wrs[k];
		if (err)
			return err;
		completed(h);
		done += k;
	}
	return 0;
}

// lm5_mkey_new is what mlx5dv_create_mkey leaves for a signature mkey
// (verbs.c): num_desc rounded up to 4, PSVs, error count 1 with its
// update pending, BSF state INIT. The indices stand in for the device's.
struct lm5_mkey *lm5_mkey_new(uint32_t lkey, uint32_t max_entries, uint32_t mem_psv, uint32_t wire_psv)
{
	struct lm5_mkey *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->mkey.dv_mkey.lkey = lkey;
	m->mkey.dv_mkey.rkey = lkey;
	m->mkey.num_desc = (max_entries + 3) & ~3u;
	m->mem.index = mem_psv;
	m->wire.index = wire_psv;
	m->sig.block.mem_psv = &m->mem;
	m->sig.block.wire_psv = &m->wire;
	m->sig.err_count = 1;
	m->sig.err_count_updated = true;
	m->mkey.sig = &m->sig;
	return m;
}

void lm5_mkey_free(struct lm5_mkey *m) { free(m); }

// lm5_mkey_configure posts batches of per configurations of m: the four
// calls (configure, access flags, list layout, signature block), inline
// and signaled, as the Go twin's MkeyConfigure path.
int lm5_mkey_configure(struct lm5 *h, struct lm5_mkey *m, const struct lm5_sig *s, uint64_t batches, uint32_t per)
{
	struct ibv_qp_ex *qx = &h->qp.verbs_qp.qp_ex;
	struct mlx5dv_qp_ex *dv = &h->qp.dv_qp;
	struct mlx5dv_mkey_conf_attr conf = {0};
	struct mlx5dv_sig_t10dif dif = {.bg_type = s->bg_type, .bg = s->bg, .app_tag = s->app_tag,
					.ref_tag = s->ref_tag, .flags = s->dif_flags};
	struct mlx5dv_sig_block_domain wire = {.sig_type = MLX5DV_SIG_TYPE_T10DIF, .sig.dif = &dif,
					       .block_size = s->block_size};
	struct mlx5dv_sig_block_attr sig = {.wire = &wire, .check_mask = s->check_mask};
	struct ibv_sge sges[16];
	int err;

	if (s->nsge > sizeof(sges) / sizeof(sges[0]))
		return EINVAL;
	for (uint32_t i = 0; i < s->nsge; i++)
		sges[i] = (struct ibv_sge){.addr = s->addr + (uint64_t)i * s->len, .length = s->len, .lkey = s->lkey};
	qx->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	for (uint64_t b = 0; b < batches; b++) {
		ibv_wr_start(qx);
		for (uint32_t i = 0; i < per; i++) {
			mlx5dv_wr_mkey_configure(dv, &m->mkey.dv_mkey, 3, &conf);
			mlx5dv_wr_set_mkey_access_flags(dv, s->access);
			mlx5dv_wr_set_mkey_layout_list(dv, s->nsge, sges);
			mlx5dv_wr_set_mkey_sig_block(dv, &sig);
		}
		err = ibv_wr_complete(qx);
		if (err)
			return err;
		completed(h);
	}
	return 0;
}
