package sim_test

import (
	"errors"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// TestCapsReported: every maximum the simulated device reports is
// non-zero where the device has the feature (a zero maximum reads as
// "unknown" or "none" to the API and to programs).
func TestCapsReported(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:caps"))
	defer c.Close()
	k := c.Caps()
	for _, m := range []struct {
		name string
		v    int
	}{
		{"MaxQPWR", k.MaxQPWR}, {"MaxSGE", k.MaxSGE}, {"MaxCQE", k.MaxCQE}, {"MaxSRQWR", k.MaxSRQWR},
		{"MaxSRQSGE", k.MaxSRQSGE}, {"MaxInlineData", k.MaxInlineData}, {"MaxMemcpy", int(k.MaxMemcpy)},
	} {
		if m.v <= 0 {
			t.Errorf("Caps.%s %d: the simulator has the feature, so a maximum above 0", m.name, m.v)
		}
	}
	if !k.DCIStreams || k.MaxLogNumConcurent <= 0 || k.MaxLogNumErrored <= 0 {
		t.Errorf("DCI streams %v, log concurrent %d, log errored %d: want streams with maxima above 0",
			k.DCIStreams, k.MaxLogNumConcurent, k.MaxLogNumErrored)
	}
	if !k.Signature || k.SigProt == 0 || k.SigT10BG == 0 || k.SigCRC == 0 || k.SigBlock == 0 {
		t.Errorf("signature %v with protections %v, T10 guards %v, CRCs %v, blocks %v: want each non-empty",
			k.Signature, k.SigProt, k.SigT10BG, k.SigCRC, k.SigBlock)
	}
	if !k.Crypto || !k.CryptoSingleBlock && !k.CryptoMultiBlock {
		t.Errorf("crypto %v, single block %v, multi block %v: want crypto with a mode", k.Crypto, k.CryptoSingleBlock, k.CryptoMultiBlock)
	}
	if p, err := c.Port(); err != nil || p.MaxMsgSize == 0 {
		t.Errorf("Port: max_msg_sz %d (%v), want above 0", p.MaxMsgSize, err)
	}
}

// TestCapsBounds: the device API and the simulator accept exactly up to
// each maximum the simulator reports, and refuse one more with EINVAL
// naming the field, for CQs, SRQs and QPs (RC and DCI).
func TestCapsBounds(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:capsbounds"))
	defer c.Close()
	k := c.Caps()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	bound(t, "CQConfig.CQEs", k.MaxCQE, func(n int) (func() error, error) {
		q, err := c.CreateCQ(device.CQConfig{CQEs: n})
		return closer(q, err)
	})
	cq := devicetest.Must[*device.CQ](t, "CreateCQ")(c.CreateCQ(device.CQConfig{CQEs: 16}))
	bound(t, "SRQConfig.MaxWR", k.MaxSRQWR, func(n int) (func() error, error) {
		return closer(pd.CreateSRQ(device.SRQConfig{MaxWR: n, MaxSGE: 1}))
	})
	bound(t, "SRQConfig.MaxSGE", k.MaxSRQSGE, func(n int) (func() error, error) {
		return closer(pd.CreateSRQ(device.SRQConfig{MaxWR: 1, MaxSGE: n}))
	})
	rc := func(set func(*device.QPConfig, int)) func(int) (func() error, error) {
		return func(n int) (func() error, error) {
			cfg := device.QPConfig{Kind: device.RC, SendCQ: cq, MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1,
				SendOps: mlx.IBV_QP_EX_WITH_SEND}
			set(&cfg, n)
			return closer(pd.CreateQP(cfg))
		}
	}
	bound(t, "QPConfig.MaxSendWR", k.MaxQPWR, rc(func(c *device.QPConfig, n int) { c.MaxSendWR = n }))
	bound(t, "QPConfig.MaxRecvWR", k.MaxQPWR, rc(func(c *device.QPConfig, n int) { c.MaxRecvWR = n }))
	bound(t, "QPConfig.MaxSendSGE", k.MaxSGE, rc(func(c *device.QPConfig, n int) { c.MaxSendSGE = n }))
	bound(t, "QPConfig.MaxRecvSGE", k.MaxSGE, rc(func(c *device.QPConfig, n int) { c.MaxRecvSGE = n }))
	bound(t, "QPConfig.MaxInlineData", k.MaxInlineData, rc(func(c *device.QPConfig, n int) { c.MaxInlineData = n }))
	dci := func(errored bool) func(int) (func() error, error) {
		return func(n int) (func() error, error) {
			cfg := device.QPConfig{Kind: device.DCI, SendCQ: cq, MaxSendWR: 1, MaxSendSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_SEND,
				LogNumConcurent: n}
			if errored {
				cfg.LogNumConcurent, cfg.LogNumErrored = k.MaxLogNumConcurent, n
			}
			return closer(pd.CreateQP(cfg))
		}
	}
	bound(t, "QPConfig.LogNumConcurent", k.MaxLogNumConcurent, dci(false))
	bound(t, "QPConfig.LogNumErrored", k.MaxLogNumErrored, dci(true))
	// Within the device's caps, more errored streams than streams is
	// refused too: the LogNumErrored > LogNumConcurent.
	for _, s := range []struct{ conc, errored int }{{1, 2}, {0, 1}} {
		_, err := closer(pd.CreateQP(device.QPConfig{Kind: device.DCI, SendCQ: cq, MaxSendWR: 1, MaxSendSGE: 1,
			SendOps: mlx.IBV_QP_EX_WITH_SEND, LogNumConcurent: s.conc, LogNumErrored: s.errored}))
		if !errors.Is(err, syscall.EINVAL) || !isField(err, "QPConfig.LogNumErrored") {
			t.Errorf("DCI streams %d, errored %d: %v, want EINVAL naming QPConfig.LogNumErrored", s.conc, s.errored, err)
		}
	}
}

// bound checks that create accepts max and refuses max+1 with EINVAL
// naming field; it closes what it made.
func bound(t *testing.T, field string, max int, create func(int) (func() error, error)) {
	t.Helper()
	closeFn, err := create(max)
	if err != nil {
		t.Errorf("%s at the reported maximum %d: %v", field, max, err)
	} else if err := closeFn(); err != nil {
		t.Errorf("%s %d: Close: %v", field, max, err)
	}
	closeFn, err = create(max + 1)
	if err == nil {
		closeFn()
		t.Errorf("%s %d, one past the reported maximum, was accepted", field, max+1)
		return
	}
	if !errors.Is(err, syscall.EINVAL) || !isField(err, field) {
		t.Errorf("%s %d, one past the reported maximum: %v, want EINVAL naming the field", field, max+1, err)
	}
}

// closer returns the Close of what a create call returned, if it made it.
func closer[T interface{ Close() error }](x T, err error) (func() error, error) {
	if err != nil {
		return nil, err
	}
	return x.Close, nil
}
