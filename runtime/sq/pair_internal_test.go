package sq

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// TestPairRunMatchesCalls: RDMAWrite and SetSGE where they take their
// runs' paths (a write right after a whole write: rdmaWrite's run; the
// SGE right after a write RDMAWrite opened: SetSGE's pair) answer and
// write what the same calls do with every run ended before each call (the
// checker's EndRun, so that only the fast paths' general checks and the
// full checks run), one call at a time in random orders: the pair broken
// by every other kind of call (another setter, new wr_id and wr_flags, a
// fence for the next WQE, a one-call write, a two-WQEBB send, a burst, an
// SGE list, the batch's end or abort, a Post form, the poller's
// retirement), SGEs the rules refuse or the fast paths leave (empty, over
// max_msg_sz), on QPs where the SGE does not make the write whole and on
// a ring small enough that room runs out. The queues are compared after
// every call: answers, ring, doorbell, bookkeeping.
func TestPairRunMatchesCalls(t *testing.T) {
	rc := QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 64, MaxSendSGE: 2}
	maxMsg, noSGE, small := rc, rc, rc
	maxMsg.MaxMsgSize = 100
	noSGE.MaxSendSGE = 0
	small.MaxPost = 3
	qps := map[string]Config{
		"RC": {QP: rc}, "RC-sig-all": {QP: rc, SigAll: true}, "max-msg-100": {QP: maxMsg},
		"no-sge": {QP: noSGE}, "max-post-3": {QP: small},
		"DCI": {QP: QP{Type: mlx.QPDCI, SendOps: 0x3ff, MaxInlineData: 64, MaxSendSGE: 2}},
	}
	for name, cfg := range qps {
		for round := range 20 {
			t.Run(fmt.Sprintf("%s/%d", name, round), func(t *testing.T) {
				pairRunRound(t, cfg, rand.New(rand.NewPCG(uint64(round), 59)))
			})
		}
	}
}

// pairRunRound drives one queue with runs and one without (ref) through
// 300 random calls.
func pairRunRound(t *testing.T, cfg Config, r *rand.Rand) {
	var qs [2]*SQ // [0] with runs, [1] the reference
	var mems [2]*qmem.Memory
	for i := range qs {
		mem, err := qmem.Plain(8, 0, 256)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mem.Close() })
		c := cfg
		c.Mem, c.QPN, c.BF = mem, 0x1234, BlueFlame{UUARN: 1, Size: 256}
		if qs[i], err = New(c); err != nil {
			t.Fatal(err)
		}
		mems[i] = mem
	}
	flagSets := []mlx.SendFlags{0, mlx.IBV_SEND_SIGNALED, mlx.IBV_SEND_FENCE | mlx.IBV_SEND_SOLICITED, mlx.IBV_SEND_INLINE}
	inline := make([]byte, 100) // a send with it takes two WQEBBs
	wantPair, wantRun := false, false
	streak := 0 // pair calls still to make in a row: long runs
	for step := range 300 {
		k := r.IntN(24)
		if streak > 0 {
			k, streak = 0, streak-1
		} else if k < 8 {
			streak = r.IntN(12)
		}
		length := []uint32{64, 64, 64, 64, 64, 64, 0, 128}[r.IntN(8)] // 0: the general path; 128: over max_msg_sz 100
		n := r.Uint32N(qs[0].Outstanding() + 1)
		flags := flagSets[r.IntN(len(flagSets))]
		id := r.Uint64()
		call := func(q *SQ) error {
			switch {
			case k < 8: // mostly the pair's two calls, one after the other
				if step%2 == 0 {
					return q.RDMAWrite(0x10+uint32(step), 0x1000*uint64(step))
				}
				return q.SetSGE(0x20, 0x7000+uint64(step), length)
			case k < 12:
				return q.RDMAWrite(0x11, 0x2000*uint64(step))
			case k < 15:
				return q.SetSGE(0x21, 0x8000, length)
			case k == 15:
				return q.RDMAWriteSGE(0x12, 0x3000, 0x22, 0x9000, length)
			case k == 16:
				q.SetWRID(id)
				return nil
			case k == 17:
				return q.SetWRFlags(flags)
			case k == 18:
				return q.LocalInv(5) // a small fence for the next WQE
			case k == 19:
				if step%2 == 0 {
					return q.Send()
				}
				return q.SetInlineData(inline)
			case k == 20:
				if step%2 == 0 {
					return q.RDMAWriteBurst([]RDMAWriteReq{{WRID: 7, Raddr: 0x9000, Addr: 0xa000, RKey: 3, LKey: 4, Length: length}})
				}
				return q.SetSGEList([]mlx.SGE{{Addr: 0x100, Length: length, LKey: 5}, {Addr: 0x200, Length: 8, LKey: 6}})
			case k == 21:
				return []func() error{q.Complete, q.Start, func() error { q.Abort(); return nil },
					func() error { return q.PostRDMAWriteSGE(0x13, 0x4000, 0x23, 0x5000, length) }}[step%4]()
			default:
				if err := q.Completed(n); err != nil {
					return err
				}
				return q.Start()
			}
		}
		// The paths the call may take on the queue with runs.
		wantPair, wantRun = qs[0].chk.InPair(), qs[0].chk.InRun(mlx.FnWRRDMAWrite)
		e0 := call(qs[0])
		qs[1].chk.EndRun()
		e1 := call(qs[1])
		if !sameRuleError(e0, e1) {
			t.Fatalf("step %d (%d, pair %v, run %v): with runs %v; without %v", step, k, wantPair, wantRun, e0, e1)
		}
		if err := sameQueues(qs[0], qs[1], mems[0], mems[1]); err != nil {
			t.Fatalf("step %d (%d, pair %v, run %v): %v", step, k, wantPair, wantRun, err)
		}
	}
}

