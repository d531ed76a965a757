// Package verbs is the hardware backend of runtime/device: an mlx5 device
// opened through libibverbs and libmlx5, with the cgo bindings of
// generated/mlx5verbs. Importing it registers the backend for plain
// device names ("mlx5_0", or "" for the first device):
//
//	import _ "github.com/mlx5gen/mlx5gen/runtime/device/verbs"
//
// The queues are created by libmlx5 (mlx5dv_create_cq, mlx5dv_create_qp)
// and mapped with mlx5dv_init_obj; runtime/device's writers and poller
// then work on that memory directly, with no call into C on the hot path.
// The doorbell register is the device's UAR page, written with
// runtime/mmio.
//
// What the public libmlx5 API keeps private, runtime/device makes itself
// with DEVX commands (mlx5dv_devx_obj_create, through this backend's
// DevxObjCreate): the mkeys and their PSVs, whose indexes a signature
// mkey's SET_PSV work requests carry, and the DEKs, whose object id a
// crypto work request carries. The commands are the ones libmlx5 sends
// for mlx5dv_create_mkey and mlx5dv_dek_create, so the device sees the
// same objects; the simulator executes the same bytes in CI. The context
// must be a DEVX one (Open asks for MLX5DV_CONTEXT_FLAGS_DEVX).
//
// Built without cgo (CGO_ENABLED=0) the package still registers itself,
// and Open fails saying it needs cgo.
package verbs

import "github.com/mlx5gen/mlx5gen/runtime/device"

// backend is the registered device.Backend.
type backend struct{}

func init() { device.Register("", backend{}) }
