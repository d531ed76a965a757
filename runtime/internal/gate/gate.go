// Package gate lets the one goroutine that uses a queue (its owner: the
// writer of a send or receive queue, the poller of a CQ) run its calls
// without a locked instruction, while another goroutine closes the queue,
// or changes what the owner reads, and waits until the owner is outside
// before the queue's memory goes.
//
// The owner marks itself inside (Enter) and outside (Leave) with plain
// release stores; the other side sets a flag (Close, Pause) and then
// makes every thread of the process execute a full barrier
// (membarrier(2) MEMBARRIER_CMD_PRIVATE_EXPEDITED) before it reads the
// owner's mark: either the owner's Enter saw the flag, or its mark is
// visible to the closer. This is the asymmetric Dekker protocol of
// liburcu's membarrier flavour: the cost moves from every call to the
// rare Close. Where membarrier is not available (another OS, an older
// kernel, a sandbox refusing it) and under the race detector, Enter's
// store is a sequentially consistent atomic instead: correct everywhere,
// one locked instruction per Enter on amd64.
//
// One owner at a time: two goroutines inside one gate at once is outside
// the contract (the mark is one word, not a count).
package gate

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// The control flags the other side sets.
const (
	closed = 1 << iota // Close: every later Enter fails
	paused             // Pause: Enter waits until Resume
)

// Gate is one owner's mark and the flags of those who close it or pause
// it. The zero value is open.
//
// Both words sit together: the owner writes in and reads ctl on every
// call, the others write ctl only to close or pause; place the gate
// beside the owner's other hot fields, away from what another goroutine
// writes.
type Gate struct {
	in  uint32 // the owner's: 1 inside, 0 outside (plain release stores)
	ctl uint32 // closed | paused (atomics)
}

// ClosedError is the error of a call on a closed object, in every
// runtime package: each package has its own message (sq.ErrClosed,
// cq.ErrClosed, device.ErrClosed, ...), and all of them match each other
// with errors.Is, so that a program tests for any one of them, whichever
// layer refused its call.
type ClosedError struct{ msg string }

// Closed returns a ClosedError saying msg.
func Closed(msg string) error { return &ClosedError{msg: msg} }

func (e *ClosedError) Error() string { return e.msg }

// Is matches every ClosedError.
func (e *ClosedError) Is(target error) bool {
	_, ok := target.(*ClosedError)
	return ok
}

// Enter marks the owner inside. It fails, leaving the owner outside, once
// Close has begun; while paused it waits for Resume. Its common case is
// two stores and a load, inlined into the owner's call.
func (g *Gate) Enter() bool {
	if g.EnterFast() {
		return true
	}
	return g.enterSlow()
}

// EnterFast is Enter's common case, small enough to inline into an
// owner's hot call: true, the owner is inside; false, the gate is closed
// or paused and the owner must call Enter (which says which).
func (g *Gate) EnterFast() bool {
	mark(&g.in)
	return atomic.LoadUint32(&g.ctl) == 0
}

// mark stores the owner's inside mark: plainly where the closer's
// membarrier orders it, else sequentially consistent.
func mark(p *uint32) {
	if asymmetric() {
		publish(p, 1)
	} else {
		atomic.StoreUint32(p, 1)
	}
}

// enterSlow is Enter's case of a gate closed or paused: out, then wait
// for Resume and try again, or fail.
func (g *Gate) enterSlow() bool {
	for {
		publish(&g.in, 0)
		c := atomic.LoadUint32(&g.ctl)
		if c&closed != 0 {
			return false
		}
		waitResume(&g.ctl)
		if g.EnterFast() {
			return true
		}
	}
}

// TryEnter is Enter without waiting: it fails, leaving the owner
// outside, when the gate is closed or paused (paused reports which), for
// an owner that holds a lock the pausing side may need.
func (g *Gate) TryEnter() (ok, paused bool) {
	mark(&g.in)
	c := atomic.LoadUint32(&g.ctl)
	if c == 0 {
		return true, false
	}
	publish(&g.in, 0)
	return false, c&closed == 0
}

// Inside reports whether the owner is inside (for the owner's own checks).
func (g *Gate) Inside() bool { return atomic.LoadUint32(&g.in) != 0 }

// Leave marks the owner outside: what it did inside is visible to whoever
// then sees it outside.
func (g *Gate) Leave() { publish(&g.in, 0) }

// Closed reports whether Close has begun.
func (g *Gate) Closed() bool { return atomic.LoadUint32(&g.ctl)&closed != 0 }

// Close makes every later Enter fail and waits, at most wait, for the
// owner to leave; then nothing the owner does touches the queue's memory
// until it is freed. It is idempotent. On time-out the owner is still
// inside (a batch left open, perhaps on the goroutine calling Close) and
// the memory must stay.
func (g *Gate) Close(wait time.Duration) error {
	atomic.OrUint32(&g.ctl, closed)
	heavyBarrier()
	return g.waitOut(wait, "close")
}

// Pause keeps the owner out until Resume and waits, at most wait, for it
// to leave: the caller may then change what the owner reads. Callers of
// Pause and Resume serialise among themselves (one lock). On time-out
// the gate is resumed.
func (g *Gate) Pause(wait time.Duration) error {
	atomic.OrUint32(&g.ctl, paused)
	heavyBarrier()
	if err := g.waitOut(wait, "pause"); err != nil {
		g.Resume()
		return err
	}
	return nil
}

// Resume lets the owner in again after Pause.
func (g *Gate) Resume() { atomic.AndUint32(&g.ctl, ^uint32(paused)) }

// waitOut waits until the owner is outside: spinning a little (the usual
// case is a call of a few hundred nanoseconds), then yielding, then
// sleeping.
func (g *Gate) waitOut(wait time.Duration, what string) error {
	var deadline time.Time
	for i := 0; atomic.LoadUint32(&g.in) != 0; i++ {
		switch {
		case i < 64:
			runtime.Gosched()
		case i == 64:
			deadline = time.Now().Add(wait)
		case time.Now().After(deadline):
			return fmt.Errorf("gate: %s: the owner stayed inside for %v (a batch or poll session left open, perhaps by the goroutine calling %s?)", what, wait, what)
		default:
			time.Sleep(50 * time.Microsecond)
		}
	}
	return nil
}

// waitResume waits for the pause flag to clear.
func waitResume(ctl *uint32) {
	for i := 0; atomic.LoadUint32(ctl)&paused != 0 && atomic.LoadUint32(ctl)&closed == 0; i++ {
		if i < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// Word is a 32-bit value one goroutine publishes and others read: the
// published value and everything its writer did before are visible to a
// reader that loads it.
type Word struct{ v uint32 }

// Publish stores x (a release store).
func (w *Word) Publish(x uint32) { publish(&w.v, x) }

// Load returns the last value published (an acquire load).
func (w *Word) Load() uint32 { return atomic.LoadUint32(&w.v) }