// sameRuleError reports whether two calls answered alike: both nil, or
// the same rule, errno, function and work request.
func sameRuleError(e0, e1 error) bool {
	var r0, r1 *mlx.RuleError
	switch {
	case e0 == nil || e1 == nil:
		return e0 == nil && e1 == nil
	case errors.As(e0, &r0) != errors.As(e1, &r1):
		return false
	case r0 == nil:
		return e0.Error() == e1.Error()
	}
	return r0.Rule == r1.Rule && r0.Errno == r1.Errno && r0.Func == r1.Func && r0.WR == r1.WR
}

// sameQueues compares what two queues wrote and hold: ring, doorbell
// record and register, slots and starts, and the writer's state.
func sameQueues(a, b *SQ, ma, mb *qmem.Memory) error {
	switch {
	case !bytes.Equal(ma.SQ, mb.SQ) || !bytes.Equal(ma.DBR, mb.DBR) || !bytes.Equal(ma.BF, mb.BF):
		return errors.New("the queues' memory differs")
	case !slices.Equal(a.Slots, b.Slots) || !slices.Equal(a.start, b.start):
		return errors.New("the bookkeeping differs")
	case a.Last != b.Last:
		return fmt.Errorf("doorbell %+v, %+v", a.Last, b.Last)
	}
	// (Not curData: a run's write leaves it stale, as no setter may follow
	// a whole work request; a stale one read would show in the ring.)
	sa := []any{a.curPost, a.curCtrl, a.curSize, a.nreq, a.head, a.limit, a.fastEnd, a.fmCache, a.wrID, a.Outstanding()}
	sb := []any{b.curPost, b.curCtrl, b.curSize, b.nreq, b.head, b.limit, b.fastEnd, b.fmCache, b.wrID, b.Outstanding()}
	if !slices.Equal(sa, sb) {
		return fmt.Errorf("state (curPost, curCtrl, curSize, nreq, head, limit, fastEnd, fmCache, wrID, outstanding) %v, %v", sa, sb)
	}
	return nil
}
