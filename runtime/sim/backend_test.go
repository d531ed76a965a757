package sim

import (
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// TestMkeyPSVs: a signature mkey of the backend reports the PSVs its
// SET_PSV work requests must name (none for an mkey without signature).
func TestMkeyPSVs(t *testing.T) {
	c, err := backend{}.Open("sim:psv")
	if err != nil {
		t.Fatal(err)
	}
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	defer pd.Close()
	mk, err := pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer mk.Close()
	p, ok := mk.(interface {
		PSVs() (uint32, uint32, error)
	})
	if !ok {
		t.Fatal("the backend's mkey has no PSVs method")
	}
	mem, wire, err := p.PSVs()
	if err != nil || mem == wire {
		t.Fatalf("PSVs %#x %#x, %v", mem, wire, err)
	}
	plain, _ := pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4)
	defer plain.Close()
	if _, _, err := plain.(interface {
		PSVs() (uint32, uint32, error)
	}).PSVs(); err == nil {
		t.Error("an mkey without signature reported PSVs")
	}
}

// TestResetClearsDBR: moving a QP to RESET clears its doorbell record, as
// libmlx5 does, so that the engine and the writers start over together.
func TestResetClearsDBR(t *testing.T) {
	c, _ := backend{}.Open("sim:reset")
	pd, _ := c.AllocPD()
	defer pd.Close()
	q, err := c.CreateCQ(device.CQConfig{CQEs: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	qp, err := pd.CreateQP(device.QPConfig{Kind: device.RC, MaxSendWR: 4, MaxSendSGE: 1, MaxRecvWR: 4, MaxRecvSGE: 1}, q, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer qp.Close()
	dbr := qp.Memory().SQ.DBR
	copy(dbr, []byte{0, 0, 0, 3, 0, 0, 0, 5})
	if err := qp.Modify(mlx.IBV_QPS_RESET, device.QPAttr{}); err != nil {
		t.Fatal(err)
	}
	if string(dbr[:8]) != string(make([]byte, 8)) {
		t.Fatalf("doorbell record % x after RESET", dbr[:8])
	}
}

// TestList: the backend lists the devices opened (here at least the one
// this test opens), by their full names.
func TestList(t *testing.T) {
	if _, err := (backend{}).Open("sim:listed"); err != nil {
		t.Fatal(err)
	}
	infos, err := backend{}.List()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, in := range infos {
		found = found || in.Name == "sim:listed"
		if in.Caps.MaxQPWR == 0 || !in.Caps.DC || !in.Caps.Signature {
			t.Errorf("%s: caps %+v", in.Name, in.Caps)
		}
	}
	if !found {
		t.Fatalf("sim:listed not in %+v", infos)
	}
}
