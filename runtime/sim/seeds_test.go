package sim_test

import (
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// TestSeeds runs the seed man pages' examples (devicetest.RunSeeds) on
// the simulator: the same cases scripts/hwcheck.sh runs on hardware.
func TestSeeds(t *testing.T) {
	devicetest.RunSeeds(t, func(t *testing.T) *device.Context {
		c, err := device.Open("sim:seeds")
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}
