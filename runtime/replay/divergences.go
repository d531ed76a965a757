package replay

import "syscall"

// Divergence is a case where mlx5gen deliberately does not do what
// libmlx5 did when the vector was recorded.
type Divergence struct {
	Why string // what libmlx5 does, what mlx5gen does, and why

	// Batch is the batch that differs. If Rule is set, mlx5gen rejects it
	// with that rule and errno, posts nothing, and the replay ends there
	// (later batches build on what libmlx5 posted).
	Batch int
	Rule  string
	Errno syscall.Errno

	// Newest: compare with result_at_newest_commit, the behaviour of
	// rdma-core's newest commit, instead of the v44.0 result.
	Newest bool

	// Streams, if not 0, is a log_num_concurent: the case is replayed a
	// second time on a DCI created with that many streams, where
	// mlx5dv_wr_set_dc_addr_stream is legal, and must then match libmlx5
	// byte for byte.
	Streams int
}

// Divergences are the documented differences, by case id.
var Divergences = map[string]Divergence{
	"dci_send_stream": {
		Why: "The vector's DCI was created without MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS, and libmlx5 still writes the stream id " +
			"of mlx5dv_wr_set_dc_addr_stream. mlx5gen rejects the setter on such a DCI (EINVAL). On a DCI created with streams " +
			"the case matches libmlx5 byte for byte.",
		Rule: "wr_post.dc_streams", Errno: syscall.EINVAL, Streams: 16,
	},
	"dci_write_stream_max": {
		Why: "As dci_send_stream: mlx5dv_wr_set_dc_addr_stream on a DCI created without streams. Stream id 65535 needs " +
			"log_num_concurent 16 to be legal.",
		Rule: "wr_post.dc_streams", Errno: syscall.EINVAL, Streams: 16,
	},
	"dci_batch_two_targets": {
		Why:  "As dci_send_stream: its second work request uses mlx5dv_wr_set_dc_addr_stream on a DCI created without streams.",
		Rule: "wr_post.dc_streams", Errno: syscall.EINVAL, Streams: 16,
	},
	"mr_interleaved_max_entries": {
		Why: "An interleaved layout takes one mkey entry more than it has entries (the repeat block header), so " +
			"max_entries entries overflow an mkey created with max_entries. libmlx5 checks only num_desc, which it rounds " +
			"up to a multiple of 4, and accepts; mlx5gen rejects (ENOMEM).",
		Rule: "wr_post.mr_interleaved.mkey_entries", Errno: syscall.ENOMEM,
	},
	"mr_list_sum_over_2g": {
		Why: "rdma-core before 61.0 sums a list layout's lengths in a signed 32-bit int, so 2 x 2 GiB gives an mkey of " +
			"length 0; mlx5gen sums in 64 bits, as rdma-core's newest commit does.",
		Newest: true,
	},
	"mr_list_sum_over_2g_odd": {
		Why:    "As mr_list_sum_over_2g: the 32-bit sum wraps.",
		Newest: true,
	},
	"mr_list_sum_exactly_2g": {
		Why:    "As mr_list_sum_over_2g: the 32-bit sum of exactly 2 GiB is negative and sign-extends to 0xffffffff80000000.",
		Newest: true,
	},
	"mr_list_single_3g": {
		Why:    "As mr_list_sum_over_2g: a single 3 GiB entry sign-extends to 0xffffffffc0000000.",
		Newest: true,
	},
	"misuse_dci_missing_dc_addr": {
		Why: "A DCI send without mlx5dv_wr_set_dc_addr: libmlx5 never finalizes the WQE but counts and posts it. " +
			"mlx5gen rejects the batch (EINVAL).",
		Rule: "wr_post.dc_addr_required", Errno: syscall.EINVAL,
	},
	"misuse_mkey_fewer_setters": {
		Why: "mlx5dv_wr_mkey_configure announces 3 setters and gets 2: libmlx5 leaves the UMR unfinished and posts nothing " +
			"without an error. mlx5gen rejects the batch (EINVAL).",
		Rule: "mkey_configure.num_setters", Errno: syscall.EINVAL,
	},
}
