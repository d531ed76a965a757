package sq

import (
	"bytes"
	"slices"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// TestBurstChunksMatchCalls: RDMAWriteBurst, which writes in chunks where
// no index wraps, leaves the ring, the slots, the work-request starts and
// the producer state as the calls do at every ring position, with the
// work-request counter ahead of the producer index by any amount (WQEs of
// two WQEBBs in between), and across the ctrl segment's 16-bit index wrap
// (which on a ring of more than 65536 WQEBBs is not at the ring's end).
func TestBurstChunksMatchCalls(t *testing.T) {
	burstVsCalls(t, 16, 1)
	burstVsCalls(t, 1<<17, 1024)
}

// burstVsCalls posts bursts of 1 to 7 on a ring of wqebbs WQEBBs through
// RDMAWriteBurst and through the calls until the producer index passes
// 0x10000, comparing every batches batches and at the end.
func burstVsCalls(t *testing.T, wqebbs, batches int) {
	var qs [2]*SQ
	var mems [2]*qmem.Memory
	for i := range qs {
		mem, err := qmem.Plain(wqebbs, 0, 256)
		if err != nil {
			t.Fatal(err)
		}
		defer mem.Close()
		q, err := New(Config{Mem: mem, QPN: 0x1234,
			QP: QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 64, MaxSendSGE: 4}})
		if err != nil {
			t.Fatal(err)
		}
		qs[i], mems[i] = q, mem
	}
	list := []mlx.SGE{{Addr: 1, Length: 2, LKey: 3}, {Addr: 4, Length: 5, LKey: 6}, {Addr: 7, Length: 8, LKey: 9}}
	reqs := make([]RDMAWriteReq, 7)
	for batch := 1; ; batch++ {
		n := 1 + batch%len(reqs)
		for i := range reqs[:n] {
			reqs[i] = RDMAWriteReq{WRID: uint64(batch*8 + i), Raddr: uint64(batch) << 12, Addr: uint64(i), RKey: uint32(batch), LKey: 7, Length: uint32(i % 3)}
		}
		for k, q := range qs {
			q.Start()
			if batch%5 == 0 { // two WQEBBs: the counter moves one less than the index
				q.RDMAWrite(1, 2)
				q.SetSGEList(list)
			}
			if k == 0 {
				// The chunks are what this test is about: the burst must
				// not fall back to the calls.
				if !q.burstFast(reqs[:n]) {
					t.Fatalf("batch %d: the burst did not take its fast path", batch)
				}
				if err := q.RDMAWriteBurst(reqs[:n]); err != nil {
					t.Fatal(err)
				}
			} else {
				for _, r := range reqs[:n] {
					q.SetWRID(r.WRID)
					q.RDMAWrite(r.RKey, r.Raddr)
					q.SetSGE(r.LKey, r.Addr, r.Length)
				}
			}
			if err := q.Complete(); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range qs {
			q.Completed(q.Outstanding())
		}
		a, b := qs[0], qs[1]
		if batch%batches != 0 {
			continue // compared later: the rings are large
		}
		if !bytes.Equal(mems[0].SQ, mems[1].SQ) || !slices.Equal(a.Slots, b.Slots) || !slices.Equal(a.start, b.start) ||
			a.curPost != b.curPost || a.limit != b.limit || a.head != b.head || a.curCtrl != b.curCtrl ||
			a.curSize != b.curSize || a.wrID != b.wrID { // (curData: no data setter may follow the SGE)
			t.Fatalf("batch %d (producer index %#x): the burst and the calls differ: ring %v slots %v starts %v\n%+v\n%+v", batch, b.curPost,
				bytes.Equal(mems[0].SQ, mems[1].SQ), slices.Equal(a.Slots, b.Slots), slices.Equal(a.start, b.start),
				[]any{a.curPost, a.limit, a.head, a.curCtrl, a.curSize, a.wrID}, []any{b.curPost, b.limit, b.head, b.curCtrl, b.curSize, b.wrID})
		}
		if a.curPost > 0x10000+40 {
			return
		}
	}
}
