package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sim/engine"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestErrorThenFlush: a bad lkey fails its work request with a local
// protection error (signaled or not), the QP moves to error, and the
// work requests after it flush, each with its own CQE.
func TestErrorThenFlush(t *testing.T) {
	f, a, b := pair(t, defaults)
	a.q.Start()
	for i, lkey := range []uint32{a.key, a.key ^ 0x55, a.key, a.key} {
		a.q.SetWRID(uint64(10 + i))
		a.q.SetWRFlags(0)
		a.q.RDMAWrite(b.key, b.addr(0))
		a.q.SetSGE(lkey, a.addr(0), 8)
	}
	if err := a.q.Complete(); err != nil {
		t.Fatal(err)
	}
	var traced []engine.WQEError
	f.Trace = func(e engine.WQEError) { traced = append(traced, e) }
	f.Drain(10)
	if len(traced) != 1 || traced[0].Index != 1 || traced[0].Syndrome != mlx.MLX5_CQE_SYNDROME_LOCAL_PROT_ERR ||
		!strings.Contains(traced[0].Error(), "unknown or invalid key") {
		t.Errorf("traced %v", traced)
	}
	wc := a.poll()
	want := []cq.Status{cq.LocProtErr, cq.WRFlushErr, cq.WRFlushErr}
	if len(wc) != len(want) {
		t.Fatalf("%+v", wc)
	}
	for i, w := range wc {
		if w.Status != want[i] || w.WRID != uint64(11+i) {
			t.Errorf("completion %d: %+v, want %v of %d", i, w, want[i], 11+i)
		}
	}
	if a.q.Outstanding() != 0 || a.qp.State() != mlx.IBV_QPS_ERR {
		t.Fatalf("outstanding %d, state %v", a.q.Outstanding(), a.qp.State())
	}
	// Posting on a QP in error flushes at once.
	a.post(20, 0, func(q *sq.SQ) error {
		q.RDMAWrite(b.key, b.addr(0))
		return q.SetSGE(a.key, a.addr(0), 8)
	})
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.WRFlushErr || wc[0].WRID != 20 {
		t.Fatalf("after the error: %+v", wc)
	}
}

func TestRemoteErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(a, b *side) func(q *sq.SQ) error
		want  cq.Status
	}{
		{"bad rkey", func(a, b *side) func(q *sq.SQ) error {
			return func(q *sq.SQ) error { q.RDMAWrite(b.key+1, b.addr(0)); return q.SetSGE(a.key, a.addr(0), 8) }
		}, cq.RemAccessErr},
		{"past the remote MR", func(a, b *side) func(q *sq.SQ) error {
			return func(q *sq.SQ) error { q.RDMAWrite(b.key, b.addr(1<<16-4)); return q.SetSGE(a.key, a.addr(0), 8) }
		}, cq.RemAccessErr},
		{"read with a bad rkey", func(a, b *side) func(q *sq.SQ) error {
			return func(q *sq.SQ) error { q.RDMARead(0x1234500, b.addr(0)); return q.SetSGE(a.key, a.addr(0), 8) }
		}, cq.RemAccessErr},
		{"local length past the MR", func(a, b *side) func(q *sq.SQ) error {
			return func(q *sq.SQ) error { q.RDMAWrite(b.key, b.addr(0)); return q.SetSGE(a.key, a.addr(1<<16-4), 8) }
		}, cq.LocProtErr},
	}
	for _, c := range cases {
		f, a, b := pair(t, defaults)
		a.post(1, mlx.IBV_SEND_SIGNALED, c.build(a, b))
		f.Drain(10)
		if wc := a.poll(); len(wc) != 1 || wc[0].Status != c.want {
			t.Errorf("%s: %+v, want %v", c.name, wc, c.want)
		}
	}
}

