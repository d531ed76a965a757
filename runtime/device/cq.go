package device

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/mlx5gen/mlx5gen/runtime/cq"
)

// CQ is a completion queue: the runtime/cq poller over the device's CQ
// memory, with the QPs completing to it registered.
type CQ struct {
	c    *Context
	b    BackendCQ
	n    *node
	mem  CQMemory
	poll *cq.CQ
	prog Progress // the backend's, or nil
	ch   *CompChannel
}

// CreateCQ creates a completion queue of at least cfg.CQEs entries.
func (c *Context) CreateCQ(cfg CQConfig) (*CQ, error) {
	if cfg.CQESize == 0 {
		cfg.CQESize = 64
	}
	if err := c.checkCQConfig(cfg); err != nil {
		return nil, fmt.Errorf("device: CreateCQ: %w", err)
	}
	parents := []*node{c.root}
	var bch BackendChannel
	if cfg.Channel != nil {
		parents = append(parents, cfg.Channel.n)
		bch = cfg.Channel.b
	}
	q := &CQ{c: c, ch: cfg.Channel}
	n, err := c.create("CreateCQ", parents, func() (string, func() error, error) {
		b, err := c.b.CreateCQ(cfg, bch)
		if err != nil {
			return "", nil, err
		}
		if err := q.build(b); err != nil {
			b.Close()
			return "", nil, err
		}
		if err := c.addCQ(q); err != nil {
			_ = q.poll.Close() // nothing polled it yet: it cannot wait
			b.Close()
			return "", nil, err
		}
		if q.ch != nil {
			q.ch.bind(q.mem.CQN, b)
		}
		return fmt.Sprintf("CQ %#x", q.mem.CQN), q.closeFn, nil
	})
	if err != nil {
		return nil, err
	}
	q.n = n
	return q, nil
}

// checkCQConfig checks the ranges the C fields hold, then runs the
// validators of ibv_create_cq_ex and mlx5dv_create_cq (cqe_size), then
// checks the device's capabilities.
func (c *Context) checkCQConfig(cfg CQConfig) error {
	hi, limit := cq.MaxCQEs, "cq.MaxCQEs"
	if m := c.info.Caps.MaxCQE; m > 0 && m < hi {
		hi, limit = m, "Caps.MaxCQE" // max_cqe: ibv_create_cq fails with EINVAL past it
	}
	if err := inRange("CQConfig.CQEs", cfg.CQEs, 1, hi, limit); err != nil {
		return err
	}
	if err := inRange("CQConfig.CQESize", cfg.CQESize, 0, 1<<16-1, ""); err != nil {
		return err // mlx5dv_cq_init_attr.cqe_size is a uint16_t
	}
	if err := validateCQ(cfg); err != nil {
		return err
	}
	if cfg.CQESize == 128 && !c.info.Caps.CQE128 {
		return cfgErr("CQConfig.CQESize", 128, "the device has no 128-byte CQEs (Caps.CQE128)")
	}
	if cfg.Channel != nil && cfg.Channel.c != c {
		return cfgErr("CQConfig.Channel", nil, "belongs to another context")
	}
	return nil
}

// closeFn destroys the CQ: its waiters have left (closeOne).
func (q *CQ) closeFn() error {
	q.c.removeCQ(q)
	if err := q.poll.Close(); err != nil {
		return fmt.Errorf("%w; the CQ stays allocated", err)
	}
	if q.ch == nil {
		return q.b.Close()
	}
	q.ch.closing(q.mem.CQN)
	err := q.b.Close()
	q.ch.unbind(q.mem.CQN)
	return err
}

// build makes the poller over the backend's CQ memory.
func (q *CQ) build(b BackendCQ) error {
	m := b.Memory()
	if m.Mem == nil {
		return errors.New("the backend's CQ has no memory (CQMemory.Mem)")
	}
	p, err := cq.New(cq.Config{Mem: m.Mem, CQN: m.CQN, CQEVersion: m.CQEVersion, UAR: m.UAR, Device: m.Device,
		DumpFillLKey: m.DumpFillLKey, Scatter: m.Scatter})
	if err != nil {
		return err
	}
	q.b, q.mem, q.poll = b, m, p
	q.prog, _ = b.(Progress)
	return nil
}

