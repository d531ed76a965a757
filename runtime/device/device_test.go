package device_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

func openFake(t *testing.T) *device.Context {
	c, err := device.Open("fake:" + t.Name())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestConformanceFake runs the conformance suite on the API over the
// test fixture backend: it proves the suite's checks pass on a backend
// that does what the API asks (the simulator and hardware run it from
// their own packages).
func TestConformanceFake(t *testing.T) { devicetest.Run(t, openFake) }

func TestOpenErrors(t *testing.T) {
	// The examples of this package import the simulator: take it out.
	device.WithoutBackend("sim:", func() {
		_, err := device.Open("sim:a")
		if !errors.Is(err, device.ErrNoBackend) || !strings.Contains(err.Error(), device.SimImport) {
			t.Errorf("Open(sim:a) without the simulator: %v, want ErrNoBackend naming %s", err, device.SimImport)
		}
	})
	_, err := device.Open("mlx5_0")
	if !errors.Is(err, device.ErrNoBackend) || !strings.Contains(err.Error(), device.VerbsImport) {
		t.Errorf("Open(mlx5_0) without the verbs backend: %v, want ErrNoBackend naming %s", err, device.VerbsImport)
	}
	_, err = device.Open("nosuch:x")
	if !errors.Is(err, device.ErrNoBackend) || !strings.Contains(err.Error(), `"fake:"`) {
		t.Errorf("Open(nosuch:x): %v, want ErrNoBackend listing the registered prefixes", err)
	}
	_, err = device.Open("fake:none")
	if !errors.Is(err, device.ErrNoDevice) || !strings.Contains(err.Error(), "fake:none") {
		t.Errorf("Open(fake:none): %v, want ErrNoDevice naming the device", err)
	}
	if _, err := device.List("fake"); err == nil {
		t.Error("List of a prefix without ':' succeeded")
	}
	if infos, err := device.List("fake:"); err != nil || len(infos) != 1 {
		t.Errorf("List(fake:): %v, %v", infos, err)
	}
}

func TestRegisterMistakes(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		b      device.Backend
	}{{"x:", nil}, {"fake:", fake{}}, {"nocolon", fake{}}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q, %v) did not panic", tc.prefix, tc.b)
				}
			}()
			device.Register(tc.prefix, tc.b)
		}()
	}
}

// TestCloseReverseOrder: the context closes what it holds newest first,
// dependents before what they use, each once.
func TestCloseReverseOrder(t *testing.T) {
	c := openFake(t)
	fc := lastFake()
	pd, _ := c.AllocPD()
	q, _ := c.CreateCQ(device.CQConfig{CQEs: 4})
	mr, err := pd.RegMR(devicetest.Buffer(t, 64), 0)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := pd.CreateQP(device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 2, MaxSendSGE: 1, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE})
	if err != nil {
		t.Fatal(err)
	}
	if err := mr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"MR 0x" + hex(mr.LKey), "QP 0x" + hex(qp.QPN()), "CQ 0x" + hex(q.CQN()), "PD", "context"}
	if !slices.Equal(fc.log, want) {
		t.Errorf("closed %q, want %q", fc.log, want)
	}
}

func hex(v uint32) string { return strconv.FormatUint(uint64(v), 16) }

func lastFake() *fakeCtx {
	fakes.Lock()
	defer fakes.Unlock()
	return fakes.last
}

