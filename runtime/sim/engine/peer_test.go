package engine_test

import (
	"bytes"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sim/engine"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// modifyTo walks s's QP from RESET to RTS towards r.
func modifyTo(t *testing.T, s *side, r engine.Remote) {
	t.Helper()
	for _, st := range []mlx.QPState{mlx.IBV_QPS_INIT, mlx.IBV_QPS_RTR, mlx.IBV_QPS_RTS} {
		if err := s.qp.Modify(st, &r); err != nil {
			t.Fatal(err)
		}
	}
}

// wrongPeerOps are the RC requests a responder must drop from a QP it is
// not connected to: each writes or reads b's data at 0..15 (a send lands
// there through b's posted receive).
var wrongPeerOps = []struct {
	name  string
	build func(x, b *side) func(q *sq.SQ) error
}{
	{"write", func(x, b *side) func(q *sq.SQ) error { // the engine's fast path
		return func(q *sq.SQ) error { q.RDMAWrite(b.key, b.addr(0)); return q.SetSGE(x.key, x.addr(0), 16) }
	}},
	{"write-imm", func(x, b *side) func(q *sq.SQ) error {
		return func(q *sq.SQ) error { q.RDMAWriteImm(b.key, b.addr(0), 1); return q.SetSGE(x.key, x.addr(0), 16) }
	}},
	{"send", func(x, b *side) func(q *sq.SQ) error {
		return func(q *sq.SQ) error { q.Send(); return q.SetSGE(x.key, x.addr(0), 16) }
	}},
	{"read", func(x, b *side) func(q *sq.SQ) error {
		return func(q *sq.SQ) error { q.RDMARead(b.key, b.addr(0)); return q.SetSGE(x.key, x.addr(0), 16) }
	}},
	{"atomic", func(x, b *side) func(q *sq.SQ) error {
		return func(q *sq.SQ) error { q.AtomicFetchAdd(b.key, b.addr(0), 1); return q.SetSGE(x.key, x.addr(0), 8) }
	}},
}

// checkDropped: x's request (build) to b, which is connected elsewhere,
// ends with a transport retry error at x; b's memory, receive queue,
// CQ and state are untouched.
func checkDropped(t *testing.T, f *engine.Fabric, x, b *side, build func(q *sq.SQ) error) {
	t.Helper()
	copy(x.data.Bytes, "from the intruder")
	copy(b.data.Bytes, "b's own sixteen bytes")
	if err := b.r.Post(5, []rq.SGE{{Addr: b.addr(0), Length: 16, LKey: b.key}}); err != nil {
		t.Fatal(err)
	}
	x.post(1, mlx.IBV_SEND_SIGNALED, build)
	f.Drain(20)
	wc := x.poll()
	if len(wc) != 1 || wc[0].WRID != 1 || wc[0].Status != cq.RetryExcErr {
		t.Fatalf("the intruder's completion: %+v, want one IBV_WC_RETRY_EXC_ERR", wc)
	}
	if x.qp.State() != mlx.IBV_QPS_ERR {
		t.Fatalf("the intruder is in %v, want IBV_QPS_ERR", x.qp.State())
	}
	if !bytes.Equal(b.data.Bytes[:21], []byte("b's own sixteen bytes")) {
		t.Fatalf("b's memory changed: %q", b.data.Bytes[:21])
	}
	if got := b.poll(); len(got) != 0 {
		t.Fatalf("b saw completions of a dropped request: %+v", got)
	}
	if b.qp.State() != mlx.IBV_QPS_RTS {
		t.Fatalf("b is in %v, want IBV_QPS_RTS", b.qp.State())
	}
}

// TestWrongPeerDropped: A and B are connected; C connects to B, but B's
// context names A: every request of C is dropped, C's retries run out,
// and A and B go on.
func TestWrongPeerDropped(t *testing.T) {
	for _, op := range wrongPeerOps {
		t.Run(op.name, func(t *testing.T) {
			f, a, b := pair(t, defaults)
			c := newSide(t, f, "sim2", defaults)
			modifyTo(t, c, engine.Remote{LID: b.d.LID(), QPN: b.qp.QPN(), RNRRetry: 7})
			checkDropped(t, f, c, b, op.build(c, b))
			// The connected pair still works: A writes into B.
			copy(a.data.Bytes, "from a")
			a.post(2, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
				q.RDMAWrite(b.key, b.addr(100))
				return q.SetSGE(a.key, a.addr(0), 6)
			})
			f.Drain(20)
			if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success {
				t.Fatalf("A's write after C's: %+v", wc)
			}
			if string(b.data.Bytes[100:106]) != "from a" {
				t.Fatal("A's write did not land")
			}
		})
	}
}

// TestWrongAddressDropped: B names A's QPN but another device's LID (or
// GID): A's requests fail the address check. With A's GID, routed by GRH,
// they pass.
func TestWrongAddressDropped(t *testing.T) {
	f, a, b := pair(t, defaults)
	c := newSide(t, f, "sim2", defaults)
	reconnect := func(r engine.Remote) {
		if err := b.qp.Modify(mlx.IBV_QPS_RESET, nil); err != nil {
			t.Fatal(err)
		}
		b.q.Reset()
		modifyTo(t, b, r)
	}
	reconnect(engine.Remote{LID: c.d.LID(), QPN: a.qp.QPN(), RNRRetry: 7})
	checkDropped(t, f, a, b, wrongPeerOps[0].build(a, b))

	// A again, B now naming A's GID: accepted.
	if err := a.qp.Modify(mlx.IBV_QPS_RESET, nil); err != nil {
		t.Fatal(err)
	}
	a.q.Reset()
	modifyTo(t, a, engine.Remote{LID: b.d.LID(), QPN: b.qp.QPN(), RNRRetry: 7})
	reconnect(engine.Remote{GRH: true, GID: a.d.GID(), QPN: a.qp.QPN(), RNRRetry: 7})
	a.post(3, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		q.RDMAWrite(b.key, b.addr(0))
		return q.SetSGE(a.key, a.addr(0), 16)
	})
	f.Drain(20)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success {
		t.Fatalf("A's write to B routed by A's GID: %+v", wc)
	}
	// B names C's GID: A's requests are dropped.
	reconnect(engine.Remote{GRH: true, GID: c.d.GID(), QPN: a.qp.QPN(), RNRRetry: 7})
	checkDropped(t, f, a, b, wrongPeerOps[1].build(a, b))
}

// TestReconnectedPeer: A has sent to B (the engine caches B as A's
// peer); B is reset and connected to C. A's next requests are dropped.
func TestReconnectedPeer(t *testing.T) {
	f, a, b := pair(t, defaults)
	c := newSide(t, f, "sim2", defaults)
	a.post(1, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
		q.RDMAWrite(b.key, b.addr(200))
		return q.SetSGE(a.key, a.addr(0), 8)
	})
	f.Drain(20)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.Success {
		t.Fatalf("the first write: %+v", wc)
	}
	if err := b.qp.Modify(mlx.IBV_QPS_RESET, nil); err != nil {
		t.Fatal(err)
	}
	b.q.Reset()
	modifyTo(t, b, engine.Remote{LID: c.d.LID(), QPN: c.qp.QPN(), RNRRetry: 7})
	checkDropped(t, f, a, b, wrongPeerOps[0].build(a, b))
}
