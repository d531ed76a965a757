package rq_test

import (
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// TestNoAllocs: posting, lists, refusals (a full queue, too many SGEs)
// and retiring allocate nothing, on both queues.
func TestNoAllocs(t *testing.T) {
	q, _ := newRQ(t, rq.Config{Stride: 64, WQSig: true, QPN: 5}, 64)
	sges := []rq.SGE{{Addr: 0x1000, Length: 64, LKey: 1}, {Addr: 0x2000, Length: 0, LKey: 2}}
	wrs := []rq.RecvWR{{WRID: 1, SGEs: sges}, {WRID: 2, SGEs: sges}, {WRID: 3, SGEs: make([]rq.SGE, 9)}}
	if n := testing.AllocsPerRun(1000, func() {
		q.Post(1, sges)
		q.PostList(wrs) // two posted, the third refused
		for q.Outstanding() > 0 {
			q.Retire()
		}
		q.Completed(1) // refused: nothing outstanding
	}); n != 0 {
		t.Errorf("RQ: %v allocations per run", n)
	}
	full, _ := newRQ(t, rq.Config{Stride: 16}, 1)
	full.Post(1, nil)
	if n := testing.AllocsPerRun(1000, func() { full.Post(2, nil) }); n != 0 {
		t.Errorf("RQ full: %v allocations per run", n)
	}

	s, _ := newSRQ(t, rq.SRQConfig{Stride: 64, Tail: 15, Init: true}, 16)
	if n := testing.AllocsPerRun(1000, func() {
		h := s.Head()
		s.Post(1, sges)
		h2 := s.Head()
		s.PostList(wrs)
		s.Retire(h)
		s.Retire(h2)
		s.Retire(s.Head()) // refused: free
	}); n != 0 {
		t.Errorf("SRQ: %v allocations per run", n)
	}
}

// BenchmarkRQPost posts and retires one two-SGE work request.
func BenchmarkRQPost(b *testing.B) {
	q, _ := newRQ(b, rq.Config{Stride: 32}, 256)
	sges := []rq.SGE{{Addr: 0x1000, Length: 64, LKey: 1}, {Addr: 0x2000, Length: 64, LKey: 2}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q.Post(uint64(i), sges)
		q.Retire()
	}
}

// BenchmarkSRQPost posts and retires one two-SGE work request.
func BenchmarkSRQPost(b *testing.B) {
	s, _ := newSRQ(b, rq.SRQConfig{Stride: 64, Tail: 255, Init: true}, 256)
	sges := []rq.SGE{{Addr: 0x1000, Length: 64, LKey: 1}, {Addr: 0x2000, Length: 64, LKey: 2}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h := s.Head()
		s.Post(uint64(i), sges)
		s.Retire(h)
	}
}
