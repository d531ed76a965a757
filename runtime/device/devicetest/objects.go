package devicetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

var errDeadline = context.DeadlineExceeded

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func testOpen(t *testing.T, c *device.Context) {
	if c.Name() == "" && c.Info().Name == "" {
		t.Error("the context has no name")
	}
	caps := c.Caps()
	if caps.MaxQPWR <= 0 || caps.MaxSGE <= 0 || caps.MaxCQE <= 0 {
		t.Errorf("Caps: MaxQPWR %d, MaxSGE %d, MaxCQE %d: a device offers some of each", caps.MaxQPWR, caps.MaxSGE, caps.MaxCQE)
	}
	p, err := c.Port()
	if err != nil {
		t.Fatalf("Port: %v", err)
	}
	if p.LID == 0 && p.GID == ([16]byte{}) {
		t.Errorf("Port %+v: neither a LID nor a GID to be reached at", p)
	}
}

func testPDAndMR(t *testing.T, c *device.Context) {
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	buf := Buffer(t, 8192)
	mr := Must[*device.MR](t, "RegMR")(pd.RegMR(buf, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_WRITE))
	if mr.Len() != len(buf) || &mr.Bytes()[0] != &buf[0] {
		t.Errorf("MR covers %d bytes at %#x, registered %d", mr.Len(), mr.Addr, len(buf))
	}
	mr2 := Must[*device.MR](t, "RegMR")(pd.RegMR(buf[:4096], mlx.IBV_ACCESS_LOCAL_WRITE))
	if mr2.LKey == mr.LKey {
		t.Errorf("two MRs share lkey %#x", mr.LKey)
	}
	if err := mr2.Close(); err != nil {
		t.Fatalf("MR Close: %v", err)
	}
	if err := mr2.Close(); err != nil {
		t.Fatalf("second MR Close: %v (Close is idempotent)", err)
	}
	if err := pd.Close(); err != nil {
		t.Fatalf("PD Close: %v", err)
	}
}

func testCQ(t *testing.T, c *device.Context) {
	q := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 100}))
	if q.CQEs() < 100 || q.CQESize() != 64 {
		t.Errorf("CQ of %d %d-byte CQEs, asked 100 of 64", q.CQEs(), q.CQESize())
	}
	q2 := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 2}))
	if q2.CQN() == q.CQN() {
		t.Errorf("two CQs share CQN %#x", q.CQN())
	}
	wc := make([]cq.WC, 4)
	if n, err := q.Poll(wc); n != 0 || err != nil {
		t.Fatalf("Poll of a new CQ: %d, %v", n, err)
	}
}

