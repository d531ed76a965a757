// Package devicetest is the conformance suite of runtime/device: what
// every backend (the hardware over libibverbs, the simulator) must do the
// same, run from the backend's own tests:
//
//	func TestConformance(t *testing.T) {
//		devicetest.Run(t, func(t *testing.T) *device.Context {
//			c, err := device.Open("sim:conformance")
//			if err != nil {
//				t.Fatal(err)
//			}
//			return c
//		})
//	}
//
// Each subtest opens its own context and closes it at the end. The RC
// tests connect two QPs of one context to each other (a loopback through
// the device's own port, which hardware and the simulator both carry).
package devicetest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
)

// Opener opens a fresh context for one subtest (failing t if it cannot).
type Opener func(t *testing.T) *device.Context

// PollTimeout bounds how long the suite polls for a completion.
var PollTimeout = 10 * time.Second

// Run runs the suite on the contexts open returns.
func Run(t *testing.T, open Opener) {
	runCases(t, open, []testCase{
		{"Open", testOpen},
		{"PDAndMR", testPDAndMR},
		{"CQ", testCQ},
		{"RCWrite", testRCWrite},
		{"Transitions", testTransitions},
		{"CloseOrder", testCloseOrder},
		{"UseAfterClose", testUseAfterClose},
		{"BadArguments", testBadArguments},
		{"CompChannel", testCompChannel},
		{"SharedWaiters", testSharedWaiters},
		{"Mkey", testMkey},
		{"SRQPost", testSRQPost},
		{"SRQSend", testSRQSend},
		{"SRQQPs", testSRQQPs},
		{"WaitCQClose", testWaitCQClose},
		{"WaitChannelClose", testWaitChannelClose},
		{"WaitContextClose", testWaitContextClose},
		{"WaitTimeout", testWaitTimeout},
		{"PollWait", testPollWait},
		{"ErrorState", testErrorState},
		{"Query", testQuery},
		{"Recovery", testRecovery},
		{"CQOverrun", testCQOverrun},
		{"ErrorExplains", testErrorExplains},
		{"MessageSize", testMessageSize},
		{"PostPollSplit", testPostPollSplit},
		{"CloseRace", testCloseRace},
		{"MRPinsRegion", testMRPinsRegion},
		{"UmemClose", testUmemClose},
		{"WrongPeer", testWrongPeer},
		{"Rules", testRules},
	})
	// A case that closes contexts of its own, so it takes the opener.
	t.Run("CloseContextRace", func(t *testing.T) { testCloseContextRace(t, open) })
}

// testCase is one case of a suite: it gets a fresh context.
type testCase struct {
	name string
	fn   func(*testing.T, *device.Context)
}

// runCases runs each case as a subtest on its own context, closed after.
func runCases(t *testing.T, open Opener, cases []testCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := open(t)
			if c == nil {
				t.Fatal("the opener returned a nil context")
			}
			defer func() {
				if err := c.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			tc.fn(t, c)
		})
	}
}

// Buffer returns n bytes of memory the collector does not move, unmapped
// when t ends.
func Buffer(t *testing.T, n int) []byte {
	t.Helper()
	size := 4096
	for size < n {
		size <<= 1
	}
	r, err := dma.Map(dma.Options{Size: size, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The suite closes the context first: an MR left registered
		// over the buffer would be a lifetime bug.
		if err := r.Close(); err != nil {
			t.Errorf("closing a test buffer: %v", err)
		}
	})
	b, err := r.Alloc(size, 64)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes[:n]
}

// Must fails t with err, the step it came from named.
func Must[T any](t *testing.T, step string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return v
	}
}

