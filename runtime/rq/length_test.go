package rq_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// TestSGELengthRefused posts, through Post and PostList on a receive
// queue and on SRQs (with and without a wait queue), a work request with
// an SGE length whose bit 31 is set: it is refused with the queue's rule,
// naming the work request, the element, the value and the limit
// (errors.Is EINVAL), writes nothing, and leaves the queue where it was:
// a queue that saw the rejection ends byte for byte like one that did not.
func TestSGELengthRefused(t *testing.T) {
	qp := func(srq bool) exampleQP { return exampleQP{SRQ: srq, MaxRecvWR: 4, MaxRecvSGE: 2} }
	good := func(id uint64) rq.RecvWR {
		return rq.RecvWR{WRID: id, SGEs: []rq.SGE{{Addr: 0x10000, Length: 0x7fffffff, LKey: 0x100}}}
	}
	for _, length := range []uint32{0x8000000c, 1 << 31, 0xffffffff} {
		bad := rq.RecvWR{WRID: 9, SGEs: []rq.SGE{{Addr: 0x10000, Length: 64, LKey: 0x100}, {Addr: 0x20000, Length: length, LKey: 0x101}}}
		for _, srq := range []bool{false, true} {
			for _, form := range []string{"Post", "PostList"} {
				t.Run(fmt.Sprintf("srq=%v/%s/%#x", srq, form, length), func(t *testing.T) {
					seen, clean := newPosters(t, qp(srq)), newPosters(t, qp(srq))
					for i, p := range seen {
						rule := map[string]string{"ibv_post_recv": "post_recv.sge_length", "ibv_post_srq_recv": "post_recv.srq_sge_length"}[p.fn]
						if err := p.post(1, good(1).SGEs); err != nil {
							t.Fatal(err)
						}
						if err := clean[i].post(1, good(1).SGEs); err != nil {
							t.Fatal(err)
						}
						before := state(p.mem)
						var err error
						wr := 0
						if form == "Post" {
							err = p.post(bad.WRID, bad.SGEs)
						} else {
							// A list: the good one before the bad one is
							// posted, the bad one (index 1) is not.
							var n int
							n, err = p.postList([]rq.RecvWR{good(2), bad})
							if n != 1 {
								t.Fatalf("PostList posted %d, want 1: %v", n, err)
							}
							wr = 1
							if err := clean[i].post(2, good(2).SGEs); err != nil {
								t.Fatal(err)
							}
							before = state(p.mem)
						}
						var re *mlx.RuleError
						if !errors.As(err, &re) || re.Rule != rule || !errors.Is(err, syscall.EINVAL) || re.Func.String() != p.fn ||
							re.WR != wr || re.Field != "sg_list[1].length" || re.Value != uint64(length) || re.Limit != 1<<31-1 {
							t.Fatalf("got %v; want rule %s of %s, work request %d, sg_list[1].length %d above %d", err, rule, p.fn, wr, length, 1<<31-1)
						}
						if msg := err.Error(); !strings.Contains(msg, fmt.Sprint(length)) || !strings.Contains(msg, "sg_list[1].length") {
							t.Fatalf("%q does not name the element and its length", msg)
						}
						if string(state(p.mem)) != string(before) {
							t.Fatal("the refused work request wrote")
						}
						// Both queues take the next one where they were.
						if err := p.post(3, good(3).SGEs); err != nil {
							t.Fatal(err)
						}
						if err := clean[i].post(3, good(3).SGEs); err != nil {
							t.Fatal(err)
						}
						if string(state(p.mem)) != string(state(clean[i].mem)) {
							t.Fatal("after the refusal the queue differs from one that never saw it")
						}
					}
				})
			}
		}
	}
}