func testTransitions(t *testing.T, c *device.Context) {
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	q := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 8}))
	qp := Must[*device.QP](t, "CreateQP")(pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 4, MaxSendSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}))
	if s := qp.State(); s != mlx.IBV_QPS_RESET {
		t.Fatalf("a new QP is in %v", s)
	}
	if err := qp.Modify(mlx.IBV_QPS_RTS, device.QPAttr{}); err == nil {
		t.Fatal("RESET -> RTS was accepted")
	}
	if err := qp.Activate(); err == nil {
		t.Fatal("Activate of an RC QP was accepted")
	}
	if err := qp.Connect(device.Endpoint{}); err == nil || !strings.Contains(err.Error(), "Endpoint.QPN") {
		t.Fatalf("Connect to QPN 0: %v, want an error naming Endpoint.QPN", err)
	}
	self := Must[device.Endpoint](t, "Endpoint")(qp.Endpoint())
	if err := qp.Connect(self); err != nil {
		t.Fatalf("Connect to itself: %v", err)
	}
	if s := qp.State(); s != mlx.IBV_QPS_RTS {
		t.Fatalf("after Connect: %v", s)
	}
	if err := qp.Modify(mlx.IBV_QPS_RTR, device.QPAttr{}); err == nil {
		t.Fatal("RTS -> RTR was accepted")
	}
	for _, s := range []mlx.QPState{mlx.IBV_QPS_ERR, mlx.IBV_QPS_RESET} {
		if err := qp.Modify(s, device.QPAttr{}); err != nil {
			t.Fatalf("-> %v: %v", s, err)
		}
	}
	if err := qp.Connect(self); err != nil {
		t.Fatalf("Connect after a reset: %v", err)
	}
	if !c.Caps().DC {
		t.Log("the device has no DC transport: DCI and DCT transitions not exercised")
		return
	}
	srq := Must[*device.SRQ](t, "CreateSRQ")(pd.CreateSRQ(device.SRQConfig{MaxWR: 4, MaxSGE: 1}))
	dct := Must[*device.QP](t, "CreateQP DCT")(pd.CreateQP(device.QPConfig{Kind: device.DCT, SendCQ: q, DCAccessKey: 0x1234, SRQ: srq}))
	if err := dct.Activate(); err != nil {
		t.Fatalf("Activate DCT: %v", err)
	}
	if s := dct.State(); s != mlx.IBV_QPS_RTR {
		t.Fatalf("an activated DCT is in %v, want RTR", s)
	}
	if err := dct.Modify(mlx.IBV_QPS_RTS, device.QPAttr{}); err == nil {
		t.Fatal("DCT -> RTS was accepted")
	}
	dci := Must[*device.QP](t, "CreateQP DCI")(pd.CreateQP(device.QPConfig{Kind: device.DCI, SendCQ: q, MaxSendWR: 4, MaxSendSGE: 1,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE}))
	if err := dci.Activate(); err != nil || dci.State() != mlx.IBV_QPS_RTS {
		t.Fatalf("Activate DCI: %v, state %v", err, dci.State())
	}
}

func testCloseOrder(t *testing.T, c *device.Context) {
	p := RCPair(t, c, nil)
	src, dst := MRPair(t, p.PD, 64)
	// Closing the CQ closes the QPs completing to it first.
	if err := p.CQ.Close(); err != nil {
		t.Fatalf("CQ Close: %v", err)
	}
	if err := p.A.Modify(mlx.IBV_QPS_ERR, device.QPAttr{}); !errors.Is(err, device.ErrClosed) {
		t.Fatalf("Modify of a QP whose CQ is closed: %v, want ErrClosed", err)
	}
	// Closing the PD closes its MRs.
	if err := p.PD.Close(); err != nil {
		t.Fatalf("PD Close: %v", err)
	}
	for _, mr := range []*device.MR{src, dst} {
		if err := mr.Close(); err != nil {
			t.Fatalf("Close of an MR its PD closed: %v", err)
		}
	}
	if _, err := p.PD.RegMR(Buffer(t, 64), 0); !errors.Is(err, device.ErrClosed) {
		t.Fatalf("RegMR on a closed PD: %v, want ErrClosed", err)
	}
	// A fresh set closed by the context alone.
	p2 := RCPair(t, c, nil)
	if err := c.Close(); err != nil {
		t.Fatalf("Context Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Context Close: %v", err)
	}
	for _, q := range []*device.QP{p2.A, p2.B} {
		if _, err := q.Endpoint(); !errors.Is(err, device.ErrClosed) {
			t.Fatalf("Endpoint of a QP of a closed context: %v, want ErrClosed", err)
		}
		if err := q.Close(); err != nil {
			t.Fatalf("QP Close after the context's: %v", err)
		}
	}
}