// PollOne polls q until it yields a completion (or PollTimeout passes).
func PollOne(t *testing.T, q *device.CQ) cq.WC {
	t.Helper()
	wc := make([]cq.WC, 1)
	deadline := time.Now().Add(PollTimeout)
	for {
		n, err := q.Poll(wc)
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		if n == 1 {
			return wc[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completion on CQ %#x within %v", q.CQN(), PollTimeout)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// Pair is two RC QPs of one context connected to each other, on one CQ.
type Pair struct {
	PD   *device.PD
	CQ   *device.CQ
	A, B *device.QP
}

// RCPair creates and connects a pair (with a channel for the CQ if ch is
// not nil).
func RCPair(t *testing.T, c *device.Context, ch *device.CompChannel) Pair {
	t.Helper()
	p := Pair{PD: Must[*device.PD](t, "AllocPD")(c.AllocPD())}
	p.CQ = Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16, Channel: ch}))
	cfg := device.QPConfig{Kind: device.RC, SendCQ: p.CQ, MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_READ | mlx.IBV_QP_EX_WITH_SEND}
	p.A = Must[*device.QP](t, "CreateQP A")(p.PD.CreateQP(cfg))
	p.B = Must[*device.QP](t, "CreateQP B")(p.PD.CreateQP(cfg))
	ConnectPair(t, p.A, p.B)
	for _, q := range []*device.QP{p.A, p.B} {
		if s := q.State(); s != mlx.IBV_QPS_RTS {
			t.Fatalf("QP %#x is in %v after Connect, want IBV_QPS_RTS", q.QPN(), s)
		}
	}
	return p
}

// Write posts a signaled RDMA write of src to dst on q.
func Write(t *testing.T, q *device.QP, wrid uint64, src, dst *device.MR, n uint32) {
	t.Helper()
	s := q.SQ()
	s.SetWRID(wrid)
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := s.RDMAWrite(dst.RKey, dst.Addr); err != nil {
		t.Fatalf("RDMAWrite: %v", err)
	}
	if err := s.SetSGE(src.LKey, src.Addr, n); err != nil {
		t.Fatalf("SetSGE: %v", err)
	}
	if err := s.Complete(); err != nil {
		t.Fatalf("Complete: %v", err)
	}
}

// MRPair registers a source filled with a pattern and a zeroed
// destination of n bytes each.
func MRPair(t *testing.T, pd *device.PD, n int) (src, dst *device.MR) {
	t.Helper()
	sb, db := Buffer(t, n), Buffer(t, n)
	for i := range sb {
		sb[i] = byte(i*7 + 3)
	}
	clear(db)
	src = Must[*device.MR](t, "RegMR src")(pd.RegMR(sb, mlx.IBV_ACCESS_LOCAL_WRITE))
	dst = Must[*device.MR](t, "RegMR dst")(pd.RegMR(db, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_WRITE))
	return src, dst
}

func testRCWrite(t *testing.T, c *device.Context) {
	p := RCPair(t, c, nil)
	src, dst := MRPair(t, p.PD, 4096)
	for i, n := range []uint32{1, 100, 4096} {
		clear(dst.Bytes())
		Write(t, p.A, uint64(40+i), src, dst, n)
		wc := PollOne(t, p.CQ)
		if wc.WRID != uint64(40+i) || wc.Status != cq.Success || wc.Opcode != mlx.IBV_WC_RDMA_WRITE {
			t.Fatalf("write of %d bytes: completion %+v (%v), want wr_id %d, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE", n, wc, wc.Status.Err(), 40+i)
		}
		if !bytes.Equal(dst.Bytes()[:n], src.Bytes()[:n]) {
			t.Fatalf("write of %d bytes: the destination does not hold the source's bytes", n)
		}
		if bytes.IndexFunc(dst.Bytes()[n:], func(r rune) bool { return r != 0 }) >= 0 {
			t.Fatalf("write of %d bytes: bytes past the length changed", n)
		}
		if o := p.A.SQ().Outstanding(); o != 0 {
			t.Fatalf("%d work requests outstanding after their completion", o)
		}
	}
}

func testCompChannel(t *testing.T, c *device.Context) {
	ch := Must[*device.CompChannel](t, "CreateCompChannel")(c.CreateCompChannel())
	p := RCPair(t, c, ch)
	src, dst := MRPair(t, p.PD, 64)
	Write(t, p.A, 9, src, dst, 64)
	ctx, cancel := contextWithTimeout(PollTimeout)
	defer cancel()
	if err := p.CQ.Wait(ctx); err != nil {
		t.Fatalf("Wait for the write's event: %v", err)
	}
	if wc := PollOne(t, p.CQ); wc.WRID != 9 || wc.Status != cq.Success {
		t.Fatalf("completion after the event: %+v", wc)
	}
	// Nothing more comes: Wait ends with its context.
	short, cancel2 := contextWithTimeout(20 * time.Millisecond)
	defer cancel2()
	if err := p.CQ.Wait(short); !errors.Is(err, errDeadline) {
		t.Fatalf("Wait with nothing posted: %v, want the context's deadline", err)
	}
	other := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 4}))
	if err := other.Wait(ctx); err == nil {
		t.Fatal("Wait on a CQ without a channel succeeded")
	}
}

// ConnectPair connects two RC QPs to each other (RESET to RTS), failing
// the test on an error.
func ConnectPair(t *testing.T, a, b *device.QP) {
	t.Helper()
	ea := Must[device.Endpoint](t, "Endpoint A")(a.Endpoint())
	eb := Must[device.Endpoint](t, "Endpoint B")(b.Endpoint())
	if err := a.Connect(eb); err != nil {
		t.Fatalf("Connect A: %v", err)
	}
	if err := b.Connect(ea); err != nil {
		t.Fatalf("Connect B: %v", err)
	}
}
