package device

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/mlx5gen/mlx5gen/runtime/cq"
)

// How PollWait waits. Completions usually follow a post within a few
// microseconds, so it first polls back to back (pollSpins polls: on the
// simulator each one also steps the engine); then it sleeps on the CQ's
// completion channel, or, without one, yields (pollYields times) and
// sleeps between polls, from minBackoff doubling up to maxBackoff: the
// longest a completion waits unseen, and short enough to keep the
// simulator's engine, which runs in those polls, moving.
const (
	pollSpins  = 64
	pollYields = 16
	minBackoff = 4 * time.Microsecond
	maxBackoff = 256 * time.Microsecond
)

// PollWait fills wc with the next completions, as Poll does, waiting for
// at least one until ctx is done: it returns n > 0 as soon as completions
// exist, 0 and ctx's error (naming the CQ) when ctx ends first, and 0 and
// an error wrapping ErrClosed when the CQ, its channel or the context is
// closed from another goroutine. It polls in a loop for a moment, then,
// when the CQ has a completion channel, arms the CQ, polls once more
// (what arrived before the arm raises no event) and sleeps on the
// channel; without one it backs off, polling between ever longer sleeps
// (at most maxBackoff). With completions already there it allocates
// nothing, like Poll.
//
// PollWait and Wait consume the CQ's completion events: a program waits
// on a CQ with one or the other, from one goroutine at a time (the one
// that posts to its QPs' send queues, as with Poll). A context made per
// call (context.WithTimeout) costs about a microsecond: where each
// completion comes in microseconds, reuse one context for many calls.
func (q *CQ) PollWait(ctx context.Context, wc []cq.WC) (int, error) {
	if ctx == nil {
		return 0, fmt.Errorf("device: %s: PollWait: ctx is nil", q.n.what)
	}
	if n, err := q.Poll(wc); n > 0 || err != nil {
		return n, err
	}
	if len(wc) == 0 {
		return 0, fmt.Errorf("device: %s: PollWait: wc is empty", q.n.what)
	}
	if err := q.n.enter("PollWait"); err != nil {
		return 0, err
	}
	defer q.n.leave()
	for range pollSpins {
		if n, err := q.pollOnce(wc); n > 0 || err != nil {
			return n, err
		}
		if ctx.Err() != nil {
			return 0, q.n.waitErr(ctx, "PollWait", nil)
		}
	}
	if q.ch != nil {
		return q.pollSleep(ctx, wc)
	}
	return q.pollBackoff(ctx, wc)
}

// pollOnce is Poll naming PollWait in its errors.
func (q *CQ) pollOnce(wc []cq.WC) (int, error) {
	if q.n.closed.Load() {
		return 0, q.n.check("PollWait")
	}
	q.Progress()
	n, err := q.poll.Poll(wc)
	if err != nil {
		err = fmt.Errorf("device: %s: PollWait: %w", q.n.what, err)
	}
	return n, err
}

// pollSleep waits on the completion channel: arm, poll (closing the race
// with a completion written before the arm), sleep for the event, poll.
// The caller has entered q.n.
func (q *CQ) pollSleep(ctx context.Context, wc []cq.WC) (int, error) {
	for {
		if err := q.arm("PollWait", false); err != nil {
			return 0, err
		}
		if n, err := q.pollOnce(wc); n > 0 || err != nil {
			return n, err
		}
		if err := q.event(ctx, "PollWait"); err != nil {
			return 0, err
		}
		if n, err := q.pollOnce(wc); n > 0 || err != nil {
			return n, err
		}
	}
}

// pollBackoff polls between yields, then sleeps that grow to maxBackoff,
// each ended early by ctx or the CQ's close. The caller has entered q.n.
func (q *CQ) pollBackoff(ctx context.Context, wc []cq.WC) (int, error) {
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	d := minBackoff
	for i := 0; ; i++ {
		if i < pollYields {
			runtime.Gosched()
		} else {
			if t == nil {
				t = time.NewTimer(d)
			} else {
				t.Reset(d)
			}
			select {
			case <-t.C:
			case <-ctx.Done():
			case <-q.n.gone.Done():
			}
			d = min(2*d, maxBackoff)
		}
		if n, err := q.pollOnce(wc); n > 0 || err != nil {
			return n, err
		}
		if ctx.Err() != nil {
			return 0, q.n.waitErr(ctx, "PollWait", nil)
		}
	}
}
