//go:build cgo

package verbs

import (
	"unsafe"

	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// The C objects behind the backend's objects (device.Native): what the
// device API's Native methods hand to a program that calls a function of
// mlx5dv.h the API does not wrap. The device API keeps owning them: it
// destroys each on Close.

func (c *vctx) Native() unsafe.Pointer { return c.ctx.Ptr() }
func (p *vpd) Native() unsafe.Pointer  { return unsafe.Pointer(p.pd) }
func (q *vcq) Native() unsafe.Pointer  { return q.cq.Ptr() }
func (q *vqp) Native() unsafe.Pointer  { return q.qp.Ptr() }
func (s *vsrq) Native() unsafe.Pointer { return s.srq.Ptr() }

// Each object the device API asks for its C object must have Native.
var (
	_ device.Native = (*vctx)(nil)
	_ device.Native = (*vpd)(nil)
	_ device.Native = (*vcq)(nil)
	_ device.Native = (*vqp)(nil)
	_ device.Native = (*vsrq)(nil)
)
