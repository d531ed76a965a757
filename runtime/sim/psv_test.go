package sim

import (
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
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
