package devicetest

import (
	"bytes"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// connectTo walks q from RESET to RTS towards remote with the send PSN
// psn (Connect picks its own), short retries so that a request nobody
// answers fails fast on hardware (timeout 12: about 16 ms, one retry).
func connectTo(t *testing.T, c *device.Context, q *device.QP, remote device.Endpoint, psn uint32) {
	t.Helper()
	port := Must[device.Port](t, "Port")(c.Port())
	a := device.QPAttr{Access: device.DefaultAccess, MTU: port.MTU, Remote: remote, SQPSN: psn,
		MinRNR: 12, Timeout: 12, Retry: 1, RNRRetry: 7, RdAtomic: 1}
	if a.MTU == 0 {
		a.MTU = mlx.IBV_MTU_1024
	}
	for _, s := range []mlx.QPState{mlx.IBV_QPS_INIT, mlx.IBV_QPS_RTR, mlx.IBV_QPS_RTS} {
		if err := q.Modify(s, a); err != nil {
			t.Fatalf("QP %#x to %v: %v", q.QPN(), s, err)
		}
	}
}

// testWrongPeer: A and B are connected to each other; C is connected to
// B, but B's context names A. C's RDMA write to B is dropped: it ends
// with IBV_WC_RETRY_EXC_ERR, B's memory is untouched, B sees nothing and
// stays in RTS, and A's write to B still lands.
//
// On hardware the three QPs share the port, so B's address check passes
// C's packets; C's PSNs are made far from the ones B expects (A's), so
// B's PSN check refuses them, and what B answers goes to A, never to C:
// C's retries run out either way.
func testWrongPeer(t *testing.T, c *device.Context) {
	p := RCPair(t, c, nil)
	src, dst := MRPair(t, p.PD, 64)
	other := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	cfg := device.QPConfig{Kind: device.RC, SendCQ: other, MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_READ | mlx.IBV_QP_EX_WITH_SEND}
	intruder := Must[*device.QP](t, "CreateQP C")(p.PD.CreateQP(cfg))
	ea := Must[device.Endpoint](t, "Endpoint A")(p.A.Endpoint())
	eb := Must[device.Endpoint](t, "Endpoint B")(p.B.Endpoint())
	connectTo(t, c, intruder, eb, (ea.PSN+0x800000)&0xffffff)

	Write(t, intruder, 7, src, dst, 64)
	wc := PollOne(t, other)
	if wc.WRID != 7 || wc.Status != cq.RetryExcErr {
		t.Fatalf("C's write to B (connected to A): %+v (%v), want wr_id 7, IBV_WC_RETRY_EXC_ERR", wc, wc.Status.Err())
	}
	if bytes.IndexFunc(dst.Bytes(), func(r rune) bool { return r != 0 }) >= 0 {
		t.Fatal("C's write to B landed although B is connected to A")
	}
	var none [1]cq.WC
	if n, err := p.CQ.Poll(none[:]); err != nil || n != 0 {
		t.Fatalf("the pair's CQ after C's write: %d completions (%+v), %v; want none", n, none[0], err)
	}
	if s := p.B.State(); s != mlx.IBV_QPS_RTS {
		t.Fatalf("B is in %v after C's write, want IBV_QPS_RTS", s)
	}
	Write(t, p.A, 8, src, dst, 64)
	if wc := PollOne(t, p.CQ); wc.WRID != 8 || wc.Status != cq.Success {
		t.Fatalf("A's write to B after C's: %+v (%v)", wc, wc.Status.Err())
	}
	if !bytes.Equal(dst.Bytes(), src.Bytes()) {
		t.Fatal("A's write to B did not land")
	}
}
