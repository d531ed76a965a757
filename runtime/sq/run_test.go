package sq_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestRunMatchesCalls: runs of one-call forms (RDMAWriteSGE,
// RDMAReadSGE, SendSGE: each call after the first of a run of one
// builder takes the run's path, which trusts the state the last one left)
// answer and write what the builders and SetSGE do, whatever comes
// between two of them: another one-call form (another builder's run),
// and every other kind of call that changes the writer's or the
// checker's state (new wr_id and wr_flags, a fence for the next WQE, a
// two-WQEBB send, a setter the work request refuses, a burst, the batch's
// end or abort, a Post form, a write through the calls, the poller's
// retirement), on a ring small enough that room runs out. The queues are
// compared after every step: answers, ring, doorbell, bookkeeping.
func TestRunMatchesCalls(t *testing.T) {
	flagSets := []mlx.SendFlags{0, mlx.IBV_SEND_SIGNALED, mlx.IBV_SEND_FENCE | mlx.IBV_SEND_SOLICITED, mlx.IBV_SEND_INLINE}
	for name, cfg := range oneCallQPs() {
		if name == "no-sge" {
			continue // no work request is whole there: a one-call form refuses it (writing nothing), the calls write the builder's part
		}
		for round := range 30 {
			t.Run(fmt.Sprintf("%s/%d", name, round), func(t *testing.T) {
				p := newOneCallPair(t, cfg)
				r := rand.New(rand.NewPCG(uint64(round), 26))
				inline := make([]byte, 100) // a send with it takes two WQEBBs
				for step := range 200 {
					k := r.IntN(16)
					both := func(f func(q *sq.SQ) error) {
						t.Helper()
						sameError(t, f(p.one), f(p.two))
					}
					switch {
					case k < 7: // a work request: one call on one side, two on the other
						length := uint32(r.IntN(3)) * 32 // 0: the general path
						kind := 0                        // mostly writes: long runs
						if r.IntN(3) == 0 {
							kind = 1 + r.IntN(2) // a read or a send
						}
						p.wr(t, kind, 0x10+uint32(step), 0x1000*uint64(step), 0x20, 0x7000+uint64(step), length)
					case k == 7:
						id := r.Uint64()
						both(func(q *sq.SQ) error { q.SetWRID(id); return nil })
					case k == 8:
						f := flagSets[r.IntN(len(flagSets))]
						both(func(q *sq.SQ) error { return q.SetWRFlags(f) })
					case k == 9:
						both(func(q *sq.SQ) error { return q.LocalInv(5) }) // a small fence for the next WQE
					case k == 10:
						both(func(q *sq.SQ) error {
							if err := q.Send(); err != nil {
								return err
							}
							return q.SetInlineData(inline)
						})
					case k == 11:
						both(func(q *sq.SQ) error { return q.SetSGE(0x21, 0x8000, 64) }) // after a whole write: refused
					case k == 12:
						reqs := []sq.RDMAWriteReq{{WRID: 7, Raddr: 0x9000, Addr: 0xa000, RKey: 3, LKey: 4, Length: 64}}
						both(func(q *sq.SQ) error { return q.RDMAWriteBurst(reqs) })
					case k == 13: // a write through the calls on both sides
						both(func(q *sq.SQ) error {
							if err := q.RDMAWrite(0x13, 0x6000); err != nil {
								return err
							}
							return q.SetSGE(0x24, 0x6800, 48)
						})
					case k == 14:
						switch r.IntN(4) {
						case 0:
							both(func(q *sq.SQ) error { q.Abort(); return nil })
						case 1:
							both(func(q *sq.SQ) error { return q.PostRDMAWriteSGE(0x12, 0x4000, 0x23, 0x5000, 16) })
						default:
							both(func(q *sq.SQ) error { return q.Complete() })
						}
					default:
						n := p.one.Outstanding()
						if n != 0 {
							n = 1 + r.Uint32N(n)
						}
						both(func(q *sq.SQ) error { return q.Completed(n) })
						both(func(q *sq.SQ) error { return q.Start() })
					}
					if !bytes.Equal(p.oneMem.SQ, p.twoMem.SQ) || !bytes.Equal(p.oneMem.DBR, p.twoMem.DBR) || !bytes.Equal(p.oneMem.BF, p.twoMem.BF) {
						t.Fatalf("step %d (%d): the runs and the calls wrote different queues", step, k)
					}
					if p.one.CurPost() != p.two.CurPost() || p.one.FmCache() != p.two.FmCache() || p.one.Last != p.two.Last || p.one.Outstanding() != p.two.Outstanding() {
						t.Fatalf("step %d (%d): state differs: producer index %d, %d; doorbell %+v, %+v", step, k, p.one.CurPost(), p.two.CurPost(), p.one.Last, p.two.Last)
					}
					for i := range p.one.Slots {
						if p.one.Slots[i] != p.two.Slots[i] {
							t.Fatalf("step %d (%d): bookkeeping of slot %d: %+v, %+v", step, k, i, p.one.Slots[i], p.two.Slots[i])
						}
					}
				}
			})
		}
	}
}
