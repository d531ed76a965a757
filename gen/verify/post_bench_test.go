package verify

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/mlx5gen/mlx5gen/gen/verify/cref"
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

const postBatch = 32

// newBenchSQ makes a writer on a plain 256-WQEBB queue, RC, with every
// verbs and mlx5 builder enabled.
func newBenchSQ(tb testing.TB) (*sq.SQ, *qmem.Memory) {
	mem, err := qmem.Plain(benchWQEBBs, 0, 256)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mem.Close() })
	q, err := sq.New(sq.Config{
		Mem: mem, QPN: benchQPN,
		QP: sq.QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 316, MaxSendSGE: 8,
			MaxPost: benchWQEBBs / 4, MaxMemcpy: 1 << 31},
		BF: sq.BlueFlame{UUARN: 1, Size: 256},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return q, mem
}

// postRDMAWrites posts n RDMA writes (one SGE, unsignaled) in batches of
// postBatch through the builders, the completions arriving as each batch
// is posted.
func postRDMAWrites(tb testing.TB, q *sq.SQ, n int) { postRDMAWritesBy(tb, q, n, postBatch) }

// postRDMAWritesOneCall posts the same writes as postRDMAWrites with the
// one-call form, RDMAWriteSGE.
func postRDMAWritesOneCall(tb testing.TB, q *sq.SQ, n int) {
	addr := uint64(benchAddr)
	delta := uint64(benchRaddr) - addr
	for done := 0; done < n; {
		if err := q.Start(); err != nil {
			tb.Fatal(err)
		}
		k := min(postBatch, n-done)
		for i := 0; i < k; i++ {
			a := addr + uint64(done+i)*benchLen
			q.RDMAWriteSGE(benchRKey, a+delta, benchLKey, a, benchLen)
		}
		if err := q.Complete(); err != nil {
			tb.Fatal(err)
		}
		q.Completed(uint32(k))
		done += k
	}
}

// postRDMAWritesBy posts them batch at a time: a doorbell per batch.
func postRDMAWritesBy(tb testing.TB, q *sq.SQ, n, batch int) {
	addr := uint64(benchAddr)
	delta := uint64(benchRaddr) - addr
	for done := 0; done < n; {
		if err := q.Start(); err != nil {
			tb.Fatal(err)
		}
		k := min(batch, n-done)
		for i := 0; i < k; i++ {
			a := addr + uint64(done+i)*benchLen
			q.RDMAWrite(benchRKey, a+delta)
			q.SetSGE(benchLKey, a, benchLen)
		}
		if err := q.Complete(); err != nil {
			tb.Fatal(err)
		}
		q.Completed(uint32(k))
		done += k
	}
}

