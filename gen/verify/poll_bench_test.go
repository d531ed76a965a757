package verify

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/mlx5gen/mlx5gen/gen/verify/cref"
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

const (
	pollRing  = 4096 // CQEs: a pass of the ring is 256 polls of 16
	pollBatch = 16
)

func pollSlot(i uint32) (uint64, uint32) { return 0x5000 + uint64(i)*3, i }

// newPollCQ maps a CQ of pollRing CQEs and fills it as the device would
// for the first pass: requester CQEs of RDMA writes, sends and sends with
// immediate in turn, WQE counters counting up, owner bit 0.
func newPollCQ(tb testing.TB) *qmem.Memory {
	mem, err := qmem.Plain(cref.CQPollSlots, pollRing, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mem.Close() })
	sops := []mlx.Opcode{mlx.MLX5_OPCODE_RDMA_WRITE, mlx.MLX5_OPCODE_SEND, mlx.MLX5_OPCODE_SEND_IMM}
	for i := 0; i < pollRing; i++ {
		c := mem.CQ[i*64 : i*64+64]
		clear(c)
		binary.BigEndian.PutUint32(c[56:60], uint32(sops[i%len(sops)])<<24|benchQPN)
		binary.BigEndian.PutUint16(c[60:62], uint16(i))
		c[63] = uint8(mlx.MLX5_CQE_REQ) << 4
	}
	return mem
}

// flipOwners makes the ring's CQEs the device's again for the next pass.
func flipOwners(mem *qmem.Memory) {
	for off := 63; off < len(mem.CQ); off += 64 {
		mem.CQ[off] ^= 1
	}
}

// newGoPoller makes runtime/cq's poller on mem with a runtime/sq writer
// on the same memory behind the cq.SQ adapter; its per-slot bookkeeping
// (sq.SQ.Slots: wr_id and WQE head, indexed by wqe_counter) holds what
// the C side's arrays hold.
func newGoPoller(tb testing.TB, mem *qmem.Memory) (*cq.CQ, *sq.SQ) {
	q, err := sq.New(sq.Config{Mem: mem, QPN: benchQPN, QP: sq.QP{Type: mlx.QPRC, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MaxSendSGE: 1}})
	if err != nil {
		tb.Fatal(err)
	}
	c, err := cq.New(cq.Config{Mem: mem, CQN: 1})
	if err != nil {
		tb.Fatal(err)
	}
	for i := range q.Slots {
		q.Slots[i].WRID, q.Slots[i].WQEHead = pollSlot(uint32(i))
	}
	if err := c.AddQP(&cq.QP{QPN: benchQPN, SQ: cq.SQ{Q: q, Mem: mem}}); err != nil {
		tb.Fatal(err)
	}
	return c, q
}

func newCPoller(tb testing.TB, mem *qmem.Memory) *cref.CQPoller {
	p := cref.NewCQPoller(unsafe.Pointer(&mem.CQ[0]), pollRing, unsafe.Pointer(&mem.CQDBR[0]), benchQPN)
	if p == nil {
		tb.Fatal("cref.NewCQPoller: out of memory")
	}
	tb.Cleanup(p.Close)
	for i := uint32(0); i < cref.CQPollSlots; i++ {
		id, head := pollSlot(i)
		p.SetSlot(i, id, head)
	}
	return p
}