// CQN returns the CQ's number.
func (q *CQ) CQN() uint32 { return q.mem.CQN }

// CQESize returns the bytes per CQE.
func (q *CQ) CQESize() int { return q.mem.Mem.CQESize }

// CQEs returns the number of entries.
func (q *CQ) CQEs() int { return q.poll.CQEs() }

// Poller returns the CQ's poller, for the ibv_start_poll style of
// polling. Call Progress (or Poll) first on the simulator.
func (q *CQ) Poller() *cq.CQ { return q.poll }

// Progress lets the backend run the work requests whose doorbells it has
// not seen yet (the simulator; nothing on hardware).
func (q *CQ) Progress() {
	if q.prog != nil {
		q.prog.Progress()
	}
}

// Poll fills wc with the next completions (ibv_poll_cq) and returns how
// many. It does not allocate.
func (q *CQ) Poll(wc []cq.WC) (int, error) {
	if q.n.closed.Load() {
		return 0, q.n.check("Poll")
	}
	if q.prog != nil {
		q.prog.Progress()
	}
	n, err := q.poll.Poll(wc)
	if n == 0 && err == nil {
		err = q.overrunErr()
	}
	return n, err
}

// Close destroys the CQ, and first the QPs completing to it.
func (q *CQ) Close() error {
	q.c.mu.Lock()
	defer q.c.mu.Unlock()
	return closeNode(q.n)
}

// Wait arms the CQ and waits, until ctx is done, for its completion event
// on its channel; the event is acknowledged. Poll the CQ empty before
// Wait, and again after: the event says completions arrived (PollWait
// does all three). Wait blocks: it ends with an error wrapping ErrClosed
// as soon as the CQ, its channel or the context is closed from another
// goroutine, and with ctx's error (naming the CQ) when ctx is done.
func (q *CQ) Wait(ctx context.Context) error { return q.wait(ctx, "Wait", false) }

// WaitSolicited is Wait with the CQ armed for solicited completions only
// (ibv_req_notify_cq with solicited_only): the event comes with a receive
// of a message sent with IBV_SEND_SOLICITED, or an error completion.
func (q *CQ) WaitSolicited(ctx context.Context) error { return q.wait(ctx, "WaitSolicited", true) }

func (q *CQ) wait(ctx context.Context, op string, solicited bool) error {
	if ctx == nil {
		return fmt.Errorf("device: %s: ctx is nil", op)
	}
	if err := q.n.enter(op); err != nil {
		return err
	}
	defer q.n.leave()
	if q.ch == nil {
		return fmt.Errorf("device: %s: %s: the CQ has no completion channel (CQConfig.Channel)", q.n.what, op)
	}
	if err := q.arm(op, solicited); err != nil {
		return err
	}
	return q.event(ctx, op)
}

