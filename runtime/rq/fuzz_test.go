package rq_test

import (
	"bytes"
	"errors"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// fuzzSGEs makes up to 6 SGEs from the op stream; some have length 0.
func fuzzSGEs(buf []rq.SGE, b byte) []rq.SGE {
	n := int(b % 7)
	for i := range buf[:n] {
		buf[i] = rq.SGE{Addr: uint64(b)<<12 + uint64(i), Length: uint32((int(b) + i) % 3 * 64), LKey: uint32(i)}
	}
	return buf[:n]
}

func wantRuleErr(t *testing.T, err error) {
	var re *mlx.RuleError
	if !errors.As(err, &re) || (re.Rule != "post_recv.rq_room" && re.Rule != "post_recv.sge_count" &&
		re.Rule != "post_recv.srq_room" && re.Rule != "post_recv.srq_sge_count") {
		t.Fatalf("a post failed with %v, not a receive rule", err)
	}
}

// FuzzRQ drives a receive queue with arbitrary calls. A twin queue gets
// only what succeeded (for a list that stopped, its good prefix): after
// every call both memories are equal, so a call that fails wrote nothing;
// every post error is a receive rule's; nothing panics.
func FuzzRQ(f *testing.F) {
	f.Add([]byte{0, 3, 0, 3, 0, 6, 1, 9, 2, 2, 3, 1})
	f.Add([]byte{1, 0, 6, 0, 6, 0, 6, 0, 6, 0, 6, 1, 40, 2, 5})
	f.Add([]byte{0, 1, 200, 1, 33, 3, 255, 2, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		c := rq.Config{Stride: 64}
		if len(ops) > 0 && ops[0]&1 == 1 {
			c.WQSig, c.QPN = true, 0xabcdef
		}
		q, m := newRQ(t, c, 4)
		twin, tm := newRQ(t, c, 4)
		var sges [6]rq.SGE
		wrs := make([]rq.RecvWR, 6)
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i], ops[i+1]
			switch op % 4 {
			case 0, 1:
				fuzzPost(t, q, twin, op, arg, sges[:], wrs)
			case 2:
				id, err := q.Retire()
				tid, terr := twin.Retire()
				if id != tid || (err == nil) != (terr == nil) {
					t.Fatalf("retire: %d %v; twin %d %v", id, err, tid, terr)
				}
			case 3:
				err := q.Completed(uint32(arg % 6))
				if err == nil {
					twin.Completed(uint32(arg % 6))
				}
			}
			if a, b := state(m), state(tm); !bytes.Equal(a, b) || q.Head() != twin.Head() || q.Tail() != twin.Tail() {
				t.Fatalf("op %d (%d, %d): the queue differs from its twin", i/2, op, arg)
			}
		}
	})
}

// FuzzSRQ does the same with a shared receive queue, Retire and
// RepostODP of arbitrary WQE indexes, with a wait queue when the input's
// length is odd.
func FuzzSRQ(f *testing.F) {
	f.Add([]byte{0, 3, 0, 3, 0, 6, 1, 9, 2, 2, 3, 1})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 2, 1, 1, 6, 2, 9})
	f.Fuzz(func(t *testing.T, ops []byte) {
		c := rq.SRQConfig{Stride: 64, Tail: 7, Init: true}
		if len(ops)%2 == 1 {
			c.Tail, c.WaitQueue = 3, true
		}
		s, m := newSRQ(t, c, 8)
		twin, tm := newSRQ(t, c, 8)
		var sges [6]rq.SGE
		wrs := make([]rq.RecvWR, 6)
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i], ops[i+1]
			switch op % 4 {
			case 0, 1:
				fuzzPost(t, s, twin, op, arg, sges[:], wrs)
			case 2:
				ind := uint16(arg % 10) // 8 and 9: outside the ring
				id, err := s.Retire(ind)
				if err == nil {
					if tid, terr := twin.Retire(ind); tid != id || terr != nil {
						t.Fatal(tid, terr)
					}
				}
			case 3:
				ind := uint16(arg % 10)
				if err := s.RepostODP(ind); err == nil {
					if err := twin.RepostODP(ind); err != nil {
						t.Fatal(err)
					}
				}
			}
			if !bytes.Equal(state(m), state(tm)) || s.Head() != twin.Head() || s.Tail() != twin.Tail() || s.Counter() != twin.Counter() {
				t.Fatalf("op %d (%d, %d): the SRQ differs from its twin", i/2, op, arg)
			}
		}
	})
}

// recvPoster is what the RQ and the SRQ share: posting one work request or
// a list.
type recvPoster interface {
	Post(wrID uint64, sges []rq.SGE) error
	PostList(wrs []rq.RecvWR) (int, error)
}

// fuzzPost posts to q (op 0: one work request, op 1: a list of arg%7) and
// what q accepted to its twin, which must accept it all.
func fuzzPost(t *testing.T, q, twin recvPoster, op, arg byte, sges []rq.SGE, wrs []rq.RecvWR) {
	t.Helper()
	if op%4 == 0 {
		g := fuzzSGEs(sges, arg)
		if err := q.Post(uint64(arg), g); err != nil {
			wantRuleErr(t, err)
		} else if err := twin.Post(uint64(arg), g); err != nil {
			t.Fatal(err)
		}
		return
	}
	k := int(arg % 7)
	for j := range wrs[:k] {
		wrs[j] = rq.RecvWR{WRID: uint64(j), SGEs: fuzzSGEs(make([]rq.SGE, 6), arg+byte(j)*37)}
	}
	n, err := q.PostList(wrs[:k])
	if err != nil {
		wantRuleErr(t, err)
	}
	if got, err := twin.PostList(wrs[:n]); got != n || err != nil {
		t.Fatalf("the good prefix of %d: %d, %v", n, got, err)
	}
}
