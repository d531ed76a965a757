//go:build cgo

package verbs_test

import (
	"errors"
	"fmt"

	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	_ "github.com/mlx5gen/mlx5gen/runtime/device/verbs"
)

// A function of mlx5dv.h the device API does not wrap, called on a device
// opened through it: Native hands out the struct ibv_context *, and the
// generated binding takes it through its handle constructor. Here
// mlx5dv_crypto_login_query_state(3).
func Example_native() {
	c, err := device.Open("") // the first mlx5 device
	if err != nil {
		fmt.Println("no device:", errors.Is(err, device.ErrNoDevice))
		return
	}
	defer c.Close()
	p, err := c.Native()
	if err != nil { // the simulator, say: errors.Is(err, device.ErrNoNative)
		fmt.Println(err)
		return
	}
	var state uint32
	if err := mv.CryptoLoginQueryState(mv.IBVContextFrom(p), &state); err != nil {
		fmt.Println("crypto login state:", err)
		return
	}
	fmt.Println("crypto login state:", state)
}
