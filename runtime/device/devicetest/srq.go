package devicetest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// SRQPair is an RC pair whose B receives through an SRQ.
type SRQPair struct {
	Pair
	SRQ *device.SRQ
}

// RCPairSRQ creates and connects an RC pair on one CQ; B receives through
// a new SRQ of maxWR work requests of one SGE.
func RCPairSRQ(t *testing.T, c *device.Context, maxWR int) SRQPair {
	t.Helper()
	p := SRQPair{Pair: Pair{PD: Must[*device.PD](t, "AllocPD")(c.AllocPD())}}
	p.CQ = Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 32}))
	p.SRQ = Must[*device.SRQ](t, "CreateSRQ")(p.PD.CreateSRQ(device.SRQConfig{MaxWR: maxWR, MaxSGE: 1}))
	cfg := device.QPConfig{Kind: device.RC, SendCQ: p.CQ, MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_SEND}
	p.A = Must[*device.QP](t, "CreateQP A")(p.PD.CreateQP(cfg))
	cfg.MaxRecvWR, cfg.MaxRecvSGE, cfg.SRQ = 0, 0, p.SRQ
	p.B = Must[*device.QP](t, "CreateQP B with the SRQ")(p.PD.CreateQP(cfg))
	if p.B.RQ() != nil {
		t.Fatal("a QP receiving through an SRQ has a receive queue writer of its own")
	}
	ConnectPair(t, p.A, p.B)
	return p
}

// Send posts a signaled SEND of n bytes of src on q.
func Send(t *testing.T, q *device.QP, wrid uint64, src *device.MR, n uint32) {
	t.Helper()
	s := q.SQ()
	s.SetWRID(wrid)
	s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := s.Send(); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if err := s.SetSGE(src.LKey, src.Addr, n); err != nil {
		t.Fatalf("SetSGE: %v", err)
	}
	if err := s.Complete(); err != nil {
		t.Fatalf("Complete: %v", err)
	}
}

