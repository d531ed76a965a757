#!/bin/sh
# Rewrites testdata/prm/mlx5_ifc-rdma-core-v64.0.tsv from rdma-core's
# providers/mlx5/mlx5_ifc.h at tag v64.0, for the layouts and enumerators
# spec/hw/prm.yaml describes. Usage: derive.sh RDMA_CORE_GIT_DIR (a clone of
# github.com/linux-rdma/rdma-core). Run from the repository root.
set -eu
git_dir=$1
tag=v64.0
commit=$(git -C "$git_dir" rev-parse "$tag^{commit}")
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
git -C "$git_dir" show "$tag:providers/mlx5/mlx5_ifc.h" >"$tmp"
go run testdata/prm/derive.go \
	-src "github.com/linux-rdma/rdma-core providers/mlx5/mlx5_ifc.h, tag $tag (commit $commit)" \
	-values MLX5_CMD_OP_QUERY_HCA_CAP,MLX5_CMD_OP_CREATE_MKEY,MLX5_CMD_OP_DESTROY_MKEY,MLX5_CMD_OP_CREATE_PSV,MLX5_CMD_OP_DESTROY_PSV,MLX5_CMD_OP_CREATE_GENERAL_OBJECT,MLX5_CMD_OP_MODIFY_GENERAL_OBJECT,MLX5_CMD_OP_QUERY_GENERAL_OBJECT,MLX5_CMD_OP_DESTROY_GENERAL_OBJECT,MLX5_CMD_STAT_OK,MLX5_CMD_STAT_INT_ERR,MLX5_CMD_STAT_BAD_OP_ERR,MLX5_CMD_STAT_BAD_PARAM_ERR,MLX5_CMD_STAT_BAD_SYS_STATE_ERR,MLX5_CMD_STAT_BAD_RES_ERR,MLX5_CMD_STAT_RES_BUSY,MLX5_CMD_STAT_LIM_ERR,MLX5_CMD_STAT_BAD_RES_STATE_ERR,MLX5_CMD_STAT_IX_ERR,MLX5_CMD_STAT_NO_RES_ERR,MLX5_CMD_STAT_BAD_QP_STATE_ERR,MLX5_CMD_STAT_BAD_PKT_ERR,MLX5_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR,MLX5_CMD_STAT_BAD_INP_LEN_ERR,MLX5_CMD_STAT_BAD_OUTP_LEN_ERR,MLX5_OBJ_TYPE_DEK,MLX5_OBJ_TYPE_CRYPTO_LOGIN,MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE,MLX5_SET_HCA_CAP_OP_MOD_CRYPTO,MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE_CAP_2,HCA_CAP_OPMOD_GET_MAX,HCA_CAP_OPMOD_GET_CUR,MLX5_MKC_ACCESS_MODE_MTT,MLX5_MKC_ACCESS_MODE_KLMS,MLX5_ENCRYPTION_KEY_OBJ_KEY_SIZE_SIZE_128,MLX5_ENCRYPTION_KEY_OBJ_KEY_SIZE_SIZE_256,MLX5_ENCRYPTION_KEY_OBJ_KEY_PURPOSE_AES_XTS,MLX5_ENCRYPTION_KEY_OBJ_STATE_READY,MLX5_ENCRYPTION_KEY_OBJ_STATE_ERROR \
	"$tmp" \
	mbox_in mbox_out mkc create_mkey_in create_mkey_out destroy_mkey_in destroy_mkey_out \
	create_psv_in create_psv_out destroy_psv_in \
	general_obj_in_cmd_hdr general_obj_out_cmd_hdr encryption_key_obj \
	create_encryption_key_obj_in query_encryption_key_obj_out \
	query_hca_cap_in query_hca_cap_out cmd_hca_cap crypto_caps \
	>testdata/prm/mlx5_ifc-rdma-core-v64.0.tsv
