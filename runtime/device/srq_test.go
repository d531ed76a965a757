package device_test

import (
	"errors"
	"strings"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// TestSRQConfigChecks: a refused SRQ configuration names its field and
// never reaches the backend, and the device's limits bound it.
func TestSRQConfigChecks(t *testing.T) {
	c := openFake(t)
	defer c.Close()
	pd, _ := c.AllocPD()
	for _, tc := range []struct {
		cfg   device.SRQConfig
		field string
	}{
		{device.SRQConfig{MaxWR: 0, MaxSGE: 1}, "SRQConfig.MaxWR 0"},
		{device.SRQConfig{MaxWR: -1, MaxSGE: 1}, "SRQConfig.MaxWR -1"},
		{device.SRQConfig{MaxWR: 4097, MaxSGE: 1}, "Caps.MaxSRQWR 4096"},
		{device.SRQConfig{MaxWR: 4, MaxSGE: 0}, "SRQConfig.MaxSGE 0"},
		{device.SRQConfig{MaxWR: 4, MaxSGE: 9}, "Caps.MaxSRQSGE 8"},
	} {
		if _, err := pd.CreateSRQ(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("CreateSRQ(%+v): %v, want an error naming %s", tc.cfg, err, tc.field)
		}
	}
	if n := len(lastFake().log); n != 0 {
		t.Errorf("a refused configuration reached the backend: %v", lastFake().log)
	}
	pd.Close()
	if _, err := pd.CreateSRQ(device.SRQConfig{MaxWR: 4, MaxSGE: 1}); !errors.Is(err, device.ErrClosed) {
		t.Errorf("CreateSRQ on a closed PD: %v", err)
	}
}

// TestSRQCloseOrder: closing the PD closes the QP receiving through the
// SRQ, then the SRQ, then the PD; the SRQ's writer refuses posts after.
func TestSRQCloseOrder(t *testing.T) {
	c := openFake(t)
	defer c.Close()
	pd, _ := c.AllocPD()
	q, _ := c.CreateCQ(device.CQConfig{CQEs: 4})
	s, err := pd.CreateSRQ(device.SRQConfig{MaxWR: 4, MaxSGE: 1})
	if err != nil {
		t.Fatal(err)
	}
	qp, err := pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 1, SRQ: s})
	if err != nil {
		t.Fatal(err)
	}
	if err := pd.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"QP 0x" + hex(qp.QPN()), "SRQ 0x" + hex(s.SRQN()), "PD"}
	if got := lastFake().log; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("close order %v, want %v", got, want)
	}
	if err := s.RQ().Post(1, nil); !errors.Is(err, rq.ErrClosed) {
		t.Errorf("post after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestSRQRegistration: with cqe_version 0 the receive CQ finds the SRQ by
// its number while a QP uses it there, and no longer once the last one is
// closed: a CQE naming the SRQ is then unknown.
func TestSRQRegistration(t *testing.T) {
	c := openFake(t)
	defer c.Close()
	p := devicetest.RCPairSRQ(t, c, 4)
	src, dst := devicetest.MRPair(t, p.PD, 64)
	two, err := p.PD.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: p.CQ, MaxSendWR: 1, SRQ: p.SRQ})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := p.SRQ.RQ().Post(uint64(i), []rq.SGE{{Addr: dst.Addr, Length: 64, LKey: dst.LKey}}); err != nil {
			t.Fatal(err)
		}
	}
	two.Close() // B still uses the SRQ on the CQ
	devicetest.Send(t, p.A, 1, src, 8)
	for range 2 {
		if wc := devicetest.PollOne(t, p.CQ); wc.Status != cq.Success {
			t.Fatalf("with B open: %+v", wc)
		}
	}
	p.B.Close()
	fc := lastFake()
	fc.mu.Lock()
	for _, q := range fc.cqs {
		q.writeResp(mlx.MLX5_CQE_RESP_SEND, 0, 0, 0x999, 1, p.SRQ.SRQN(), 8)
	}
	fc.mu.Unlock()
	var ue *cq.UnknownError
	if _, err := p.CQ.Poll(make([]cq.WC, 1)); !errors.As(err, &ue) || ue.What != "SRQ" {
		t.Fatalf("a CQE of the SRQ after its last QP closed: %v, want an unknown SRQ", err)
	}
}
