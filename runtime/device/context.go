package device

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
)

// Context is an open device.
type Context struct {
	name string
	b    BackendContext
	info Info

	mu   sync.Mutex // creating and closing objects
	seq  uint64
	root *node
	// The open CQs and signature mkeys: every CQ's poller looks up every
	// signature mkey of the context (libmlx5's context-wide mkey table).
	cqs  []*CQ
	sigs []*Mkey

	hca hcaCache // HCACaps, read once
}

func newContext(name string, b BackendContext) *Context {
	c := &Context{name: name, b: b, info: b.Info()}
	c.root = c.add("context "+fmt.Sprintf("%q", name), b.Close)
	return c
}

// Name returns the name the context was opened with.
func (c *Context) Name() string { return c.name }

// Info returns the device's name (as the backend reports it), GUID and
// capabilities.
func (c *Context) Info() Info { return c.info }

// Caps returns the device's capabilities.
func (c *Context) Caps() Caps { return c.info.Caps }

// Port returns port 1's state and address.
func (c *Context) Port() (Port, error) {
	if err := c.root.check("Port"); err != nil {
		return Port{}, err
	}
	return c.b.Port()
}

// Close closes every object of the context, newest first, then the
// context. It is idempotent.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return closeNode(c.root)
}

// create runs build under the context's lock, after checking that the
// parents are open, and registers the object it returns.
func (c *Context) create(op string, parents []*node, build func() (what string, closeFn func() error, err error)) (*node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range parents {
		if err := p.check(op); err != nil {
			return nil, err
		}
	}
	what, closeFn, err := build()
	if err != nil {
		return nil, fmt.Errorf("device: %s: %w", op, err)
	}
	return c.add(what, closeFn, parents...), nil
}

// AllocPD allocates a protection domain.
func (c *Context) AllocPD() (*PD, error) {
	pd := &PD{c: c}
	n, err := c.create("AllocPD", []*node{c.root}, func() (string, func() error, error) {
		b, err := c.b.AllocPD()
		if err != nil {
			return "", nil, err
		}
		pd.b = b
		return "PD", b.Close, nil
	})
	if err != nil {
		return nil, err
	}
	pd.n = n
	return pd, nil
}

// RegUmem registers buf as a devx umem (mlx5dv_devx_umem_reg) until
// Umem.Close or the context's Close. buf must be memory the collector
// does not move and that stays mapped until then: the device reads and
// writes it behind Go's back. A runtime/dma buffer is held so: its
// region refuses to close while the umem is registered (dma.PinBytes).
// Other memory (C memory) is the caller's to keep mapped; the backend
// keeps buf reachable, so that Go memory is not collected under the
// device either.
func (c *Context) RegUmem(buf []byte, access mlx.AccessFlags) (*Umem, error) {
	if err := mlx.ValidateArgsDevxUmemReg(access); err != nil {
		return nil, fmt.Errorf("device: RegUmem: %w", named(err))
	}
	if len(buf) == 0 {
		return nil, fmt.Errorf("device: RegUmem: %w", cfgErr("buf", nil, "empty"))
	}
	u := &Umem{c: c}
	n, err := c.create("RegUmem", []*node{c.root}, func() (string, func() error, error) {
		pin, err := dma.PinBytes(buf, fmt.Sprintf("umem of %q (registering)", c.name))
		if err != nil {
			return "", nil, err
		}
		b, err := c.b.RegUmem(buf, access)
		if err != nil {
			pin.Release()
			return "", nil, err
		}
		u.id = b.ID()
		what := fmt.Sprintf("umem %#x", u.id)
		pin.Rename(fmt.Sprintf("%s of %q", what, c.name))
		return what, unpinAfter(b.Close, pin), nil
	})
	if err != nil {
		return nil, err
	}
	u.n = n
	return u, nil
}

// unpinAfter is the close of a registration over pinned memory: the
// backend's deregistration, then the pin's release. A deregistration that
// failed leaves the memory registered with the device, so the pin stays
// and the region never closes: a leak, where releasing it would let the
// region unmap memory the device may still write.
func unpinAfter(closeFn func() error, pin *dma.Pin) func() error {
	return func() error {
		if err := closeFn(); err != nil {
			return err
		}
		pin.Release()
		return nil
	}
}

