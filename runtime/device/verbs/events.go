//go:build cgo

package verbs

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// asyncEvent reads the next asynchronous event from the context's async
// fd (made non-blocking on first use), names its object and acknowledges
// it.
func (c *vctx) asyncEvent(ctx context.Context) (device.AsyncEvent, error) {
	fd := asyncFD(c.ctx)
	if err := unix.SetNonblock(fd, true); err != nil {
		return device.AsyncEvent{}, fmt.Errorf("verbs: async fd: %w", err)
	}
	for {
		var ev mlx.AsyncEvent
		_, err := mv.GetAsyncEvent(c.ctx, &ev)
		if err == nil {
			out := decodeEvent(c, &ev)
			mv.AckAsyncEvent(&ev)
			return out, nil
		}
		if !errors.Is(err, syscall.EAGAIN) {
			return device.AsyncEvent{}, err
		}
		if err := waitFD(ctx, fd); err != nil {
			return device.AsyncEvent{}, err
		}
	}
}

// decodeEvent reads the event's element as ibv_async_event's union says
// for its type.
func decodeEvent(c *vctx, ev *mlx.AsyncEvent) device.AsyncEvent {
	out := device.AsyncEvent{Type: ev.EventType}
	ptr := *(*unsafe.Pointer)(unsafe.Pointer(&ev.Element[0]))
	switch ev.EventType {
	case mlx.IBV_EVENT_CQ_ERR:
		c.mu.Lock()
		out.CQN = c.cqs[ptr]
		c.markOverrun(ptr)
		c.mu.Unlock()
	case mlx.IBV_EVENT_PORT_ACTIVE, mlx.IBV_EVENT_PORT_ERR, mlx.IBV_EVENT_LID_CHANGE, mlx.IBV_EVENT_PKEY_CHANGE,
		mlx.IBV_EVENT_SM_CHANGE, mlx.IBV_EVENT_CLIENT_REREGISTER, mlx.IBV_EVENT_GID_CHANGE:
		out.Port = int(*(*int32)(unsafe.Pointer(&ev.Element[0])))
	case mlx.IBV_EVENT_QP_FATAL, mlx.IBV_EVENT_QP_REQ_ERR, mlx.IBV_EVENT_QP_ACCESS_ERR, mlx.IBV_EVENT_COMM_EST,
		mlx.IBV_EVENT_SQ_DRAINED, mlx.IBV_EVENT_PATH_MIG, mlx.IBV_EVENT_PATH_MIG_ERR, mlx.IBV_EVENT_QP_LAST_WQE_REACHED:
		if ptr != nil {
			out.QPN = qpNum(ptr)
		}
	case mlx.IBV_EVENT_SRQ_ERR, mlx.IBV_EVENT_SRQ_LIMIT_REACHED:
		if n, ok := srqNums.Load(ptr); ok {
			out.SRQN = n.(uint32)
		}
	}
	return out
}
