package device

import (
	"errors"
	"fmt"
	"sort"
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

// closeOne marks n closed and releases it; its users are closed already.
func closeOne(n *node) error {
	n.closed.Store(true)
	n.users = nil
	if n.closeFn == nil {
		return nil
	}
	if err := n.closeFn(); err != nil {
		return fmt.Errorf("device: close %s: %w", n.what, err)
	}
	return nil
}
