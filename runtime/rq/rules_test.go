package rq_test

import (
	"errors"
	"fmt"
	"github.com/mlx5gen/mlx5gen/gen/vocab"
	"math/bits"
	"slices"
	"syscall"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen/spec"
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// exampleQP is a rule example's tests.qp: what the QP or SRQ was created
// with.
type exampleQP struct {
	SRQ        bool `yaml:"srq"`
	MaxRecvWR  int  `yaml:"max_recv_wr"`
	MaxRecvSGE int  `yaml:"max_recv_sge"`
}

type exampleCall map[string]struct {
	WRID   uint64   `yaml:"wr_id"`
	SGList []rq.SGE `yaml:"sg_list"`
}

func pow2(n int) int { return 1 << bits.Len(uint(n-1)) }

// poster is a receive queue sized as libmlx5 sizes it for exampleQP, and
// its memory.
type poster struct {
	fn       string
	mem      rq.Memory
	post     func(uint64, []rq.SGE) error
	postList func([]rq.RecvWR) (int, error)
}

// newPosters returns the receive queues libmlx5 would make for qp: for a
// QP's receive queue (mlx5_calc_rq_size: stride = 16 * max_recv_sge
// rounded up to a power of two, at least 64 bytes of ring, max_post = the
// WQE count), for an SRQ (mlx5_alloc_srq_buf: a WQE of 16 + 16 * max_sge
// bytes, at least 32, rounded up; max_wr + 1 WQEs rounded up, all on the
// free list, or, with a wait queue, 2 * max_wr + 1 and the free list up to
// max_wr + 1 rounded up).
func newPosters(t *testing.T, qp exampleQP) []poster {
	if !qp.SRQ {
		stride := pow2(16 * max(qp.MaxRecvSGE, 1))
		n := max(pow2(qp.MaxRecvWR)*stride, 64) / stride
		mem := newMem(n * stride)
		q, err := rq.New(rq.Config{Mem: mem, Stride: stride})
		if err != nil {
			t.Fatal(err)
		}
		return []poster{{"ibv_post_recv", mem, q.Post, q.PostList}}
	}
	stride := pow2(max(32, 16+16*qp.MaxRecvSGE))
	var ps []poster
	for _, waitq := range []bool{false, true} {
		n, tail := pow2(qp.MaxRecvWR+1), pow2(qp.MaxRecvWR+1)-1
		if waitq {
			n = pow2(2*qp.MaxRecvWR + 1)
		}
		mem := newMem(n * stride)
		s, err := rq.NewSRQ(rq.SRQConfig{Mem: mem, Stride: stride, Tail: uint16(tail), Init: true, WaitQueue: waitq})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, poster{"ibv_post_srq_recv", mem, s.Post, s.PostList})
	}
	return ps
}

// TestReceiveRules runs the examples of every receive rule of the spec
// (check rq_room or rq_sge_count, spec/api/post_recv.yaml) through Post,
// through PostList one by one and through one PostList of all the calls:
// the good example is posted whole; the bad one fails at its last call
// with a *RuleError of that rule and its errno, and that call writes
// nothing.
func TestReceiveRules(t *testing.T) {
	s, err := spec.Load(specfiles.FS, ".", "spec")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range s.Rules {
		if r.Check == nil || !slices.Contains(vocab.ReceiveChecks, r.Check.Chain) {
			continue
		}
		seen[r.Check.Chain+"/"+r.Funcs[0]] = true
		t.Run(r.ID, func(t *testing.T) {
			if !slices.ContainsFunc(mlx5rules.Rules, func(g mlx5rules.RuleInfo) bool { return g.ID == r.ID }) {
				t.Fatalf("rule %s is not in the generated table: regenerate", r.ID)
			}
			var qp exampleQP
			if err := r.Tests.QP.Decode(&qp); err != nil {
				t.Fatal(err)
			}
			for _, which := range []string{"good", "bad"} {
				node := r.Tests.Good
				if which == "bad" {
					node = r.Tests.Bad
				}
				var calls []exampleCall
				if err := node.Decode(&calls); err != nil {
					t.Fatalf("%s: %v", which, err)
				}
				for _, form := range []string{"Post", "PostList1", "PostList"} {
					for _, p := range newPosters(t, qp) {
						err := runCalls(t, p, form, calls, which == "bad")
						if which == "good" && err != nil {
							t.Fatalf("%s/%s: the good example fails: %v", form, which, err)
						}
						if which == "bad" {
							checkBad(t, r, p.fn, err)
						}
					}
				}
			}
		})
	}
	for _, c := range vocab.ReceiveChecks {
		for _, fn := range []string{"ibv_post_recv", "ibv_post_srq_recv"} {
			if !seen[c+"/"+fn] {
				t.Errorf("no rule with examples for check %s of %s", c, fn)
			}
		}
	}
}

// runCalls posts the calls in one form and returns the first error; the
// call that fails must have written nothing.
func runCalls(t *testing.T, p poster, form string, calls []exampleCall, bad bool) error {
	var wrs []rq.RecvWR
	for i, c := range calls {
		args, ok := c[p.fn]
		if !ok || len(c) != 1 {
			t.Fatalf("call %d is not one call of %s", i, p.fn)
		}
		wrs = append(wrs, rq.RecvWR{WRID: args.WRID, SGEs: args.SGList})
	}
	if form == "PostList" {
		before := state(p.mem)
		n, err := p.postList(wrs)
		if bad && n != len(wrs)-1 {
			t.Fatalf("PostList posted %d of %d: %v", n, len(wrs), err)
		}
		if err != nil && n == 0 && string(before) != string(state(p.mem)) {
			t.Fatal("a PostList that posted nothing wrote")
		}
		return err
	}
	for _, wr := range wrs {
		before := state(p.mem)
		var err error
		if form == "Post" {
			err = p.post(wr.WRID, wr.SGEs)
		} else {
			var n int
			n, err = p.postList([]rq.RecvWR{wr})
			if (n == 1) != (err == nil) {
				t.Fatalf("PostList of one: %d posted, %v", n, err)
			}
		}
		if err != nil {
			if string(before) != string(state(p.mem)) {
				t.Fatalf("%s: the failing call wrote", form)
			}
			return err
		}
	}
	return nil
}

func checkBad(t *testing.T, r *spec.Rule, fn string, err error) {
	t.Helper()
	var re *mlx.RuleError
	if !errors.As(err, &re) {
		t.Fatalf("the bad example gives %v, want a *RuleError", err)
	}
	want := map[string]syscall.Errno{"EINVAL": syscall.EINVAL, "ENOMEM": syscall.ENOMEM}[r.Errno]
	if re.Rule != r.ID || !errors.Is(err, want) || re.Func.String() != fn || re.Field == "" {
		t.Fatalf("the bad example gives %v (rule %s, %v, %s, field %q); want rule %s, %v", err, re.Rule, re.Errno, re.Func, re.Field, r.ID, want)
	}
	if got := fmt.Sprint(err); re.Man == "" || len(got) < len(re.Says) {
		t.Fatalf("%q does not state the rule", got)
	}
}
