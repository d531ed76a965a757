package sq

import (
	"bytes"
	"math/rand/v2"
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
				if checked, err := burstChecked(q, reqs[:n]); err != nil || checked {
					t.Fatalf("batch %d: the burst took the general path %v: %v", batch, checked, err)
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

// burstChecked posts reqs with RDMAWriteBurst and reports whether the
// burst took the general path (rdmaWriteChecked).
func burstChecked(q *SQ, reqs []RDMAWriteReq) (checked bool, err error) {
	testHookBurstChecked = func() { checked = true }
	defer func() { testHookBurstChecked = nil }()
	err = q.RDMAWriteBurst(reqs)
	return checked, err
}

// TestBurstLengthsExact: RDMAWriteBurst takes its fast path exactly when
// every length is within the QP's limit, for bursts of 1 to 13 requests
// (the four-request steps and the rest) with a refused length at each
// place, and lengths whose OR passes the limit while each is within it
// (taken one by one, and accepted); the general path refuses the others.
func TestBurstLengthsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 4))
	for _, maxMsg := range []uint64{0, 1 << 30, 64, 100, 1<<31 - 5} {
		mem, err := qmem.Plain(64, 0, 256)
		if err != nil {
			t.Fatal(err)
		}
		defer mem.Close()
		q, err := New(Config{Mem: mem, QPN: 0x1234,
			QP: QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxSendSGE: 4, MaxMsgSize: maxMsg}})
		if err != nil {
			t.Fatal(err)
		}
		lim := q.chk.SGELimit()
		good := func() uint32 {
			return []uint32{0, 1, lim, lim - 1, lim/2 + 1, rng.Uint32N(lim + 1)}[rng.IntN(6)]
		}
		bad := func() uint32 {
			return []uint32{lim + 1, 1 << 31, 0xffffffff, lim + 1 + rng.Uint32N(^lim)}[rng.IntN(4)]
		}
		orOver := 0 // accepted bursts whose OR passed the limit
		for n := 1; n <= 13; n++ {
			reqs := make([]RDMAWriteReq, n)
			for trial := range 200 {
				or, want := uint32(0), true
				for i := range reqs {
					reqs[i] = RDMAWriteReq{Length: good()}
					if trial%2 == 1 && i == trial/2%n {
						reqs[i].Length, want = bad(), false
					}
					or |= reqs[i].Length
				}
				if err := q.Start(); err != nil {
					t.Fatal(err)
				}
				checked, err := burstChecked(q, reqs)
				if checked == want || (err == nil) != want {
					t.Fatalf("max_msg_sz %#x, limit %#x: lengths %v: general path %v (%v), want the fast path %v", maxMsg, lim, lengthsOf(reqs), checked, err, want)
				}
				q.Abort()
				if want && or > lim {
					orOver++
				}
			}
		}
		if orOver == 0 && lim&(lim+1) != 0 { // (under 2^k - 1, no OR of lengths within it passes it)
			t.Fatalf("max_msg_sz %#x: no accepted burst had an OR above the limit", maxMsg)
		}
	}
}

func lengthsOf(reqs []RDMAWriteReq) []uint32 {
	l := make([]uint32, len(reqs))
	for i, r := range reqs {
		l[i] = r.Length
	}
	return l
}
