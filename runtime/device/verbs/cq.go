//go:build cgo

package verbs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	mv "github.com/mlx5gen/mlx5gen/generated/mlx5verbs"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

type vcq struct {
	c   *vctx
	ex  mv.CQEx
	cq  mv.IBVCQ
	mem device.CQMemory
}

// CreateCQ creates the CQ with mlx5dv_create_cq and maps it with
// mlx5dv_init_obj.
func (c *vctx) CreateCQ(attr device.CQConfig, ch device.BackendChannel) (device.BackendCQ, error) {
	ex := mlx.CQInitAttrEx{CQE: uint32(attr.CQEs)}
	if ch != nil {
		ex.Channel = ch.(*vchan).ch
	}
	dv := mlx.CQInitAttr{CompMask: uint64(mlx.MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE), CQESize: uint16(attr.CQESize)}
	cqex, err := mv.CreateCQ(c.ctx, &ex, &dv)
	if err != nil {
		return nil, err
	}
	q := &vcq{c: c, ex: cqex, cq: cqOfEx(cqex)}
	var out mlx.CQ
	var pin runtime.Pinner
	pin.Pin(&out)
	err = mv.InitObj(&mlx.Obj{CQIn: q.cq.Ptr(), CQOut: &out}, uint64(mlx.MLX5DV_OBJ_CQ))
	pin.Unpin()
	if err != nil {
		mv.DestroyCQ(q.cq)
		return nil, err
	}
	q.mem = cqMemory(&out)
	c.mu.Lock()
	c.cqs[q.cq.Ptr()] = out.CQN
	c.mu.Unlock()
	return q, nil
}

// cqMemory maps what mlx5dv_init_obj reported of a CQ: its buffer,
// doorbell record and the UAR page its arm doorbell is in.
func cqMemory(out *mlx.CQ) device.CQMemory {
	return device.CQMemory{
		Mem: &qmem.Memory{
			CQ:      unsafe.Slice((*byte)(out.Buf), int(out.CQECnt)*int(out.CQESize)),
			CQESize: int(out.CQESize),
			CQDBR:   unsafe.Slice((*byte)(out.Dbrec), 8),
			Device:  true,
		},
		CQN: out.CQN,
		// The poller finds QPs by QPN (cqe_version 0 lookups): the CQE's
		// QPN field is filled with either version, while the user index
		// libmlx5 assigns with cqe_version 1 is not in its public API.
		CQEVersion: 0,
		UAR:        unsafe.Slice((*byte)(out.CQUAR), mlx.MLX5_CQ_DOORBELL+8),
		Device:     true,
	}
}

func (q *vcq) Memory() device.CQMemory { return q.mem }

func (q *vcq) Close() error {
	q.c.mu.Lock()
	delete(q.c.cqs, q.cq.Ptr())
	overruns.Delete(q.cq.Ptr())
	q.c.mu.Unlock()
	return mv.DestroyCQ(q.cq)
}

type vchan struct {
	c  *vctx
	ch *mlx.CompChannel
}

// CreateCompChannel creates a channel whose fd is non-blocking, so that
// Wait can poll it and watch its context.
func (c *vctx) CreateCompChannel() (device.BackendChannel, error) {
	ch, err := mv.CreateCompChannel(c.ctx)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(int(ch.Fd), true); err != nil {
		mv.DestroyCompChannel(ch)
		return nil, fmt.Errorf("verbs: completion channel fd: %w", err)
	}
	return &vchan{c: c, ch: ch}, nil
}

// waitFD waits until fd is readable or ctx is done. It sleeps in poll(2)
// on fd and an eventfd that ctx's end writes (context.AfterFunc), so it
// wakes at once when ctx is canceled: the API cancels it to end a wait
// before it closes the channel or the context whose fd this is.
func waitFD(ctx context.Context, fd int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w, err := newWaker()
	if err != nil {
		return err
	}
	defer w.close()
	stop := context.AfterFunc(ctx, w.wake)
	defer stop()
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(w.fd), Events: unix.POLLIN}}
		_, err := unix.Poll(fds, -1)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			return fmt.Errorf("verbs: poll: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if fds[0].Revents != 0 {
			return nil
		}
	}
}

// waker is an eventfd a context's end writes to wake a poll(2). Its lock
// orders that write with the close of the fd, so that a late wake never
// writes to a closed (or reused) descriptor.
type waker struct {
	mu sync.Mutex
	fd int
}

func newWaker() (*waker, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("verbs: eventfd: %w", err)
	}
	return &waker{fd: fd}, nil
}

func (w *waker) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		var one [8]byte // the eventfd counter's increment, a native uint64
		binary.NativeEndian.PutUint64(one[:], 1)
		unix.Write(w.fd, one[:])
	}
}

func (w *waker) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	unix.Close(w.fd)
	w.fd = -1
}

func (ch *vchan) Wait(ctx context.Context) (uint32, error) {
	for {
		var cq mv.IBVCQ
		var cqctx unsafe.Pointer
		_, err := mv.GetCQEvent(ch.ch, &cq, unsafe.Pointer(&cqctx))
		if err == nil {
			ch.c.mu.Lock()
			cqn, ok := ch.c.cqs[cq.Ptr()]
			ch.c.mu.Unlock()
			if !ok {
				return 0, errors.New("verbs: a completion event for a CQ this context does not know")
			}
			return cqn, nil
		}
		if !errors.Is(err, syscall.EAGAIN) {
			return 0, err
		}
		if err := waitFD(ctx, int(ch.ch.Fd)); err != nil {
			return 0, err
		}
	}
}

func (ch *vchan) Ack(cq device.BackendCQ, n int) { mv.AckCQEvents(cq.(*vcq).cq, uint32(n)) }
func (ch *vchan) Close() error                   { return mv.DestroyCompChannel(ch.ch) }
