package sq

import (
	"fmt"
	"time"

	"github.com/mlx5gen/mlx5gen/runtime/internal/gate"
)

// The hand-off between the writer and the poller, and Close: the writer
// publishes its head (in Complete, before the doorbell record), the
// poller its tail (Completed, Retire); each reads the other's word with
// an acquire load, and the writer only when the ring looks full
// (refresh). No lock is taken on either path; the gate (Start enters,
// Complete and Abort leave) lets Close wait for a batch in progress.

// Head returns the number of work requests posted so far (by the last
// Complete that rang the doorbell). Any goroutine may call it.
func (q *SQ) Head() uint32 { return q.pub.head.Load() }

// Outstanding returns the work requests posted and not yet completed. Any
// goroutine may call it.
func (q *SQ) Outstanding() uint32 { return q.pub.head.Load() - q.pub.tail.Load() }

// Completed records that n posted work requests completed, freeing their
// room: the poller's call (one goroutine at a time, which may run beside
// the writer). It fails if fewer are outstanding.
func (q *SQ) Completed(n uint32) error {
	t := q.pub.tail.Load()
	if h := q.pub.head.Load(); n > h-t {
		return completedError{n, h - t}
	}
	q.pub.tail.Publish(t + n)
	return nil
}

// completedError is Completed's error: a value, formatted only when
// read, so that Completed inlines into the poller's loop (a call and a
// frame fewer per batch; TestMkeyFastPathsInline checks).
type completedError struct{ n, outstanding uint32 }

func (e completedError) Error() string {
	return fmt.Sprintf("sq: %d completions with %d work requests outstanding", e.n, e.outstanding)
}

// Retire sets the tail to tail (the work requests before it completed),
// if that moves it on by no more than are outstanding, and reports
// whether it did: a CQE of a work request already retired changes
// nothing. The poller's call, as Completed.
func (q *SQ) Retire(tail uint32) bool {
	t := q.pub.tail.Load()
	if n := tail - t; n == 0 || n > q.pub.head.Load()-t {
		return false
	}
	q.pub.tail.Publish(tail)
	return true
}

// Acquire orders the poller's reads of Slots after the writer's stores of
// the work requests posted so far (it loads the published head): call it
// before reading the Slots of a completion.
func (q *SQ) Acquire() { _ = q.pub.head.Load() }

// refresh reads the poller's tail again; it reports whether the ring had
// room returned since the last read (limit is then recomputed).
func (q *SQ) refresh() bool {
	t := q.pub.tail.Load()
	if t == q.tail {
		return false
	}
	q.tail = t
	q.resetLimit()
	return true
}

// ErrClosed is the error of Start after Close; it matches qmem.ErrClosed.
var ErrClosed = gate.Closed("sq: the writer is closed")

// DefaultCloseWait is how long Close waits for a batch in progress when
// Config.CloseWait is 0.
const DefaultCloseWait = 2 * time.Second

// Close detaches the writer from its queue, before the queue's memory is
// released (runtime/device calls it when its QP is closed): every later
// Start returns ErrClosed, and a batch in progress on another goroutine
// is waited for (it completes: the memory is the queue's until Close
// returns), so that no work request is written into memory
// that is no longer the queue's. Any goroutine may call it, at any time;
// it is idempotent. It fails only if a batch stays open longer than
// Config.CloseWait (the writer blocked mid-batch, or Close called by the
// writer itself between Start and Complete): the queue's memory must
// then stay, and a later Close, once the batch ended, succeeds.
func (q *SQ) Close() error {
	if err := q.pub.gate.Close(q.closeWait); err != nil {
		return fmt.Errorf("sq: QP %#x: %w", q.qpn, err)
	}
	return nil
}
