package sq_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/ruletest"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// oneCallQPs are the QPs TestOneCallMatchesCalls runs on: the fast path
// (RC), and every reason to leave it: a DCI, a QP without RDMA read, one
// that takes no SGE, a small max_post, a small ring.
func oneCallQPs() map[string]sq.Config {
	rc := sq.QP{Type: mlx.QPRC, SendOps: ruletest.RCSendOps, MlxSendOps: ruletest.RCMlxSendOps, MaxInlineData: 64, MaxSendSGE: 2}
	noRead, noSGE, small := rc, rc, rc
	noRead.SendOps &^= mlx.IBV_QP_EX_WITH_RDMA_READ
	noSGE.MaxSendSGE = 0
	small.MaxPost = 3
	dci := sq.QP{Type: mlx.QPDCI, SendOps: 0x3ff, MaxInlineData: 64, MaxSendSGE: 2}
	bf := sq.BlueFlame{UUARN: 1, Size: 256}
	return map[string]sq.Config{
		"RC": {QPN: qpn, QP: rc, BF: bf}, "RC-sig-all": {QPN: qpn, QP: rc, BF: bf, SigAll: true},
		"no-read": {QPN: qpn, QP: noRead, BF: bf}, "no-sge": {QPN: qpn, QP: noSGE, BF: bf},
		"max-post-3": {QPN: qpn, QP: small, BF: bf}, "DCI": {QPN: qpn, QP: dci, BF: bf},
	}
}

// oneCallPair is a queue driven through the one-call forms (one) and the
// same queue driven through the builders and SetSGE (two).
type oneCallPair struct {
	one, two       *sq.SQ
	oneMem, twoMem *qmem.Memory
}

// newOneCallPair makes the two queues of a pair on 8-WQEBB rings, with
// configuration cfg; t's cleanup frees their memory.
func newOneCallPair(t *testing.T, cfg sq.Config) *oneCallPair {
	t.Helper()
	var p oneCallPair
	for _, side := range []struct {
		q   **sq.SQ
		mem **qmem.Memory
	}{{&p.one, &p.oneMem}, {&p.two, &p.twoMem}} {
		mem, err := qmem.Plain(8, 0, 256)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mem.Close() })
		c := cfg
		c.Mem = mem
		if *side.q, err = sq.New(c); err != nil {
			t.Fatal(err)
		}
		*side.mem = mem
	}
	return &p
}

// wr posts one work request both ways and fails if they answer
// differently: the same rule, or both nil.
func (p *oneCallPair) wr(t *testing.T, kind int, rkey uint32, raddr uint64, lkey uint32, addr uint64, length uint32) {
	t.Helper()
	var e1, e2 error
	switch kind {
	case 0:
		e1 = p.one.RDMAWriteSGE(rkey, raddr, lkey, addr, length)
		if e2 = p.two.RDMAWrite(rkey, raddr); e2 == nil {
			e2 = p.two.SetSGE(lkey, addr, length)
		}
	case 1:
		e1 = p.one.RDMAReadSGE(rkey, raddr, lkey, addr, length)
		if e2 = p.two.RDMARead(rkey, raddr); e2 == nil {
			e2 = p.two.SetSGE(lkey, addr, length)
		}
	default:
		e1 = p.one.SendSGE(lkey, addr, length)
		if e2 = p.two.Send(); e2 == nil {
			e2 = p.two.SetSGE(lkey, addr, length)
		}
	}
	sameError(t, e1, e2)
}

func sameError(t *testing.T, e1, e2 error) {
	t.Helper()
	var r1, r2 *mlx.RuleError
	switch {
	case (e1 == nil) != (e2 == nil):
		t.Fatalf("one call: %v; two calls: %v", e1, e2)
	case e1 == nil:
	case !errors.As(e1, &r1) || !errors.As(e2, &r2) || r1.Rule != r2.Rule || r1.Errno != r2.Errno || r1.Func != r2.Func || r1.WR != r2.WR:
		t.Fatalf("one call: %v; two calls: %v", e1, e2)
	}
}

// TestOneCallMatchesCalls: RDMAWriteSGE, RDMAReadSGE and SendSGE answer
// what their builder and SetSGE answer, on the fast path and off it, and
// a batch of them posts the same queue (bytes, bookkeeping, doorbell).
func TestOneCallMatchesCalls(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 14))
	flagSets := []mlx.SendFlags{0, mlx.IBV_SEND_SIGNALED, mlx.IBV_SEND_FENCE | mlx.IBV_SEND_SOLICITED, mlx.IBV_SEND_INLINE}
	for name, cfg := range oneCallQPs() {
		for round := range 40 {
			t.Run(fmt.Sprintf("%s/%d", name, round), func(t *testing.T) {
				p := newOneCallPair(t, cfg)
				r := rand.New(rand.NewPCG(uint64(round), 7))
				for range 3 {
					oneCallBatch(t, p, r, flagSets[rng.IntN(len(flagSets))])
				}
			})
		}
	}
}

// oneCallBatch posts a random batch both ways and compares the queues.
func oneCallBatch(t *testing.T, p *oneCallPair, r *rand.Rand, flags mlx.SendFlags) {
	t.Helper()
	start := r.IntN(8) != 0 // else every call is outside a batch
	fenced := r.IntN(3) == 0
	for _, q := range []*sq.SQ{p.one, p.two} {
		q.SetWRFlags(mlx.IBV_SEND_INLINE)
		if start {
			q.Start()
			if fenced {
				q.LocalInv(1) // a small fence for the next WQE
			}
		}
	}
	p.one.SetWRFlags(flags)
	p.two.SetWRFlags(flags)
	for i := range 1 + r.IntN(6) {
		id := uint64(100 + i)
		p.one.SetWRID(id)
		p.two.SetWRID(id)
		length := uint32(r.IntN(3)) * 32
		p.wr(t, r.IntN(3), 0x10+uint32(i), 0x1000*uint64(i), 0x20, 0x7000+uint64(i), length)
	}
	e1, e2 := p.one.Complete(), p.two.Complete()
	sameError(t, e1, e2)
	if e1 == nil && (!bytes.Equal(p.oneMem.SQ, p.twoMem.SQ) || !bytes.Equal(p.oneMem.BF, p.twoMem.BF)) {
		t.Fatal("the one-call forms and the calls wrote different rings")
	}
	if !bytes.Equal(p.oneMem.DBR, p.twoMem.DBR) || p.one.CurPost() != p.two.CurPost() || p.one.FmCache() != p.two.FmCache() ||
		p.one.Last != p.two.Last || p.one.Outstanding() != p.two.Outstanding() {
		t.Fatalf("state differs: producer index %d, %d; doorbell %+v, %+v", p.one.CurPost(), p.two.CurPost(), p.one.Last, p.two.Last)
	}
	for i := range p.one.Slots {
		if e1 == nil && p.one.Slots[i] != p.two.Slots[i] {
			t.Fatalf("bookkeeping of slot %d: %+v, %+v", i, p.one.Slots[i], p.two.Slots[i])
		}
	}
	if r.IntN(2) == 0 {
		p.one.Completed(p.one.Outstanding())
		p.two.Completed(p.two.Outstanding())
	}
}