// TestRemoteAccessFlags: an MR without remote write refuses a write.
func TestRemoteAccessFlags(t *testing.T) {
	f, a, b := pair(t, defaults)
	ro, err := b.d.RegMR(b.pd, b.data.Bytes[:4096], b.data.Addr, mlx.IBV_ACCESS_REMOTE_READ)
	if err != nil {
		t.Fatal(err)
	}
	a.post(0x5eed, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMAWrite(ro, b.addr(0)); return q.SetSGE(a.key, a.addr(0), 8) })
	f.Drain(10)
	wc := a.poll()
	if len(wc) != 1 || wc[0].Status != cq.RemAccessErr {
		t.Fatalf("%+v", wc)
	}
	// The error says which work request failed, how it was posted and
	// why; libmlx5's opcode stays IBV_WC_SEND.
	w := wc[0]
	if w.Opcode != mlx.IBV_WC_SEND || mlx.Opcode(w.PostedOpcode) != mlx.MLX5_OPCODE_RDMA_WRITE ||
		mlx.CQESyndrome(w.Syndrome) != mlx.MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR {
		t.Errorf("opcode %v, posted %v, syndrome %v", w.Opcode, mlx.Opcode(w.PostedOpcode), mlx.CQESyndrome(w.Syndrome))
	}
	err = w.Err()
	msg := fmt.Sprint(err)
	for _, want := range []string{"wr_id 0x5eed", fmt.Sprintf("QPN %#x", a.qp.QPN()), "RDMA_WRITE",
		"MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR", "the remote key lacks the access rights for this operation", "vendor error 0x"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if !errors.Is(err, syscall.EACCES) {
		t.Errorf("errors.Is(%v, EACCES) = false", err)
	}
}