// AsyncEvent waits for the device's next asynchronous event (port
// changes, QP and CQ errors) until ctx is done. The event is acknowledged.
// AsyncEvent blocks: it ends with an error wrapping ErrClosed as soon as
// the context is closed from another goroutine, and with ctx's error
// (naming the context) when ctx is done. With an error the event is the
// zero AsyncEvent, which prints as "no event" (AsyncEvent.String).
func (c *Context) AsyncEvent(ctx context.Context) (AsyncEvent, error) {
	if ctx == nil {
		return AsyncEvent{}, errors.New("device: AsyncEvent: ctx is nil")
	}
	if err := c.root.enter("AsyncEvent"); err != nil {
		return AsyncEvent{}, err
	}
	defer c.root.leave()
	wctx, stop := c.root.watch(ctx)
	defer stop()
	ev, err := c.b.AsyncEvent(wctx)
	if err != nil {
		return AsyncEvent{}, c.root.waitErr(ctx, "AsyncEvent", err)
	}
	ev.ok = true
	return ev, nil
}

// PD is a protection domain.
type PD struct {
	c *Context
	b BackendPD
	n *node
}

// Close closes the PD's MRs, QPs, mkeys and DEKs, then the PD.
func (pd *PD) Close() error {
	pd.c.mu.Lock()
	defer pd.c.mu.Unlock()
	return closeNode(pd.n)
}

// MR is a registered memory region.
type MR struct {
	LKey, RKey uint32
	Addr       uint64 // the address of its first byte: work requests name it
	buf        []byte
	n          *node
	c          *Context
}

// Bytes returns the registered memory.
func (m *MR) Bytes() []byte { return m.buf }

// Len returns the registered length.
func (m *MR) Len() int { return len(m.buf) }

// Close deregisters the MR: its memory is the program's again, and a
// runtime/dma region holding it may close. It is idempotent.
func (m *MR) Close() error {
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	return closeNode(m.n)
}

// RegMR registers buf with access until MR.Close (or the PD's or the
// context's Close). buf must be memory the collector does not move and
// that stays mapped while the MR is open: the device reads and writes it
// behind Go's back. A runtime/dma buffer is held so: its region refuses
// to close while the MR is registered (dma.PinBytes). Other memory (C
// memory) is the caller's to keep mapped until the MR is closed; the
// backend keeps buf reachable, so that Go memory is not collected under
// the device either.
func (pd *PD) RegMR(buf []byte, access mlx.AccessFlags) (*MR, error) {
	if err := mlx.ValidateArgsRegMR(access); err != nil {
		return nil, fmt.Errorf("device: RegMR: %w", named(err))
	}
	if len(buf) == 0 {
		return nil, fmt.Errorf("device: RegMR: %w", cfgErr("buf", nil, "empty"))
	}
	mr := &MR{buf: buf, c: pd.c, Addr: uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))}
	n, err := pd.c.create("RegMR", []*node{pd.n}, func() (string, func() error, error) {
		// Pinned before the device sees buf, so that the region cannot
		// close between the registration and the pin.
		pin, err := dma.PinBytes(buf, fmt.Sprintf("MR of %q (registering)", pd.c.name))
		if err != nil {
			return "", nil, err
		}
		b, err := pd.b.RegMR(buf, access)
		if err != nil {
			pin.Release()
			return "", nil, err
		}
		mr.LKey, mr.RKey = b.Keys()
		what := fmt.Sprintf("MR lkey %#x", mr.LKey)
		pin.Rename(fmt.Sprintf("%s of %q", what, pd.c.name))
		return what, unpinAfter(b.Close, pin), nil
	})
	if err != nil {
		return nil, err
	}
	mr.n = n
	return mr, nil
}

// Umem is a devx umem.
type Umem struct {
	id uint32
	n  *node
	c  *Context
}

// ID returns the umem's id.
func (u *Umem) ID() uint32 { return u.id }

// Close deregisters the umem (mlx5dv_devx_umem_dereg): its memory is the
// program's again, and a runtime/dma region holding it may close. It is
// idempotent; the context's Close closes an open umem too.
func (u *Umem) Close() error {
	u.c.mu.Lock()
	defer u.c.mu.Unlock()
	return closeNode(u.n)
}