func testUseAfterClose(t *testing.T, c *device.Context) {
	p := RCPair(t, c, nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	wc := make([]cq.WC, 1)
	if _, err := p.CQ.Poll(wc); !errors.Is(err, device.ErrClosed) {
		t.Errorf("Poll: %v", err)
	}
	if err := p.CQ.Wait(context.Background()); !errors.Is(err, device.ErrClosed) {
		t.Errorf("Wait: %v", err)
	}
	if err := p.A.Connect(device.Endpoint{QPN: 1}); !errors.Is(err, device.ErrClosed) {
		t.Errorf("Connect: %v", err)
	}
	if _, err := c.AllocPD(); !errors.Is(err, device.ErrClosed) {
		t.Errorf("AllocPD: %v", err)
	}
	if _, err := c.CreateCQ(device.CQConfig{CQEs: 4}); !errors.Is(err, device.ErrClosed) {
		t.Errorf("CreateCQ: %v", err)
	}
	if _, err := c.Port(); !errors.Is(err, device.ErrClosed) {
		t.Errorf("Port: %v", err)
	}
	// The writers and the poller handed out refuse work: their memory is
	// gone.
	if err := p.A.SQ().Start(); !errors.Is(err, sq.ErrClosed) {
		t.Errorf("SQ Start: %v, want sq.ErrClosed", err)
	}
	if r := p.A.RQ(); r == nil {
		t.Error("an RC QP created with MaxRecvWR 8 has no receive queue writer")
	} else if err := r.Post(1, nil); !errors.Is(err, rq.ErrClosed) {
		t.Errorf("RQ Post: %v, want rq.ErrClosed", err)
	}
	if _, err := p.CQ.Poller().Poll(wc); !errors.Is(err, cq.ErrClosed) {
		t.Errorf("Poller Poll: %v, want cq.ErrClosed", err)
	}
	if _, err := p.PD.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4); !errors.Is(err, device.ErrClosed) {
		t.Errorf("CreateMkey: %v", err)
	}
}

// wantField checks that err is an error naming field.
func wantField(t *testing.T, what string, err error, field string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), field) {
		t.Errorf("%s: %v, want an error naming %s", what, err, field)
	}
}

func testBadArguments(t *testing.T, c *device.Context) {
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	q := Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 4}))
	_, err := pd.RegMR(nil, 0)
	wantField(t, "RegMR(nil)", err, "buf")
	_, err = c.CreateCQ(device.CQConfig{})
	wantField(t, "CreateCQ of 0 CQEs", err, "CQConfig.CQEs")
	_, err = c.CreateCQ(device.CQConfig{CQEs: 4, CQESize: 96})
	wantField(t, "CreateCQ of 96-byte CQEs", err, "CQConfig.CQESize")
	_, err = pd.CreateQP(device.QPConfig{Kind: device.RC, MaxSendWR: 4})
	wantField(t, "CreateQP without a CQ", err, "QPConfig.SendCQ")
	_, err = pd.CreateQP(device.QPConfig{SendCQ: q, MaxSendWR: 4})
	wantField(t, "CreateQP of no kind", err, "QPConfig.Kind")
	_, err = pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: q})
	wantField(t, "CreateQP of 0 send WRs", err, "QPConfig.MaxSendWR")
	_, err = pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 4, MaxInlineData: -1})
	wantField(t, "CreateQP of negative inline", err, "QPConfig.MaxInlineData")
	_, err = pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 0)
	wantField(t, "CreateMkey of 0 entries", err, "maxEntries")
	_, err = pd.CreateDEK(device.DEKConfig{KeySize: mlx.MLX5DV_CRYPTO_KEY_SIZE_128, Key: make([]byte, 16)})
	wantField(t, "CreateDEK of a short key", err, "DEKConfig.Key")
	_, err = c.RegUmem(nil, 0)
	wantField(t, "RegUmem(nil)", err, "buf")
	_, err = c.AsyncEvent(nil)
	wantField(t, "AsyncEvent(nil)", err, "ctx")
}

func testMkey(t *testing.T, c *device.Context) {
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	mk := Must[*device.Mkey](t, "CreateMkey")(pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4))
	if mk.Mkey() == nil || mk.Mkey().LKey != mk.LKey() {
		t.Fatalf("the writer's mkey does not carry lkey %#x", mk.LKey())
	}
	if err := pd.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mk.Close(); err != nil {
		t.Fatalf("Close of an mkey its PD closed: %v", err)
	}
}
