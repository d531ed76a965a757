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
// guess: a DEK's DEVX object id (which a crypto work request carries)
// and a signature mkey's PSV indexes (which its SET_PSV work requests
// carry) are private to libmlx5. runtime/device creates those objects
// itself, with the DEVX commands libmlx5 would send (CREATE_PSV,
// CREATE_MKEY, CREATE_GENERAL_OBJECT of a DEK), through this backend's
// mlx5dv_devx_obj_create, after reading the device's capabilities with
// QUERY_HCA_CAP; so a device opened without DEVX (the kernel refused
// MLX5DV_CONTEXT_FLAGS_DEVX) has no signature or crypto mkeys and no
// DEKs here (device.ErrNoDevx). Plain indirect mkeys are libmlx5's
// (mlx5dv_create_mkey).
//
// Built without cgo (CGO_ENABLED=0) the package still registers itself,
// and Open fails saying it needs cgo.
package verbs

import "github.com/mlx5gen/mlx5gen/runtime/device"

// backend is the registered device.Backend.
type backend struct{}

func init() { device.Register("", backend{}) }