// testSRQPost: an SRQ takes MaxWR work requests at least, refuses one
// past its free list with post_recv.srq_room and too many SGEs with
// post_recv.srq_sge_count.
func testSRQPost(t *testing.T, c *device.Context) {
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	s := Must[*device.SRQ](t, "CreateSRQ")(pd.CreateSRQ(device.SRQConfig{MaxWR: 5, MaxSGE: 1}))
	if s.SRQN() == 0 || s.MaxWR() < 5 || s.RQ().MaxGS() < 1 {
		t.Fatalf("SRQ %#x: MaxWR %d, MaxGS %d; want a number, 5 and 1 at least", s.SRQN(), s.MaxWR(), s.RQ().MaxGS())
	}
	mr := Must[*device.MR](t, "RegMR")(pd.RegMR(Buffer(t, 4096), mlx.IBV_ACCESS_LOCAL_WRITE))
	sge := []rq.SGE{{Addr: mr.Addr, Length: 64, LKey: mr.LKey}}
	for i := range s.MaxWR() {
		if err := s.RQ().Post(uint64(i), sge); err != nil {
			t.Fatalf("post %d of %d: %v", i, s.MaxWR(), err)
		}
	}
	var re *mlx.RuleError
	if err := s.RQ().Post(99, sge); !errors.As(err, &re) || !strings.Contains(err.Error(), "srq_room") {
		t.Fatalf("a post past MaxWR: %v, want the rule post_recv.srq_room", err)
	}
	many := make([]rq.SGE, s.RQ().MaxGS()+1)
	if err := s.RQ().Post(98, many); !errors.As(err, &re) || !strings.Contains(err.Error(), "srq_sge_count") {
		t.Fatalf("a post of %d SGEs: %v, want the rule post_recv.srq_sge_count", len(many), err)
	}
	for _, bad := range []device.SRQConfig{{MaxWR: 0, MaxSGE: 1}, {MaxWR: 4, MaxSGE: 0}, {MaxWR: 1 << 20, MaxSGE: 1}} {
		_, err := pd.CreateSRQ(bad)
		wantField(t, "CreateSRQ", err, "SRQConfig.Max")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.RQ().Post(1, sge); !errors.Is(err, rq.ErrClosed) {
		t.Fatalf("a post to a closed SRQ: %v, want rq.ErrClosed", err)
	}
}

// testSRQSend: SENDs from A land in the buffers posted to B's SRQ, in
// the free list's order, with responder completions carrying their
// wr_ids; the WQEs go back to the free list and are used again.
func testSRQSend(t *testing.T, c *device.Context) {
	p := RCPairSRQ(t, c, 4)
	src := Must[*device.MR](t, "RegMR src")(p.PD.RegMR(Buffer(t, 4096), mlx.IBV_ACCESS_LOCAL_WRITE))
	dst := Must[*device.MR](t, "RegMR dst")(p.PD.RegMR(Buffer(t, 4096), mlx.IBV_ACCESS_LOCAL_WRITE))
	for i := range src.Bytes() {
		src.Bytes()[i] = byte(i*5 + 1)
	}
	const slot = 256
	for round := range 3 { // past the ring's WQEs: freed WQEs are reused
		for i := range 4 {
			sge := []rq.SGE{{Addr: dst.Addr + uint64(i*slot), Length: slot, LKey: dst.LKey}}
			if err := p.SRQ.RQ().Post(uint64(100*round+i), sge); err != nil {
				t.Fatalf("round %d: post %d: %v", round, i, err)
			}
		}
		for i := range 4 {
			n := uint32(10 + 30*i + round)
			clear(dst.Bytes()[i*slot : (i+1)*slot])
			Send(t, p.A, uint64(7000+i), src, n)
			got := map[bool]cq.WC{}
			for range 2 {
				wc := PollOne(t, p.CQ)
				got[wc.QPNum == p.B.QPN()] = wc
			}
			s, r := got[false], got[true]
			if s.WRID != uint64(7000+i) || s.Status != cq.Success || s.Opcode != mlx.IBV_WC_SEND {
				t.Fatalf("round %d send %d: requester completion %+v (%v)", round, i, s, s.Status.Err())
			}
			if r.WRID != uint64(100*round+i) || r.Status != cq.Success || r.Opcode != mlx.IBV_WC_RECV || r.ByteLen != n {
				t.Fatalf("round %d send %d: responder completion %+v (%v), want wr_id %d, IBV_WC_RECV, %d bytes",
					round, i, r, r.Status.Err(), 100*round+i, n)
			}
			if !bytes.Equal(dst.Bytes()[i*slot:][:n], src.Bytes()[:n]) {
				t.Fatalf("round %d send %d: the SRQ's buffer does not hold the message", round, i)
			}
		}
	}
}

// testSRQQPs: a DCT needs an SRQ (and gets one when DC is offered), an
// RC QP with an SRQ has no receive queue of its own, and closing the SRQ
// closes those QPs first.
func testSRQQPs(t *testing.T, c *device.Context) {
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	q := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 8}))
	s := Must[*device.SRQ](t, "CreateSRQ")(pd.CreateSRQ(device.SRQConfig{MaxWR: 8, MaxSGE: 1}))
	rc := device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 4, MaxSendSGE: 1, MaxRecvWR: 4, SRQ: s}
	_, err := pd.CreateQP(rc)
	wantField(t, "CreateQP", err, "QPConfig.MaxRecvWR")
	rc.MaxRecvWR = 0
	qp := Must[*device.QP](t, "CreateQP RC with SRQ")(pd.CreateQP(rc))
	closed := []*device.QP{qp}
	if c.Caps().DC {
		_, err = pd.CreateQP(device.QPConfig{Kind: device.DCT, SendCQ: q, DCAccessKey: 7})
		wantField(t, "CreateQP", err, "QPConfig.SRQ")
		dct := Must[*device.QP](t, "CreateQP DCT")(pd.CreateQP(device.QPConfig{Kind: device.DCT, SendCQ: q, DCAccessKey: 7, SRQ: s}))
		if err := dct.Activate(); err != nil {
			t.Fatalf("Activate the DCT: %v", err)
		}
		if st := dct.State(); st != mlx.IBV_QPS_RTR {
			t.Fatalf("DCT in %v after Activate, want IBV_QPS_RTR", st)
		}
		_, err = pd.CreateQP(device.QPConfig{Kind: device.DCI, SendCQ: q, MaxSendWR: 4, MaxSendSGE: 1, SRQ: s})
		wantField(t, "CreateQP", err, "QPConfig.SRQ")
		closed = append(closed, dct)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close the SRQ: %v", err)
	}
	for _, qp := range closed {
		if _, err := qp.Endpoint(); !errors.Is(err, device.ErrClosed) {
			t.Fatalf("%v QP after its SRQ closed: %v, want ErrClosed", qp.Kind(), err)
		}
	}
	if _, err := pd.CreateQP(rc); !errors.Is(err, device.ErrClosed) {
		t.Fatalf("CreateQP with a closed SRQ: %v, want ErrClosed", err)
	}
}
