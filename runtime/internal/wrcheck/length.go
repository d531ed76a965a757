package wrcheck

import (
	"strconv"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
)

// MaxSGELength is the longest buffer a data segment (send or receive) can
// state. Its byte_count is 32 bits, but bit 31 is MLX5_INLINE_SEG: with
// it set the device reads the segment as inline data, so an RDMA write of
// 0x8000000c bytes sends 12 bytes of the segment itself (its lkey and
// address), exactly 2^31 moves nothing and larger lengths fail the QP.
// libmlx5 writes such lengths verbatim; the writers refuse them (rules
// ibv_wr.sge_length, post_recv.sge_length, post_recv.srq_sge_length).
// A UMR's KLM is not a data segment: its 32-bit byte_count has no inline
// flag, so mkey layouts are not held to this.
const MaxSGELength = 1<<31 - 1

// SGELimit is the longest single scatter/gather element a work request may
// have on this QP: MaxSGELength, or the port's max_msg_sz when smaller. A
// writer's fast path compares a length with it where it compared with 0
// (length-1 < SGELimit is false for 0 too), so that a length either rule
// refuses takes the general path, which calls SGE, at no extra compare.
func (c *Chain) SGELimit() uint32 { return c.sgeLimit }

// SGE checks the length of the one element of ibv_wr_set_sge (or of a
// one-call form), after Data accepted the setter: below 2^31, and at most
// the port's max_msg_sz. The failure is latched like any other.
func (c *Chain) SGE(fn mlx.Func, length uint32) error {
	if length <= c.sgeLimit {
		return nil
	}
	if length > MaxSGELength {
		return c.fail(mlx5rules.ChainSGELength, fn, above("length", uint64(length), MaxSGELength, "2^31 - 1: bit 31 of byte_count is MLX5_INLINE_SEG"))
	}
	return c.failMsg(fn, "length", uint64(length))
}

// SGEList checks the lengths of ibv_wr_set_sge_list's elements, after
// Data accepted the setter: each below 2^31 (the first that is not is
// named), and their sum at most the port's max_msg_sz.
func (c *Chain) SGEList(fn mlx.Func, sges []mlx.SGE) error {
	var total uint64
	for i := range sges {
		l := sges[i].Length
		if l > MaxSGELength {
			return c.fail(mlx5rules.ChainSGELength, fn, above(SGEField(i), uint64(l), MaxSGELength, "2^31 - 1: bit 31 of byte_count is MLX5_INLINE_SEG"))
		}
		total += uint64(l)
	}
	if c.qp.MaxMsgSize != 0 && total > c.qp.MaxMsgSize {
		return c.failMsg(fn, "sum of sg_list lengths", total)
	}
	return nil
}

// Inline checks the bytes of inline data, after Data held them to
// max_inline_data (which sq.New keeps far below 2^31, so the inline flag
// cannot be reached): at most the port's max_msg_sz.
func (c *Chain) Inline(fn mlx.Func, total int) error {
	if c.qp.MaxMsgSize != 0 && uint64(total) > c.qp.MaxMsgSize {
		return c.failMsg(fn, "inline length", uint64(total))
	}
	return nil
}

// failMsg fails the batch for a message of n bytes above max_msg_sz.
func (c *Chain) failMsg(fn mlx.Func, field string, n uint64) error {
	return c.fail(mlx5rules.ChainMsgSize, fn, above(field, n, c.qp.MaxMsgSize, "max_msg_sz"))
}

// indexedFields names the length of each of an array's first 64
// elements ("sg_list[2].length"), made once so that an error names the
// element without allocating; past them, "sg_list[].length".
type indexedFields struct {
	names []string
	rest  string
}

func newIndexedFields(array string) indexedFields {
	f := indexedFields{make([]string, 64), array + "[].length"}
	for i := range f.names {
		f.names[i] = array + "[" + strconv.Itoa(i) + "].length"
	}
	return f
}

func (f *indexedFields) name(i int) string {
	if i >= 0 && i < len(f.names) {
		return f.names[i]
	}
	return f.rest
}

// The element names of ibv_wr_set_sge_list's sg_list and of a list
// layout's sge.
var sgeFields, klmFields = newIndexedFields("sg_list"), newIndexedFields("sge")

// SGEField is the name of element i's length in an error ("sg_list[2].length").
func SGEField(i int) string { return sgeFields.name(i) }