// TestPostLoopsAgree checks that the Go builders and the C loop of the
// post benchmark write the same ring and doorbell record.
func TestPostLoopsAgree(t *testing.T) {
	q, mem := newBenchSQ(t)
	postRDMAWrites(t, q, 320)
	bq, bmem := newBenchSQ(t)
	postRDMAWriteBursts(t, bq, 320)
	if string(bmem.SQ) != string(mem.SQ) || string(bmem.DBR) != string(mem.DBR) || bq.CurPost() != q.CurPost() {
		t.Fatal("RDMAWriteBurst and the builders wrote different rings")
	}
	oq, omem := newBenchSQ(t)
	postRDMAWritesOneCall(t, oq, 320)
	if string(omem.SQ) != string(mem.SQ) || string(omem.DBR) != string(mem.DBR) || oq.CurPost() != q.CurPost() {
		t.Fatal("RDMAWriteSGE and the builders wrote different rings")
	}
	cmem, err := qmem.Plain(benchWQEBBs, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cmem.Close()
	pi := cref.PostRDMAWrite(cmem.SQBase(), benchWQEBBs, unsafe.Pointer(&cmem.DBR[0]), 320, postBatch, 0, benchQPN, benchRaddr, benchRKey, benchLKey, benchAddr, benchLen)
	if pi != q.CurPost() {
		t.Fatalf("producer index: C %d, Go %d", pi, q.CurPost())
	}
	if string(cmem.SQ) != string(mem.SQ) {
		t.Fatal("the C loop and the builders wrote different rings")
	}
	if string(cmem.DBR) != string(mem.DBR) {
		t.Fatalf("doorbell records differ: C %x, Go %x", cmem.DBR, mem.DBR)
	}
}

// cPostDoorbellEach posts n writes from producer index 0 with the C loop
// that rings the doorbell after each, into mem's ring, doorbell record and
// doorbell register.
func cPostDoorbellEach(mem *qmem.Memory, off *uint32, n int) uint32 {
	return cref.PostRDMAWriteDoorbellEach(mem.SQBase(), benchWQEBBs, unsafe.Pointer(&mem.DBR[0]), unsafe.Pointer(&mem.BF[0]),
		uint32(mem.BFSize), off, uint64(n), 0, benchQPN, benchRaddr, benchRKey, benchLKey, benchAddr, benchLen)
}

// TestDoorbellEachLoopsAgree checks that the C loop with a doorbell each
// and the builders with one work request per batch write the same ring,
// doorbell record and doorbell register, and leave the same half of the
// register next, at every count up to past the ring's wrap.
func TestDoorbellEachLoopsAgree(t *testing.T) {
	for _, n := range []int{1, 2, 3, benchWQEBBs - 1, benchWQEBBs, benchWQEBBs + 1, 2*benchWQEBBs + 3} {
		q, mem := newBenchSQ(t)
		postRDMAWritesBy(t, q, n, 1)
		cmem, err := qmem.Plain(benchWQEBBs, 0, 256)
		if err != nil {
			t.Fatal(err)
		}
		var off uint32
		pi := cPostDoorbellEach(cmem, &off, n)
		switch {
		case pi != q.CurPost():
			t.Errorf("n=%d: producer index: C %d, Go %d", n, pi, q.CurPost())
		case string(cmem.SQ) != string(mem.SQ):
			t.Errorf("n=%d: the rings differ", n)
		case string(cmem.DBR) != string(mem.DBR):
			t.Errorf("n=%d: doorbell records differ: C %x, Go %x", n, cmem.DBR, mem.DBR)
		case string(cmem.BF) != string(mem.BF):
			t.Errorf("n=%d: doorbell registers differ", n)
		case int(off) != q.BFOffset():
			t.Errorf("n=%d: next half of the register: C %d, Go %d", n, off, q.BFOffset())
		}
		cmem.Close()
	}
}

// BenchmarkPostRDMAWrite posts unsignaled RDMA writes with one SGE,
// ringing the doorbell every 32: C is a loop of the header's helpers that
// writes the doorbell record (no checks, no doorbell register write); Go
// is runtime/sq with every rule checked, the doorbell record and the
// 8-byte doorbell; GoOneCall the same with RDMAWriteSGE (builder and SGE
// in one call); GoDoorbellEach rings it after every work request, and
// CDoorbellEach is the C loop doing the same with post_send_db's fences.
// ns/op is per work request.
func BenchmarkPostRDMAWrite(b *testing.B) {
	b.Run("C", func(b *testing.B) {
		mem, err := qmem.Plain(benchWQEBBs, 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer mem.Close()
		b.ReportAllocs()
		b.ResetTimer()
		cref.PostRDMAWrite(mem.SQBase(), benchWQEBBs, unsafe.Pointer(&mem.DBR[0]), uint64(b.N), postBatch, 0, benchQPN, benchRaddr, benchRKey, benchLKey, benchAddr, benchLen)
	})
	b.Run("Go", func(b *testing.B) {
		q, _ := newBenchSQ(b)
		b.ReportAllocs()
		b.ResetTimer()
		postRDMAWrites(b, q, b.N)
	})
	b.Run("GoOneCall", func(b *testing.B) {
		q, _ := newBenchSQ(b)
		b.ReportAllocs()
		b.ResetTimer()
		postRDMAWritesOneCall(b, q, b.N)
	})
	b.Run("GoBurst", func(b *testing.B) {
		q, _ := newBenchSQ(b)
		b.ReportAllocs()
		b.ResetTimer()
		postRDMAWriteBursts(b, q, b.N)
	})
	// The C reference of the latency path: the helper loop writing the
	// doorbell record and ringing the doorbell after every work request,
	// with the fences rdma-core's post_send_db uses.
	b.Run("CDoorbellEach", func(b *testing.B) {
		mem, err := qmem.Plain(benchWQEBBs, 0, 256)
		if err != nil {
			b.Fatal(err)
		}
		defer mem.Close()
		var off uint32
		b.ReportAllocs()
		b.ResetTimer()
		cPostDoorbellEach(mem, &off, b.N)
	})
	// The latency path: one work request per batch, so every work request
	// writes the doorbell record and rings the doorbell (with the store
	// fences rdma-core puts around it).
	b.Run("GoDoorbellEach", func(b *testing.B) {
		q, _ := newBenchSQ(b)
		b.ReportAllocs()
		b.ResetTimer()
		postRDMAWritesBy(b, q, b.N, 1)
	})
}

// postRDMAWriteBursts posts the same writes as postRDMAWrites with
// RDMAWriteBurst, a batch of postBatch at a time.
func postRDMAWriteBursts(tb testing.TB, q *sq.SQ, n int) {
	var reqs [postBatch]sq.RDMAWriteReq
	for i := range reqs {
		reqs[i] = sq.RDMAWriteReq{RKey: benchRKey, LKey: benchLKey, Length: benchLen}
	}
	addr := uint64(benchAddr)
	delta := uint64(benchRaddr) - addr
	for done := 0; done < n; {
		if err := q.Start(); err != nil {
			tb.Fatal(err)
		}
		k := min(postBatch, n-done)
		a := addr + uint64(done)*benchLen
		for i := range reqs[:k] {
			r := &reqs[i]
			r.Raddr, r.Addr = a+delta, a
			a += benchLen
		}
		if err := q.RDMAWriteBurst(reqs[:k]); err != nil {
			tb.Fatal(err)
		}
		if err := q.Complete(); err != nil {
			tb.Fatal(err)
		}
		q.Completed(uint32(k))
		done += k
	}
}

// mkeyBench is the configuration of BenchmarkMkeyConfigure: access flags,
// a 4-entry list layout and a T10-DIF signature in the wire domain, so the
// UMR carries a BSF and a SET_PSV follows it.
type mkeyBench struct {
	mk   *sq.Mkey
	conf mlx.MkeyConfAttr
	sges [4]mlx.SGE
	dif  mlx.SigT10DIF
	wire mlx.SigBlockDomain
	sig  mlx.SigBlockAttr
}

func newMkeyBench() *mkeyBench {
	m := &mkeyBench{mk: sq.NewMkey(0x12300, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)}
	m.mk.MemPSV, m.mk.WirePSV = 0x100, 0x101
	for i := range m.sges {
		m.sges[i] = mlx.SGE{Addr: benchAddr + uint64(i)*benchLen, Length: benchLen, LKey: benchLKey}
	}
	m.dif = mlx.SigT10DIF{BGType: mlx.MLX5DV_SIG_T10DIF_CRC, BG: 0xffff, AppTag: 0x1234, RefTag: 0x5678, Flags: uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP)}
	m.wire = mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	m.wire.SetSigDif(&m.dif)
	m.sig = mlx.SigBlockAttr{Wire: &m.wire, CheckMask: 0xff}
	return m
}

// configure posts n mkey configurations in one batch.
func (m *mkeyBench) configure(tb testing.TB, q *sq.SQ, n int) {
	q.SetWRFlags(mlx.IBV_SEND_INLINE | mlx.IBV_SEND_SIGNALED)
	if err := q.Start(); err != nil {
		tb.Fatal(err)
	}
	for range n {
		q.MkeyConfigure(m.mk, 3, &m.conf)
		q.SetMkeyAccessFlags(mkeyBenchAccess)
		q.SetMkeyLayoutList(m.sges[:])
		q.SetMkeySigBlock(&m.sig)
	}
	if err := q.Complete(); err != nil {
		tb.Fatal(err)
	}
	q.Completed(q.Outstanding())
}

// BenchmarkMkeyConfigure configures a signature mkey (access flags, a
// 4-entry list and a T10-DIF wire signature: a UMR with a BSF, then a
// SET_PSV) through the builders: batch1 rings the doorbell after each
// configuration (two store fences each), batch8 after eight. ns/op is per
// configuration; compare it with BenchmarkPostRDMAWrite/C.
func BenchmarkMkeyConfigure(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("batch%d", n), func(b *testing.B) {
			q, _ := newBenchSQ(b)
			m := newMkeyBench()
			b.ReportAllocs()
			for b.Loop() {
				m.configure(b, q, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/config")
		})
	}
	// The same configurations with a template (ConfigureMkey).
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("template-batch%d", n), func(b *testing.B) {
			q, _ := newBenchSQ(b)
			m := newMkeyBench()
			tmpl, err := sq.NewMkeyTemplate(mkeyBenchAccess, &m.sig)
			if err != nil {
				b.Fatal(err)
			}
			m.configure(b, q, 1) // the first configuration of an mkey goes the long way
			b.ReportAllocs()
			for b.Loop() {
				m.configureTemplate(b, q, tmpl, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/config")
		})
	}
}

// configureTemplate posts n template configurations in one batch.
func (m *mkeyBench) configureTemplate(tb testing.TB, q *sq.SQ, tmpl *sq.MkeyTemplate, n int) {
	q.SetWRFlags(mlx.IBV_SEND_INLINE | mlx.IBV_SEND_SIGNALED)
	if err := q.Start(); err != nil {
		tb.Fatal(err)
	}
	for range n {
		q.ConfigureMkey(m.mk, tmpl, m.sges[:])
	}
	if err := q.Complete(); err != nil {
		tb.Fatal(err)
	}
	q.Completed(q.Outstanding())
}

// TestMkeyTemplateAgrees checks that the two mkey benchmarks write the
// same configuration.
func TestMkeyTemplateAgrees(t *testing.T) {
	q1, mem1 := newBenchSQ(t)
	q2, mem2 := newBenchSQ(t)
	m1, m2 := newMkeyBench(), newMkeyBench()
	tmpl, err := sq.NewMkeyTemplate(mkeyBenchAccess, &m2.sig)
	if err != nil {
		t.Fatal(err)
	}
	m1.configure(t, q1, 1)
	m2.configure(t, q2, 1)
	m1.configure(t, q1, 8)
	m2.configureTemplate(t, q2, tmpl, 8)
	if string(mem1.SQ) != string(mem2.SQ) || string(mem1.DBR) != string(mem2.DBR) {
		t.Fatal("the template and the calls wrote different rings")
	}
}

const mkeyBenchAccess = mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_READ | mlx.IBV_ACCESS_REMOTE_WRITE
