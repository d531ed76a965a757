/* A minimal mlx5dv.h for the bindings case of mlx5gen's emitter tests:
 * one function of each return convention, a static inline one, a struct
 * by value and a _Bool. */
#include <stdint.h>
#include <linux/types.h>

#define MLX5_INLINE_SEG 0x80000000

enum mlx5_opcode {
	MLX5_OPCODE_SEND = 0x0a,
};

enum mlx5dv_tiny_flags {
	MLX5DV_TINY_FLAG_A = 1 << 0,
	MLX5DV_TINY_FLAG_B = 1 << 1,
};

struct mlx5_wqe_ctrl_seg {
	__be32 opmod_idx_opcode;
	__be32 qpn_ds;
	uint8_t signature;
	__be16 dci_stream_channel_id;
	uint8_t fm_ce_se;
	__be32 imm;
} __attribute__((__packed__)) __attribute__((__aligned__(4)));

struct mlx5_wqe_inl_data_seg {
	uint32_t byte_count;
};

struct mlx5dv_tiny_ctx;

struct mlx5dv_tiny_attr {
	uint32_t flags;
	uint32_t len;
};

struct mlx5dv_tiny_ctx *mlx5dv_tiny_open(uint32_t index);
int mlx5dv_tiny_post(struct mlx5dv_tiny_ctx *ctx, struct mlx5dv_tiny_attr *attr, uint32_t flags);
int mlx5dv_tiny_poll(struct mlx5dv_tiny_ctx *ctx, struct mlx5dv_tiny_attr attr);

static inline void mlx5dv_tiny_ring(struct mlx5dv_tiny_ctx *ctx, uint16_t idx, _Bool now)
{
	(void)ctx;
	(void)idx;
	(void)now;
}

static inline int __mlx5dv_tiny_query(struct mlx5dv_tiny_ctx *ctx, uint32_t *out)
{
	(void)ctx;
	*out = 0;
	return 0;
}

#define mlx5dv_tiny_query(ctx, out) __mlx5dv_tiny_query(ctx, out)