// TestPollLoopsAgree checks that the two sides of BenchmarkPollCQ do the
// same work: over two passes of the same ring (the C side per-CQE
// barriers, then one per batch), the same wr_ids in the
// same order, the same send queue tail, consumer index and doorbell
// record.
func TestPollLoopsAgree(t *testing.T) {
	gm, cm := newPollCQ(t), newPollCQ(t)
	c, q := newGoPoller(t, gm)
	p := newCPoller(t, cm)
	// Unsignaled writes outstanding in every slot but one: the first
	// batch's completions retire 16 of them, as the C side's tail says.
	q.Start()
	for range cref.CQPollSlots - 1 {
		q.RDMAWrite(benchRKey, benchRaddr)
		q.SetSGE(benchLKey, benchAddr, benchLen)
	}
	if err := q.Complete(); err != nil {
		t.Fatal(err)
	}
	for i := range q.Slots {
		q.Slots[i].WRID, q.Slots[i].WQEHead = pollSlot(uint32(i))
	}
	wc := make([]cq.WC, pollBatch)
	ids := make([]uint64, pollBatch)
	for pass := 0; pass < 2; pass++ {
		for i := 0; i < pollRing/pollBatch; i++ {
			n, err := c.Poll(wc)
			if m := p.Poll(ids, pass == 1); n != pollBatch || m != n || err != nil {
				t.Fatalf("pass %d poll %d: Go %d (%v), C %d", pass, i, n, err, m)
			}
			for j := range n {
				if wc[j].WRID != ids[j] || wc[j].Status != cq.Success {
					t.Fatalf("pass %d poll %d: wr_id Go %#x, C %#x", pass, i, wc[j].WRID, ids[j])
				}
			}
			if _, tail, _ := p.State(); pass == 0 && i == 0 && q.Head()-q.Outstanding() != tail {
				t.Fatalf("send queue tail: Go %d, C %d", q.Head()-q.Outstanding(), tail)
			}
		}
		flipOwners(gm)
		flipOwners(cm)
	}
	ci, _, _ := p.State()
	if ci != c.ConsIndex() || string(gm.CQDBR) != string(cm.CQDBR) {
		t.Fatalf("consumer index Go %d, C %d; doorbell records % x, % x", c.ConsIndex(), ci, gm.CQDBR, cm.CQDBR)
	}
}

// runPasses runs b.N polls of pollBatch CQEs, a pass of the ring at a
// time; the owner bits are flipped between passes with the timer stopped.
func runPasses(b *testing.B, mem *qmem.Memory, pass func(polls int)) {
	perPass := pollRing / pollBatch
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		k := min(perPass, b.N-done)
		pass(k)
		done += k
		if k == perPass {
			b.StopTimer()
			flipOwners(mem)
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pollBatch), "ns/CQE")
}

// BenchmarkPollCQ polls requester CQEs in batches of 16 (ns/op is per
// batch): C is a loop of mlx5dv.h's CQE helpers with libmlx5's barrier
// after each CQE's owner bit, the wr_id looked up in a per-slot array by
// wqe_counter, ibv_wc filled; C-one-barrier is the same loop ordered as
// runtime/cq's fast path (the batch's owner bits, one barrier, bodies);
// Go is runtime/cq's Poll on a runtime/sq writer's bookkeeping (cq.SQ). Both poll the
// same ring contents; refilling the ring (flipping owner bits once per
// pass of 256 batches) is outside the timed region.
func BenchmarkPollCQ(b *testing.B) {
	for _, batched := range []bool{false, true} {
		name := "C"
		if batched {
			name = "C-one-barrier"
		}
		b.Run(name, func(b *testing.B) {
			mem := newPollCQ(b)
			p := newCPoller(b, mem)
			runPasses(b, mem, func(polls int) {
				if got := p.Run(uint64(polls), pollBatch, batched); got != int64(polls*pollBatch) {
					b.Fatalf("C polled %d of %d", got, polls*pollBatch)
				}
			})
		})
	}
	b.Run("Go", func(b *testing.B) {
		mem := newPollCQ(b)
		c, _ := newGoPoller(b, mem)
		wc := make([]cq.WC, pollBatch)
		var sink uint64
		runPasses(b, mem, func(polls int) {
			for range polls {
				n, err := c.Poll(wc)
				if n != pollBatch || err != nil {
					b.Fatalf("Go polled %d: %v", n, err)
				}
				for i := range wc[:n] {
					sink += wc[i].WRID
				}
			}
		})
		if sink == 0 {
			b.Fatal("no wr_ids")
		}
	})
}
