// harness.h: the interface of harness.c to Go. Plain C types only, so that
// the cgo preamble needs none of rdma-core's headers.
#ifndef MLX5GEN_LM5_HARNESS_H
#define MLX5GEN_LM5_HARNESS_H

#include <stddef.h>
#include <stdint.h>

struct lm5;
struct lm5_mkey;

// lm5_geom is the send queue's geometry and device values, taken from the
// runtime/sq configuration of the Go twin so that both write one ring.
struct lm5_geom {
	void *ring;        // wqebbs * 64 bytes
	void *dbr;         // doorbell record (8 bytes: receive, send)
	void *bf;          // doorbell register: two halves of bf_size bytes
	uint32_t wqebbs;   // a power of two
	uint32_t bf_size;
	uint32_t uuarn;
	uint32_t qpn;
	uint32_t max_post;
	int32_t max_gs;
	int32_t max_inline;
	uint64_t send_ops;     // ibv_qp_init_attr_ex.send_ops_flags
	uint64_t mlx5_ops;     // mlx5dv_qp_init_attr.send_ops_flags
	int32_t sq_lock;       // libmlx5's SQ spinlock taken (1) or not (0, MLX5_SINGLE_THREADED)
};

// lm5_write is a stream of RDMA writes with one SGE: write i moves len
// bytes from addr + i*len to raddr + i*len.
struct lm5_write {
	uint64_t raddr, addr;
	uint32_t rkey, lkey, len;
};

// lm5_sig is the mkey configuration: access flags, an nsge-entry list
// layout (entry i: len bytes at addr + i*len) and a T10-DIF wire domain.
struct lm5_sig {
	uint32_t access, lkey, len, nsge;
	uint64_t addr;
	uint32_t ref_tag;
	uint16_t bg, app_tag, dif_flags;
	uint8_t bg_type, block_size, check_mask;
};

struct lm5 *lm5_new(const struct lm5_geom *g, char *err, size_t errlen);
void lm5_free(struct lm5 *h);
uint32_t lm5_cur_post(const struct lm5 *h);
uint32_t lm5_bf_offset(const struct lm5 *h);

// Each poster returns 0 or the errno ibv_wr_complete / ibv_post_send gave.
int lm5_post_writes(struct lm5 *h, const struct lm5_write *w, uint64_t n, uint32_t batch);
int lm5_post_send_chain(struct lm5 *h, const struct lm5_write *w, uint64_t n, uint32_t batch);

struct lm5_mkey *lm5_mkey_new(uint32_t lkey, uint32_t max_entries, uint32_t mem_psv, uint32_t wire_psv);
void lm5_mkey_free(struct lm5_mkey *m);
int lm5_mkey_configure(struct lm5 *h, struct lm5_mkey *m, const struct lm5_sig *s, uint64_t batches, uint32_t per);

#endif