// arm requests the CQ's next completion event (ibv_req_notify_cq).
//
// The poller refuses to arm (cq.ErrBusy) while a QP is being added to or
// removed from the CQ: that change may need the lock Arming holds, so
// arm lets it go and tries again.
func (q *CQ) arm(op string, solicited bool) error {
	var err error
	for i := 0; ; i++ {
		if a, ok := q.b.(Arming); ok {
			a.Arming(func() { err = q.poll.Arm(solicited) })
		} else {
			err = q.poll.Arm(solicited)
		}
		if !errors.Is(err, cq.ErrBusy) {
			break
		}
		if i < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
	if err != nil {
		return fmt.Errorf("device: %s: %s: %w", q.n.what, op, err)
	}
	return nil
}

// event waits for the armed CQ's event and acknowledges it. The caller
// has entered q.n: the CQ closes (and before it its channel cannot) only
// once event has returned, and its close cancels the wait.
func (q *CQ) event(ctx context.Context, op string) error {
	wctx, stop := q.n.watch(ctx)
	defer stop()
	if err := q.ch.waitFor(wctx, q); err != nil {
		return q.n.waitErr(ctx, op, err)
	}
	q.poll.Event()
	q.ch.b.Ack(q.b, 1)
	return nil
}

// CompChannel is a completion channel: the CQs bound to it (CQConfig.
// Channel) report their events there. Several goroutines may wait on
// CQs of one channel: whoever reads the channel keeps the events of the
// others for them.
type CompChannel struct {
	c    *Context
	b    BackendChannel
	n    *node
	turn chan struct{} // held by the goroutine reading the backend
	mu   sync.Mutex    // guards cqs
	cqs  map[uint32]*chanCQ
}

// chanCQ is a CQ of the channel: the events read for it by another CQ's
// waiter and not taken yet. Those are read from the backend but not
// acknowledged, and ibv_destroy_cq waits until every event read is: the
// CQ's close acknowledges them (closing), and so does a waiter that reads
// one for it while it closes.
type chanCQ struct {
	b       BackendCQ
	pending int
	closing bool
}

// CreateCompChannel creates a completion channel.
func (c *Context) CreateCompChannel() (*CompChannel, error) {
	ch := &CompChannel{c: c, turn: make(chan struct{}, 1), cqs: map[uint32]*chanCQ{}}
	n, err := c.create("CreateCompChannel", []*node{c.root}, func() (string, func() error, error) {
		b, err := c.b.CreateCompChannel()
		if err != nil {
			return "", nil, err
		}
		ch.b = b
		return "completion channel", b.Close, nil
	})
	if err != nil {
		return nil, err
	}
	ch.n = n
	return ch, nil
}

// Close destroys the channel, and first its CQs (and their QPs).
func (ch *CompChannel) Close() error {
	ch.c.mu.Lock()
	defer ch.c.mu.Unlock()
	return closeNode(ch.n)
}

// bind registers a new CQ of the channel.
func (ch *CompChannel) bind(cqn uint32, b BackendCQ) {
	ch.mu.Lock()
	ch.cqs[cqn] = &chanCQ{b: b}
	ch.mu.Unlock()
}

// closing acknowledges the events kept for the CQ, which is about to be
// destroyed; unbind forgets it once it is.
func (ch *CompChannel) closing(cqn uint32) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if e := ch.cqs[cqn]; e != nil {
		e.closing = true
		if e.pending > 0 {
			ch.b.Ack(e.b, e.pending)
			e.pending = 0
		}
	}
}

func (ch *CompChannel) unbind(cqn uint32) {
	ch.mu.Lock()
	delete(ch.cqs, cqn)
	ch.mu.Unlock()
}

// take consumes one pending event of cqn.
func (ch *CompChannel) take(cqn uint32) bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if e := ch.cqs[cqn]; e != nil && e.pending > 0 {
		e.pending--
		return true
	}
	return false
}

// put keeps an event of cqn for its waiter (acknowledged at once when
// the CQ is closing: nobody will take it).
func (ch *CompChannel) put(cqn uint32) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	switch e := ch.cqs[cqn]; {
	case e == nil:
	case e.closing:
		ch.b.Ack(e.b, 1)
	default:
		e.pending++
	}
}

// waitFor waits for an event of q, reading the backend in turn with the
// other waiters and keeping their events for them (before the turn
// passes on: TestWaitForHandOff). It returns ctx's error or the
// backend's.
func (ch *CompChannel) waitFor(ctx context.Context, q *CQ) error {
	for {
		if ch.take(q.mem.CQN) {
			return nil
		}
		select {
		case ch.turn <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		if ch.take(q.mem.CQN) { // kept by the previous reader
			<-ch.turn
			return nil
		}
		cqn, err := ch.b.Wait(ctx)
		mine := err == nil && cqn == q.mem.CQN
		if err == nil && !mine {
			// Kept before the turn passes on: the next reader looks
			// for its events once it has the turn, and one kept after
			// that look would wait for it while it reads the backend
			// for an event that has come already.
			ch.put(cqn)
		}
		<-ch.turn
		if err != nil {
			return err
		}
		if mine {
			return nil
		}
	}
}
