//go:build libmlx5

package benchlibmlx5

import (
	"fmt"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// benchGo times post(q, b.N) on a fresh runtime/sq writer.
func benchGo(b *testing.B, post func(q *sq.SQ, n int) error) {
	mem, err := NewMem()
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Close()
	q, err := NewSQ(mem)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if err := post(q, b.N); err != nil {
		b.Fatal(err)
	}
}

// benchLib times post(l, b.N) on libmlx5's QP.
func benchLib(b *testing.B, lock bool, post func(l *Lib, n int) error) {
	l, err := NewLib(lock)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.ReportAllocs()
	b.ResetTimer()
	if err := post(l, b.N); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLibmlx5Post posts unsignaled RDMA writes with one SGE, Batch per
// Start/Complete (per doorbell): C is libmlx5's ibv_wr_rdma_write +
// ibv_wr_set_sge with its SQ lock, CUnlocked without it
// (MLX5_SINGLE_THREADED), CPostSend ibv_post_send of a chain of Batch;
// Go, GoOneCall and GoBurst are runtime/sq's per-call, one-call and burst
// forms. The subbenchmarks run back to back in one process; ns/op is per
// work request.
func BenchmarkLibmlx5Post(b *testing.B) {
	var burst Burst
	b.Run("C", func(b *testing.B) { benchLib(b, true, func(l *Lib, n int) error { return l.PostWrites(n, Batch) }) })
	b.Run("Go", func(b *testing.B) { benchGo(b, func(q *sq.SQ, n int) error { return PostWrites(q, n, Batch) }) })
	b.Run("CUnlocked", func(b *testing.B) { benchLib(b, false, func(l *Lib, n int) error { return l.PostWrites(n, Batch) }) })
	b.Run("GoOneCall", func(b *testing.B) { benchGo(b, func(q *sq.SQ, n int) error { return PostWritesOneCall(q, n, Batch) }) })
	b.Run("CPostSend", func(b *testing.B) { benchLib(b, true, func(l *Lib, n int) error { return l.PostSendChain(n, Batch) }) })
	b.Run("GoBurst", func(b *testing.B) { benchGo(b, func(q *sq.SQ, n int) error { return burst.PostBursts(q, n, Batch) }) })
}

// BenchmarkLibmlx5DoorbellEach is the same with one work request per
// Start/Complete: every work request writes the doorbell record and rings.
// GoPost posts each with PostRDMAWriteSGE (the three calls in one).
func BenchmarkLibmlx5DoorbellEach(b *testing.B) {
	b.Run("C", func(b *testing.B) { benchLib(b, true, func(l *Lib, n int) error { return l.PostWrites(n, 1) }) })
	b.Run("Go", func(b *testing.B) { benchGo(b, func(q *sq.SQ, n int) error { return PostWrites(q, n, 1) }) })
	b.Run("CUnlocked", func(b *testing.B) { benchLib(b, false, func(l *Lib, n int) error { return l.PostWrites(n, 1) }) })
	b.Run("GoPost", func(b *testing.B) { benchGo(b, PostEach) })
}

// BenchmarkLibmlx5DoorbellEachFloor is the doorbell-each row beside its
// Go floor: CUnlocked is libmlx5 without its SQ lock, Go runtime/sq's four
// calls, Floor the same bytes through Floor's four calls that check
// nothing (TestFloorBytes). Not one of bench.sh's rows: the floor says
// what no check, gate or hand-off at all would leave of the row's ratio.
func BenchmarkLibmlx5DoorbellEachFloor(b *testing.B) {
	b.Run("CUnlocked", func(b *testing.B) { benchLib(b, false, func(l *Lib, n int) error { return l.PostWrites(n, 1) }) })
	b.Run("Go", func(b *testing.B) { benchGo(b, func(q *sq.SQ, n int) error { return PostWrites(q, n, 1) }) })
	b.Run("Floor", func(b *testing.B) {
		mem, err := NewMem()
		if err != nil {
			b.Fatal(err)
		}
		defer mem.Close()
		f := NewFloor(mem)
		b.ReportAllocs()
		b.ResetTimer()
		if err := PostFloor(f, b.N, 1); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkLibmlx5Mkey configures the signature mkey (access, 4-entry
// list, T10-DIF wire domain: a UMR with a BSF and a SET_PSV) per
// configurations per doorbell: C with libmlx5's four calls, Go with
// runtime/sq's, GoTemplate through an MkeyTemplate, GoPost (1 per
// doorbell) through the template with PostConfigureMkey. ns/config is per
// configuration.
func BenchmarkLibmlx5Mkey(b *testing.B) {
	for _, per := range []int{1, 8} {
		b.Run(fmt.Sprintf("C-batch%d", per), func(b *testing.B) {
			l, err := NewLib(true)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			m, err := NewLibMkey()
			if err != nil {
				b.Fatal(err)
			}
			defer m.Free()
			mkeyBench(b, per, func() error { return l.Configure(m, 1, 1) }, func(n int) error { return l.Configure(m, n, per) })
		})
		for _, tmpl := range []bool{false, true} {
			name := map[bool]string{false: "Go", true: "GoTemplate"}[tmpl]
			b.Run(fmt.Sprintf("%s-batch%d", name, per), func(b *testing.B) {
				q, m := goMkeySide(b)
				run := func(n int) error { return m.Configure(q, n, per) }
				if tmpl {
					run = func(n int) error { return m.ConfigureTemplate(q, n, per) }
				}
				mkeyBench(b, per, func() error { return m.Configure(q, 1, 1) }, run)
			})
		}
	}
	b.Run("GoPost-batch1", func(b *testing.B) {
		q, m := goMkeySide(b)
		mkeyBench(b, 1, func() error { return m.Configure(q, 1, 1) }, func(n int) error { return m.ConfigurePost(q, n) })
	})
}

// goMkeySide is a fresh runtime/sq writer and mkey configuration for the
// mkey benchmarks; the queue's memory is freed when b ends.
func goMkeySide(b *testing.B) (*sq.SQ, *MkeyConf) {
	mem, err := NewMem()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mem.Close() })
	q, err := NewSQ(mem)
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewMkeyConf()
	if err != nil {
		b.Fatal(err)
	}
	return q, m
}

// mkeyBench runs first untimed (the mkey's first configuration, which a
// template needs), then b.N batches, and reports ns per configuration.
func mkeyBench(b *testing.B, per int, first func() error, batches func(n int) error) {
	if err := first(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if err := batches(b.N); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/config")
}
