package wrcheck

import mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"

// MaxKLMLength is the most one entry of a list layout may cover. The
// UMR states each entry as a KLM whose 32-bit byte_count has no inline
// flag, but the device takes at most 2 GiB per KLM ("up to 2GB" on
// struct mlx5_wqe_umr_klm_seg in mlx5dv.h; MLX5_MAX_KLM_BYTE_COUNT
// 0x80000000 in DPDK's drivers/common/mlx5/mlx5_prm.h, whose vDPA driver
// splits larger regions into entries of at most that). libmlx5 writes
// larger lengths unchecked; rule wr_post.mr_list.klm_length refuses them.
const MaxKLMLength = 1 << 31

// Layout is what a layout setter (or a one-call builder or template
// with a layout) describes: its entries, the bytes the mkey covers, and
// for a list the first entry longer than MaxKLMLength.
type Layout struct {
	Entries     int
	Length      uint64 // the sum of the entries (times the repeat count when interleaved)
	Interleaved bool
	Long        int    // 1 + the index of the first entry over MaxKLMLength; 0: none
	LongLength  uint32 // that entry's length
}

// ListLayout is the layout of a list of sges: the sum of their lengths in
// 64 bits (as rdma-core 61.0 and later add them) and the first entry the
// device cannot take. One pass, no allocation: the four calls' layout
// setter calls it on every configuration (the template path, ListSum).
func ListLayout(sges []mlx.SGE) Layout {
	l := Layout{Entries: len(sges)}
	for i := range sges {
		n := sges[i].Length
		l.Length += uint64(n)
		if n > MaxKLMLength && l.Long == 0 {
			l.Long, l.LongLength = i+1, n
		}
	}
	return l
}

// ListSum is the sum of the entries' lengths in 64 bits (as ListLayout's)
// and the longest entry, in one pass without a branch per entry, inlined
// into the template path: only when the longest is over MaxKLMLength does
// it need ListLayout's index of the first such entry (to name it).
func ListSum(sges []mlx.SGE) (length uint64, hi uint32) {
	for i := range sges {
		n := sges[i].Length
		length += uint64(n)
		hi = max(hi, n)
	}
	return length, hi
}

// klmField is the name of list entry i's length in an error ("sge[2].length").
func klmField(i int) string { return klmFields.name(i) }
