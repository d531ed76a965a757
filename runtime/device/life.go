package device

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
)

// node is one open object of a context: what must close before it (the
// objects created on it or using it) and how it closes. All nodes of a
// context share its lock (Context.mu) for creating and closing.
type node struct {
	what    string // "PD", "QP 0x12": names the object in errors
	seq     uint64 // creation order
	closed  atomic.Bool
	users   []*node // objects that must close first
	closeFn func() error

	// A blocking call (Wait, AsyncEvent, PollWait) registers in waiters
	// while it may touch the backend object, and watches gone: close
	// cancels gone, then waits for the waiters to leave before closeFn
	// destroys the backend object, so no waiter ever touches freed memory
	// or a destroyed channel. wmu orders a waiter's registration with
	// close (sync.WaitGroup's Add must not race its Wait).
	gone    context.Context
	kill    context.CancelFunc
	wmu     sync.Mutex
	waiters sync.WaitGroup
}

// check returns the error of using n, nil while it is open.
func (n *node) check(op string) error {
	if n.closed.Load() {
		return fmt.Errorf("device: %s: %s: %w", n.what, op, ErrClosed)
	}
	return nil
}

// add registers a new object that uses the parents (checked open); the
// caller holds c.mu.
func (c *Context) add(what string, closeFn func() error, parents ...*node) *node {
	c.seq++
	n := &node{what: what, seq: c.seq, closeFn: closeFn}
	n.gone, n.kill = context.WithCancel(context.Background())
	for _, p := range parents {
		p.users = append(p.users, n)
	}
	return n
}

// closeNode closes n and, first, every open object that uses it, newest
// first. The caller holds c.mu. Closing a closed node does nothing.
func closeNode(n *node) error {
	if n.closed.Load() {
		return nil
	}
	var all []*node
	seen := map[*node]bool{}
	var walk func(*node)
	walk = func(m *node) {
		for _, u := range m.users {
			if !seen[u] && !u.closed.Load() {
				seen[u] = true
				all = append(all, u)
				walk(u)
			}
		}
	}
	walk(n)
	sort.Slice(all, func(i, j int) bool { return all[i].seq > all[j].seq })
	var errs []error
	for _, u := range all {
		errs = append(errs, closeOne(u))
	}
	errs = append(errs, closeOne(n))
	return errors.Join(errs...)
}

// closeOne marks n closed, wakes its waiters and waits for them to
// leave, then releases it; its users are closed already.
func closeOne(n *node) error {
	n.wmu.Lock()
	n.closed.Store(true)
	n.kill()
	n.wmu.Unlock()
	n.waiters.Wait()
	n.users = nil
	if n.closeFn == nil {
		return nil
	}
	if err := n.closeFn(); err != nil {
		return fmt.Errorf("device: close %s: %w", n.what, err)
	}
	return nil
}

// enter registers a blocking call op on n: an error matching ErrClosed
// when n is closed. Otherwise the caller must call n.leave when it no
// longer touches the backend object; closing n waits for that.
func (n *node) enter(op string) error {
	n.wmu.Lock()
	defer n.wmu.Unlock()
	if n.closed.Load() {
		return n.check(op)
	}
	n.waiters.Add(1)
	return nil
}

func (n *node) leave() { n.waiters.Done() }

// watch returns a context done when ctx is, or when n closes, and the
// function releasing it. It starts no goroutine: context.AfterFunc runs
// the cancel only once n closes, and stop unregisters it.
func (n *node) watch(ctx context.Context) (context.Context, func()) {
	wctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(n.gone, cancel)
	return wctx, func() { stop(); cancel() }
}

// waitErr is the error of blocking call op on n that ended with err: the
// close of n (ErrClosed) first, then ctx's end, then the backend's err,
// each naming n.
func (n *node) waitErr(ctx context.Context, op string, err error) error {
	if n.closed.Load() {
		return n.check(op)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("device: %s: %s: %w", n.what, op, ctx.Err())
	}
	return fmt.Errorf("device: %s: %s: %w", n.what, op, err)
}
