//go:build !cgo

package verbs

import (
	"errors"

	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// ErrNoCgo is the error of a backend built with CGO_ENABLED=0.
var ErrNoCgo = errors.New("verbs: built without cgo (CGO_ENABLED=0): the hardware backend calls libibverbs and libmlx5 through cgo")

func (backend) Open(string) (device.BackendContext, error) { return nil, ErrNoCgo }
func (backend) List() ([]device.Info, error)               { return nil, ErrNoCgo }
