package mkey

import (
	"errors"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// TestPSVObjects: PSVs are objects of their own; one made with its mkey
// (Create) is destroyed with it and refused before; a BSF may name only
// PSVs of the mkey's PD when the mkey has none of its own.
func TestPSVObjects(t *testing.T) {
	tab := NewTable(nil)
	key, err := tab.Create(3, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	if err != nil {
		t.Fatal(err)
	}
	mem, wire, err := tab.PSVs(key)
	if err != nil || mem == 0 || wire == 0 {
		t.Fatalf("PSVs %#x %#x %v", mem, wire, err)
	}
	if err := tab.DestroyPSV(mem); !errors.Is(err, ErrInUse) {
		t.Fatalf("destroying the mkey's own PSV: %v, want ErrInUse", err)
	}
	if err := tab.Destroy(key); err != nil {
		t.Fatal(err)
	}
	if _, ok := tab.PSVPD(mem); ok {
		t.Fatal("the mkey's PSV outlived it")
	}
	free, _ := tab.CreatePSV(3)
	other, _ := tab.CreatePSV(4)
	bare, _ := tab.CreateMkey(3, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4, 0x5a)
	if bare&0xff != 0x5a || !tab.Is(bare) {
		t.Fatalf("key %#x: want key byte 0x5a", bare)
	}
	n := tab.mkeys[bare>>8]
	if err := tab.checkPSVs(n, &sigConf{mem: domainConf{psv: free}, wire: domainConf{psv: free}}); err != nil {
		t.Errorf("a PSV of the mkey's PD: %v", err)
	}
	if err := tab.checkPSVs(n, &sigConf{mem: domainConf{psv: other}}); err == nil {
		t.Error("a PSV of another PD was accepted")
	}
	n.sig = &sigConf{mem: domainConf{psv: free}}
	if err := tab.DestroyPSV(free); !errors.Is(err, ErrInUse) {
		t.Errorf("destroying a PSV a configuration names: %v, want ErrInUse", err)
	}
	if err := tab.DestroyPSV(other); err != nil || tab.DestroyPSV(other) == nil {
		t.Errorf("destroying a free PSV twice: %v", err)
	}
}
