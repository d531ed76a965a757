package sim

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sim/engine"
)

// simCQ is a CQ: its buffer and doorbell record are qmem memory the
// engine writes and the poller reads; its UAR page is plain memory where
// Arm writes the arm doorbell the completion channel watches.
type simCQ struct {
	c     *simCtx
	mem   *qmem.Memory
	cq    *engine.CQ
	uar   []byte
	ch    *simChan
	fired uint64 // the arm doorbell the last event answered
}

// pow2 rounds n up to a power of two, stopping at 2^30 so that a count
// the API let through cannot loop past the int's top bit; the caps checks
// refuse it later.
func pow2(n int) int {
	p := 1
	for p < n && p < 1<<30 {
		p <<= 1
	}
	return p
}

// CreateCQ gives a CQ asked for N CQEs the power of two at or above max(N, 2). [ledger: cq-size]
func (c *simCtx) CreateCQ(attr device.CQConfig, ch device.BackendChannel) (device.BackendCQ, error) {
	size := attr.CQESize
	if size == 0 {
		size = 64
	}
	n := pow2(max(attr.CQEs, 2))
	if n > c.d.Caps().MaxCQE {
		return nil, fmt.Errorf("sim: create_cq: %d CQEs, the device offers %d", attr.CQEs, c.d.Caps().MaxCQE)
	}
	mem, err := qmem.New(qmem.Options{WQEBBs: 1, CQEs: n * size / 64, Lock: dma.LockBestEffort})
	if err != nil {
		return nil, err
	}
	mem.CQESize = size
	cq.InitBuffer(mem)
	e, err := c.d.CreateCQ(mem)
	if err != nil {
		mem.Close()
		return nil, err
	}
	q := &simCQ{c: c, mem: mem, cq: e, uar: make([]byte, 64)}
	if ch != nil {
		q.ch = ch.(*simChan)
		q.ch.add(q)
	}
	return q, nil
}

func (q *simCQ) Memory() device.CQMemory {
	return device.CQMemory{Mem: q.mem, CQN: q.cq.CQN(), UAR: q.uar}
}

// Arming arms the CQ under the fabric's lock, which the channel's Wait
// holds while it reads the arm doorbell (armed).
func (q *simCQ) Arming(arm func()) {
	f := Fabric()
	f.Lock()
	defer f.Unlock()
	arm()
}

// Progress runs the engine once: the work the doorbells announced.
func (q *simCQ) Progress() { Fabric().Step() }

func (q *simCQ) Close() error {
	if q.ch != nil {
		q.ch.remove(q)
	}
	if err := q.c.d.DestroyCQ(q.cq); err != nil {
		return err
	}
	return q.mem.Close()
}

// armed reports (and consumes) a completion event: the CQ was armed by a
// doorbell not answered yet, and the device wrote a CQE past the consumer
// index armed (solicited only: a solicited CQE or an error there). [ledger: cq-arm]
func (q *simCQ) armed() bool {
	arm := binary.BigEndian.Uint64(q.uar[mlx.MLX5_CQ_DOORBELL:])
	if arm == 0 || arm == q.fired {
		return false
	}
	word := uint32(arm >> 32)
	ci := word & 0xffffff
	past := (q.cq.Written() - ci) & 0xffffff // CQEs written since the arm's consumer index
	if word&mlx.MLX5_CQ_DB_REQ_NOT_SOL != 0 {
		if s := (q.cq.Solicited() - ci) & 0xffffff; q.cq.Solicited() == 0 || s == 0 || s > past {
			return false
		}
	}
	if past == 0 {
		return false
	}
	q.fired = arm
	return true
}

// simChan is a completion channel.
type simChan struct {
	c    *simCtx
	mu   sync.Mutex
	cqs  []*simCQ
	done chan struct{} // closed by Close: a Wait in progress ends
	once sync.Once
}

func (c *simCtx) CreateCompChannel() (device.BackendChannel, error) {
	return &simChan{c: c, done: make(chan struct{})}, nil
}

func (ch *simChan) add(q *simCQ) {
	ch.mu.Lock()
	ch.cqs = append(ch.cqs, q)
	ch.mu.Unlock()
}

func (ch *simChan) remove(q *simCQ) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	for i, x := range ch.cqs {
		if x == q {
			ch.cqs = append(ch.cqs[:i], ch.cqs[i+1:]...)
			return
		}
	}
}

// chanIdle is how long Wait sleeps between steps of an idle engine: the
// latency of an event whose work was posted while it slept.
const chanIdle = 50 * time.Microsecond

// Wait runs the engine and returns the CQN of the first armed CQ of the
// channel with a new completion, until ctx is done or the channel is
// closed (device.ErrClosed: the API never closes a channel under a Wait,
// but a backend's own users might).
func (ch *simChan) Wait(ctx context.Context) (uint32, error) {
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		busy := Fabric().Step()
		if cqn, ok := ch.fired(); ok {
			return cqn, nil
		}
		if busy {
			if err := ch.ended(ctx); err != nil {
				return 0, err
			}
			continue
		}
		if t == nil {
			t = time.NewTimer(chanIdle)
		} else {
			t.Reset(chanIdle)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-ch.done:
			return 0, fmt.Errorf("sim: completion channel: Wait: %w", device.ErrClosed)
		case <-t.C:
		}
	}
}

// ended is the error of a Wait whose ctx is done or channel closed.
func (ch *simChan) ended(ctx context.Context) error {
	select {
	case <-ch.done:
		return fmt.Errorf("sim: completion channel: Wait: %w", device.ErrClosed)
	default:
	}
	return ctx.Err()
}

// fired returns the CQN of a CQ of the channel with an event, if any.
func (ch *simChan) fired() (uint32, bool) {
	f := Fabric()
	f.Lock()
	defer f.Unlock()
	ch.mu.Lock()
	defer ch.mu.Unlock()
	for _, q := range ch.cqs {
		if q.armed() {
			return q.cq.CQN(), true
		}
	}
	return 0, false
}

func (ch *simChan) Ack(device.BackendCQ, int) {}

func (ch *simChan) Close() error {
	ch.once.Do(func() { close(ch.done) })
	return nil
}
