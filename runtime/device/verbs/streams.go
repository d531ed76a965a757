//go:build cgo

package verbs

import (
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// ResetStream takes DCI stream id out of error with libmlx5's
// mlx5dv_dci_stream_id_reset(3) (device.StreamResetter). The device API
// has already refused a QP that is not a DCI with streams, an id past its
// streams and a QP not in RTS; libmlx5's own refusals (EOPNOTSUPP, EINVAL)
// come back wrapped with its errno.
func (q *vqp) ResetStream(id uint16) error {
	return mv.DCIStreamIDReset(q.qp, id)
}

var _ device.StreamResetter = (*vqp)(nil)