// TestReceiveTooSmall: the responder fails the receive with a local length
// error and the requester gets a remote invalid request error.
func TestReceiveTooSmall(t *testing.T) {
	f, a, b := pair(t, defaults)
	b.r.Post(3, []rq.SGE{{Addr: b.addr(0), Length: 4, LKey: b.key}})
	b.r.Post(4, []rq.SGE{{Addr: b.addr(0), Length: 4, LKey: b.key}})
	a.post(1, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.Send(); return q.SetSGE(a.key, a.addr(0), 8) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.RemInvReqErr {
		t.Fatalf("requester %+v", wc)
	}
	wc := b.poll()
	if len(wc) != 2 || wc[0].WRID != 3 || wc[0].Status != cq.LocLenErr || wc[1].WRID != 4 || wc[1].Status != cq.WRFlushErr {
		t.Fatalf("responder %+v", wc)
	}
}

func TestReceiveBadLKey(t *testing.T) {
	f, a, b := pair(t, defaults)
	b.r.Post(3, []rq.SGE{{Addr: b.addr(0), Length: 64, LKey: 0xdead00}})
	a.post(1, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.Send(); return q.SetSGE(a.key, a.addr(0), 8) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.RemOpErr {
		t.Fatalf("requester %+v", wc)
	}
	if wc := b.poll(); len(wc) != 1 || wc[0].Status != cq.LocProtErr {
		t.Fatalf("responder %+v", wc)
	}
}

// TestPeerGone: an RC QP whose peer is not there exhausts its retries.
func TestPeerGone(t *testing.T) {
	f, a, b := pair(t, defaults)
	if err := b.d.DestroyQP(b.qp); err != nil {
		t.Fatal(err)
	}
	a.post(1, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMAWrite(b.key, b.addr(0)); return q.SetSGE(a.key, a.addr(0), 8) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.RetryExcErr {
		t.Fatalf("%+v", wc)
	}
}

// TestCQOverrun: a CQ the program does not poll overflows; the device
// reports IBV_EVENT_CQ_ERR, as libibverbs delivers it.
func TestCQOverrun(t *testing.T) {
	o := defaults
	o.cqes = 4
	f, a, b := pair(t, o)
	for i := range 6 {
		a.post(uint64(i), mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
			q.RDMAWrite(b.key, b.addr(0))
			return q.SetSGE(a.key, a.addr(0), 8)
		})
	}
	f.Drain(10)
	if !a.cq.Overrun() {
		t.Fatal("no overrun")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ev, err := a.d.NextEvent(ctx)
	if err != nil || ev.Type != mlx.IBV_EVENT_CQ_ERR || ev.CQN != a.cq.CQN() {
		t.Fatalf("event %v, %v", ev, err)
	}
	if wc := a.poll(); len(wc) != 4 {
		t.Fatalf("%d completions before the overrun, want 4", len(wc))
	}
}

// TestCQE128: 128-byte CQEs, across several passes of the CQ.
func TestCQE128(t *testing.T) {
	o := defaults
	o.cqes, o.cqeSize = 4, 128
	f, a, b := pair(t, o)
	for i := range 20 {
		a.post(uint64(i), mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
			q.RDMAWrite(b.key, b.addr(0))
			return q.SetSGE(a.key, a.addr(0), 8)
		})
		f.Drain(10)
		if wc := a.poll(); len(wc) != 1 || wc[0].WRID != uint64(i) || wc[0].Status != cq.Success {
			t.Fatalf("%d: %+v", i, wc)
		}
	}
}

// TestQPAccess: a responder QP whose qp_access_flags lack remote write
// refuses RDMA writes, whatever the MR allows.
func TestQPAccess(t *testing.T) {
	f, a, b := pair(t, defaults)
	b.qp.SetAccess(mlx.IBV_ACCESS_REMOTE_READ)
	a.post(1, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMAWrite(b.key, b.addr(0)); return q.SetSGE(a.key, a.addr(0), 8) })
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.RemAccessErr {
		t.Fatalf("%+v", wc)
	}
}

// TestCreateQPChecks: QPs need CQs of their own device and a known PD.
func TestCreateQPChecks(t *testing.T) {
	f := engine.NewFabric()
	a, b := newSide(t, f, "a", defaults), newSide(t, f, "b", defaults)
	cases := []engine.QPConfig{
		{Type: engine.RC, PD: a.pd, SendCQ: b.cq, RecvCQ: a.cq, Mem: a.mem},
		{Type: engine.RC, PD: a.pd, SendCQ: a.cq, RecvCQ: b.cq, Mem: a.mem},
		{Type: engine.DCT, PD: a.pd, RecvCQ: b.cq},
		{Type: engine.DCI, PD: a.pd, SendCQ: a.cq},
		{Type: engine.RC, PD: 99, SendCQ: a.cq, RecvCQ: a.cq, Mem: a.mem},
	}
	for i, c := range cases {
		if _, err := a.d.CreateQP(c); err == nil {
			t.Errorf("case %d: created", i)
		}
	}
}

// TestReadBeforeError: a READ in flight when a later write fails still
// completes (its response comes first on the wire); a READ in flight when
// the program moves the QP to error is flushed.
func TestReadBeforeError(t *testing.T) {
	f, a, b := pair(t, defaults)
	copy(b.data.Bytes, "response")
	a.q.Start()
	a.q.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	a.q.SetWRID(1)
	a.q.RDMARead(b.key, b.addr(0))
	a.q.SetSGE(a.key, a.addr(0), 8)
	a.q.SetWRID(2)
	a.q.RDMAWrite(b.key^1, b.addr(0))
	a.q.SetSGE(a.key, a.addr(0), 8)
	if err := a.q.Complete(); err != nil {
		t.Fatal(err)
	}
	f.Drain(10)
	wc := a.poll()
	if len(wc) != 2 || wc[0].Status != cq.Success || wc[1].Status != cq.RemAccessErr || string(a.data.Bytes[:8]) != "response" {
		t.Fatalf("%+v", wc)
	}

	f, a, b = pair(t, defaults)
	a.post(3, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error { q.RDMARead(b.key, b.addr(0)); return q.SetSGE(a.key, a.addr(0), 8) })
	f.Step() // sent, not landed
	if err := a.qp.Modify(mlx.IBV_QPS_ERR, nil); err != nil {
		t.Fatal(err)
	}
	f.Drain(10)
	if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.WRFlushErr {
		t.Fatalf("after modify to ERR: %+v", wc)
	}
}

// TestMaxMsgSize: a message longer than the port's max_msg_sz (here a
// device made with 4 KiB) is a local length error, checked before any key
// is looked up, for writes, sends and READs alike.
func TestMaxMsgSize(t *testing.T) {
	for i, op := range []func(q *sq.SQ, b *side){
		func(q *sq.SQ, b *side) { q.RDMAWrite(b.key, b.addr(0)) },
		nil, // a single SGE: the fast path's case
		func(q *sq.SQ, b *side) { q.Send() },
		func(q *sq.SQ, b *side) { q.RDMARead(b.key, b.addr(0)) },
	} {
		saved := engine.DefaultCaps
		engine.DefaultCaps.MaxMsgSize = 4096
		f, a, b := pair(t, defaults)
		engine.DefaultCaps = saved
		a.post(1, mlx.IBV_SEND_SIGNALED, func(q *sq.SQ) error {
			if op == nil {
				q.RDMAWrite(b.key, b.addr(0))
				return q.SetSGE(a.key, a.addr(0), 4097)
			}
			op(q, b)
			return q.SetSGEList([]mlx.SGE{{Addr: a.addr(0), Length: 4096, LKey: a.key}, {Addr: a.addr(0), Length: 1, LKey: 0xbad00}})
		})
		f.Drain(10)
		if wc := a.poll(); len(wc) != 1 || wc[0].Status != cq.LocLenErr {
			t.Fatalf("work request %d: %+v", i, wc)
		}
	}
}
