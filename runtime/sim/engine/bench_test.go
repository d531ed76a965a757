package engine_test

import (
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// BenchmarkRDMAWrite64 is the whole loop on one core: post 64-byte RDMA
// WRITEs through runtime/sq (bursts of 32, each WR signaled, one doorbell
// per burst), execute them with the engine's Step, poll every completion
// with runtime/cq. One op is one work request.
func BenchmarkRDMAWrite64(b *testing.B) {
	for _, c := range []struct {
		name   string
		signal int // every signal-th WR is signaled
	}{{"Signaled", 1}, {"SignalEvery32", 32}} {
		b.Run(c.name, func(b *testing.B) { benchWrite(b, c.signal) })
	}
}

func benchWrite(b *testing.B, signal int) {
	o := defaults
	o.wqebbs, o.cqes = 64, 64
	f, x, y := pair(b, o)
	const burst = 32
	reqs := make([]sq.RDMAWriteReq, burst)
	for i := range reqs {
		reqs[i] = sq.RDMAWriteReq{WRID: uint64(i), Raddr: y.addr(i * 64), Addr: x.addr(i * 64), RKey: y.key, LKey: x.key, Length: 64}
	}
	wc := make([]cq.WC, burst)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += burst {
		x.q.Start()
		if signal == 1 {
			x.q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
			x.q.RDMAWriteBurst(reqs)
		} else {
			x.q.SetWRFlags(0)
			x.q.RDMAWriteBurst(reqs[:burst-1])
			x.q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
			x.q.RDMAWriteBurst(reqs[burst-1:])
		}
		if err := x.q.Complete(); err != nil {
			b.Fatal(err)
		}
		f.Step()
		want := burst / signal
		for got := 0; got < want; {
			n, err := x.c.Poll(wc)
			if err != nil || n == 0 {
				b.Fatalf("poll: %d, %v", n, err)
			}
			for _, w := range wc[:n] {
				if w.Status != cq.Success {
					b.Fatalf("%+v", w)
				}
			}
			got += n
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "MWR/s")
}

// TestSteadyStateAllocs: posting, executing and polling RDMA writes (the
// fast path), READs, SENDs and atomics (the general path) allocates
// nothing once the queues exist.
func TestSteadyStateAllocs(t *testing.T) {
	f, x, y := pair(t, defaults)
	wc := make([]cq.WC, 8)
	var id uint64
	loop := func() {
		id++
		y.r.Post(id, []rq.SGE{{Addr: y.addr(0), Length: 64, LKey: y.key}})
		x.q.Start()
		x.q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		x.q.RDMAWrite(y.key, y.addr(64))
		x.q.SetSGE(x.key, x.addr(0), 64)
		x.q.RDMARead(y.key, y.addr(128))
		x.q.SetSGE(x.key, x.addr(64), 64)
		x.q.Send()
		x.q.SetSGE(x.key, x.addr(0), 16)
		x.q.AtomicFetchAdd(y.key, y.addr(256), 1)
		x.q.SetSGE(x.key, x.addr(256), 8)
		if err := x.q.Complete(); err != nil {
			t.Fatal(err)
		}
		f.Drain(10)
		if n, err := x.c.Poll(wc); n != 4 || err != nil {
			t.Fatalf("%d completions, %v", n, err)
		}
		if n, err := y.c.Poll(wc); n != 1 || err != nil {
			t.Fatalf("%d receives, %v", n, err)
		}
	}
	loop() // warm up: the engine's scratch, the poller's caches
	if n := testing.AllocsPerRun(100, loop); n != 0 {
		t.Fatalf("%v allocations per loop", n)
	}
}

// BenchmarkSendRecv64 is the general path: 64-byte SENDs (bursts of 16,
// each signaled) into posted receives, executed by Step, both CQs polled.
// One op is one message.
func BenchmarkSendRecv64(b *testing.B) {
	f, x, y := pair(b, defaults)
	const burst = 16
	wc := make([]cq.WC, burst)
	sge := []rq.SGE{{Addr: y.addr(0), Length: 64, LKey: y.key}}
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += burst {
		for i := range burst {
			y.r.Post(uint64(i), sge)
		}
		x.q.Start()
		x.q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		for range burst {
			x.q.Send()
			x.q.SetSGE(x.key, x.addr(0), 64)
		}
		if err := x.q.Complete(); err != nil {
			b.Fatal(err)
		}
		f.Step()
		for _, c := range []*cq.CQ{x.c, y.c} {
			if n, err := c.Poll(wc); n != burst || err != nil {
				b.Fatalf("poll: %d, %v", n, err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mmsg/s")
}
