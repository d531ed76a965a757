/*
 * A tiny mlx5dv.h for mlx5gen's emitter tests, written for them: a few
 * macros, enums, WQE segments, API structs and functions, enough to make
 * every generated file say something.
 */
#ifndef TINY_MLX5DV_H
#define TINY_MLX5DV_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#define MLX5_SEND_WQE_BB 64
#define MLX5_INLINE_SEG 0x80000000
#define MLX5_TINY_NEGATIVE (-2)

enum mlx5_opcode {
	MLX5_OPCODE_NOP = 0x00,
	MLX5_OPCODE_RDMA_WRITE = 0x08,
	MLX5_OPCODE_SEND = 0x0a,
	MLX5_OPCODE_UMR = 0x25,
};

enum {
	MLX5_WQE_CTRL_CQ_UPDATE = 2 << 2,
	MLX5_WQE_CTRL_SOLICITED = 1 << 1,
	MLX5_WQE_CTRL_FENCE = 4 << 5,
};

enum mlx5dv_tiny_flags {
	MLX5DV_TINY_FLAG_A = 1 << 0,
	MLX5DV_TINY_FLAG_B = 1 << 1,
	MLX5DV_TINY_FLAG_C = 1 << 4,
};

enum mlx5dv_tiny_attr_mask {
	MLX5DV_TINY_ATTR_MASK_SUB = 1 << 0,
	MLX5DV_TINY_ATTR_MASK_NEXT = 1 << 1,
};

enum mlx5dv_tiny_send_ops {
	MLX5DV_QP_EX_WITH_TINY = 1 << 0,
};

struct mlx5_wqe_ctrl_seg {
	__be32 opmod_idx_opcode;
	__be32 qpn_ds;
	uint8_t signature;
	__be16 dci_stream_channel_id;
	uint8_t fm_ce_se;
	__be32 imm;
} __attribute__((__packed__)) __attribute__((__aligned__(4)));

struct mlx5_wqe_data_seg {
	__be32 byte_count;
	__be32 lkey;
	__be64 addr;
};

struct mlx5_wqe_inl_data_seg {
	uint32_t byte_count;
};

struct mlx5_wqe_tiny_pair_seg {
	struct mlx5_wqe_data_seg data;
	__be16 tags[2];
	uint8_t rsvd[4];
	uint32_t host;
};

enum {
	MLX5_WQE_UMR_CTRL_FLAG_INLINE = 1 << 7,
	MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET = 1 << 4,
};

struct mlx5_wqe_umr_ctrl_seg {
	uint8_t flags;
	uint8_t rsvd0[3];
	__be16 klm_octowords;
	union {
		__be16 translation_offset;
		__be16 bsf_octowords;
	};
	__be64 mkey_mask;
	uint8_t rsvd1[32];
};

struct mlx5_wqe_umr_klm_seg {
	__be32 byte_count;
	__be32 mkey;
	__be64 address;
};

struct mlx5_wqe_umr_repeat_block_seg {
	__be32 byte_count;
	__be32 op;
	__be32 repeat_count;
	__be16 reserved;
	__be16 num_ent;
};

union mlx5_wqe_tiny_union_seg {
	struct mlx5_wqe_umr_klm_seg klm;
	__be32 raw[4];
};

struct mlx5dv_qp_ex;

struct mlx5dv_tiny_sub {
	uint32_t size;
};

struct mlx5dv_tiny_attr {
	uint64_t comp_mask;
	uint32_t flags;
	enum mlx5_opcode opcode;
	int32_t depth;
	struct mlx5dv_tiny_sub *sub;
	union {
		uint32_t len;
		uint64_t big;
	};
	union {
		struct mlx5dv_tiny_sub *next;
		void *raw;
	};
	struct mlx5dv_tiny_sub inner;
	void *cookie;
	bool on;
	uint16_t lens[2];
	uint8_t key[3];
};

int mlx5dv_tiny_post(struct mlx5dv_tiny_attr *attr, uint32_t flags);
void mlx5dv_wr_tiny_op(struct mlx5dv_qp_ex *mqp, uint32_t imm);
void mlx5dv_wr_tiny_set_data(struct mlx5dv_qp_ex *mqp, uint64_t addr, uint32_t length);
int mlx5dv_tiny_undescribed(void);

#endif
