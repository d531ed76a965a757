package sim

import (
	"fmt"
	"strings"

	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// SetPSVs gives a signature mkey of a simulated device the PSV indexes its
// SET_PSV work requests name (sq.Mkey's MemPSV and WirePSV), which
// runtime/device does not fill in yet. It fails for a context that is not
// the simulator's.
func SetPSVs(c *device.Context, mk *device.Mkey) error {
	name, ok := strings.CutPrefix(c.Name(), Prefix)
	if !ok {
		return fmt.Errorf("sim: SetPSVs: %q is not a simulated device", c.Name())
	}
	if name == "" {
		name = DefaultName
	}
	d := Fabric().Device(name)
	if d == nil {
		return fmt.Errorf("sim: SetPSVs: no simulated device %q", name)
	}
	f := Fabric()
	f.Lock()
	mem, wire, err := d.Mkeys().PSVs(mk.LKey())
	f.Unlock()
	if err != nil {
		return fmt.Errorf("sim: SetPSVs: %w", err)
	}
	m := mk.Mkey()
	m.MemPSV, m.WirePSV = mem, wire
	return nil
}
