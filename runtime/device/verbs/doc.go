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
// What the public libmlx5 API does not expose, this backend does not
// guess: a DEK's DEVX object id (which a crypto work request carries) is
// private to libmlx5, so CreateDEK fails saying so (ErrDEKObjectID); so
// are a signature mkey's PSV indexes (which its SET_PSV work requests
// carry), so CreateMkey with BLOCK_SIGNATURE fails (ErrSigMkeyPSV).
//
// Built without cgo (CGO_ENABLED=0) the package still registers itself,
// and Open fails saying it needs cgo.
package verbs

import "github.com/mlx5gen/mlx5gen/runtime/device"

// backend is the registered device.Backend.
type backend struct{}

func init() { device.Register("", backend{}) }
