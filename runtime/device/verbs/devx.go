//go:build cgo

package verbs

import (
	"fmt"
	"runtime"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// The DEVX calls: variables so that a test under the generated test
// double (tag mlx5gen_double) can check what reaches C.
var (
	devxGeneralCmd = mv.DevxGeneralCmd
	devxObjCreate  = mv.DevxObjCreate
	devxObjQuery   = mv.DevxObjQuery
	devxObjModify  = mv.DevxObjModify
	devxObjDestroy = mv.DevxObjDestroy
)

// bufs returns the C view of a command's buffers: their first bytes and
// lengths. The API hands over buffers of at least 16 bytes. Go memory
// is passed as it is: it holds no Go pointers, and C keeps no pointer
// to it after the call (the kernel copies in, and out is written before
// the call returns), as cgo's rules ask.
func bufs(in, out []byte) (unsafe.Pointer, uint64, unsafe.Pointer, uint64) {
	return unsafe.Pointer(unsafe.SliceData(in)), uint64(len(in)), unsafe.Pointer(unsafe.SliceData(out)), uint64(len(out))
}

// needDevx fails when the context was opened without DEVX: the kernel
// would refuse every command of it.
func (c *vctx) needDevx(op string) error {
	if !c.devx {
		return fmt.Errorf("verbs: %s: the device was opened without MLX5DV_CONTEXT_FLAGS_DEVX (the kernel refused DEVX): %w", op, device.ErrNoDevx)
	}
	return nil
}

// DevxGeneralCmd runs in through mlx5dv_devx_general_cmd; the error
// wraps the errno (EREMOTEIO: out holds the device's status).
func (c *vctx) DevxGeneralCmd(in, out []byte) error {
	if err := c.needDevx("mlx5dv_devx_general_cmd"); err != nil {
		return err
	}
	i, il, o, ol := bufs(in, out)
	return devxGeneralCmd(c.ctx, i, il, o, ol)
}

// vdevx is an object mlx5dv_devx_obj_create made.
type vdevx struct{ obj mv.DevxObj }

func (c *vctx) DevxObjCreate(in, out []byte) (device.BackendDevxObj, error) {
	if err := c.needDevx("mlx5dv_devx_obj_create"); err != nil {
		return nil, err
	}
	i, il, o, ol := bufs(in, out)
	obj, err := devxObjCreate(c.ctx, i, il, o, ol)
	if err != nil {
		return nil, err
	}
	return &vdevx{obj}, nil
}

func (x *vdevx) Query(in, out []byte) error {
	i, il, o, ol := bufs(in, out)
	return devxObjQuery(x.obj, i, il, o, ol)
}

func (x *vdevx) Modify(in, out []byte) error {
	i, il, o, ol := bufs(in, out)
	return devxObjModify(x.obj, i, il, o, ol)
}

func (x *vdevx) Close() error { return devxObjDestroy(x.obj) }

// PDN reads the PD's number with mlx5dv_init_obj (MLX5DV_OBJ_PD); the
// struct it fills is pinned for the call, as for the CQ and QP.
func (p *vpd) PDN() (uint32, error) {
	var out mlx.PD
	var pin runtime.Pinner
	pin.Pin(&out)
	err := mv.InitObj(&mlx.Obj{PDIn: p.pd, PDOut: &out}, uint64(mlx.MLX5DV_OBJ_PD))
	pin.Unpin()
	if err != nil {
		return 0, err
	}
	return out.Pdn, nil
}
