package sim_test

import (
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	_ "github.com/mlx5gen/mlx5gen/runtime/sim"
)

// TestConformance runs the device API's conformance suite on the
// simulator.
func TestConformance(t *testing.T) {
	devicetest.Run(t, func(t *testing.T) *device.Context {
		c, err := device.Open("sim:conformance")
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}