// TestQPConfigChecks: configurations the device's capabilities refuse
// never reach the backend.
func TestQPConfigChecks(t *testing.T) {
	c := openFake(t)
	defer c.Close()
	pd, _ := c.AllocPD()
	q, _ := c.CreateCQ(device.CQConfig{CQEs: 4})
	other := openFake(t)
	defer other.Close()
	oq, _ := other.CreateCQ(device.CQConfig{CQEs: 4})
	opd, _ := other.AllocPD()
	osrq, err := opd.CreateSRQ(device.SRQConfig{MaxWR: 4, MaxSGE: 1})
	if err != nil {
		t.Fatal(err)
	}
	srq, _ := pd.CreateSRQ(device.SRQConfig{MaxWR: 4, MaxSGE: 1})
	for _, tc := range []struct {
		cfg   device.QPConfig
		field string
	}{
		{device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 1 << 20}, "MaxSendWR"},
		{device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 1, MaxSendSGE: 99}, "MaxSendSGE"},
		{device.QPConfig{Kind: device.RC, SendCQ: oq, MaxSendWR: 1}, "another context"},
		{device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 1, LogNumConcurent: 1}, "LogNumConcurent"},
		{device.QPConfig{Kind: device.DCI, SendCQ: q, MaxSendWR: 1, LogNumConcurent: 1}, "DCI streams"},
		{device.QPConfig{Kind: device.DCT, SendCQ: q, SendOps: mlx.IBV_QP_EX_WITH_SEND}, "SendOps"},
		{device.QPConfig{Kind: device.DCT, SendCQ: q}, "QPConfig.SRQ: nil"},
		{device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 1, SRQ: osrq}, "QPConfig.SRQ: belongs to another context"},
		{device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 1, SRQ: &device.SRQ{}}, "QPConfig.SRQ: belongs to another context"},
		{device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 1, MaxRecvSGE: 1, SRQ: srq}, "MaxRecvSGE"},
		{device.QPConfig{Kind: device.DCI, SendCQ: q, MaxSendWR: 1, SRQ: srq}, "a DCI has no receive side"},
		{device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 1, DCAccessKey: 7}, "QPConfig.DCAccessKey"},
		{device.QPConfig{Kind: device.DCI, SendCQ: q, MaxSendWR: 1, LogNumErrored: -1}, "QPConfig.LogNumErrored -1"},
		{device.QPConfig{Kind: device.DCI, SendCQ: q, MaxSendWR: 1, LogNumConcurent: -1}, "QPConfig.LogNumConcurent -1"},
		{device.QPConfig{Kind: device.DCI, SendCQ: q, MaxSendWR: 1, LogNumErrored: 100}, "QPConfig.LogNumErrored 100"},
		{device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 1, MaxSendSGE: 1000}, "QPConfig.MaxSendSGE 1000: 0 to Caps.MaxSGE 16"},
		{device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 1, MaxRecvSGE: 1000}, "QPConfig.MaxRecvSGE 1000: 0 to Caps.MaxSGE 16"},
		{device.QPConfig{Kind: device.RC, SendCQ: q, MaxSendWR: 1, CreateFlags: 0x100}, "QPConfig.CreateFlags: mlx5dv_create_qp"},
	} {
		_, err := pd.CreateQP(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.field) || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("CreateQP(%+v): %v, want an error naming %s, wrapping EINVAL", tc.cfg, err, tc.field)
		}
		if err != nil && strings.Count(err.Error(), "MaxSendSGE")+strings.Count(err.Error(), "MaxRecvSGE") > 1 {
			t.Errorf("CreateQP(%+v): %v names more than one SGE field", tc.cfg, err)
		}
	}
	if len(lastFake().qps) != 0 {
		t.Error("a refused configuration reached the backend")
	}
}

// TestPollNoAlloc: CQ.Poll (the backend's Progress, then the poller)
// allocates nothing, with and without completions.
func TestPollNoAlloc(t *testing.T) {
	c := openFake(t)
	defer c.Close()
	p := devicetest.RCPair(t, c, nil)
	src, dst := devicetest.MRPair(t, p.PD, 64)
	wc := make([]cq.WC, 4)
	if n := testing.AllocsPerRun(50, func() { p.CQ.Poll(wc) }); n != 0 {
		t.Errorf("Poll of an empty CQ: %v allocations", n)
	}
	s := p.A.SQ()
	n := testing.AllocsPerRun(50, func() {
		s.SetWRID(1)
		s.SetWRFlags(mlx.IBV_SEND_SIGNALED)
		s.Start()
		s.RDMAWrite(dst.RKey, dst.Addr)
		s.SetSGE(src.LKey, src.Addr, 64)
		s.Complete()
		if k, err := p.CQ.Poll(wc); k != 1 || err != nil {
			panic(fmt.Sprint(k, err))
		}
	})
	if n != 0 {
		t.Errorf("post and poll: %v allocations", n)
	}
}
