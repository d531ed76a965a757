package dma

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// ErrPinned is the error of Close of a region a device still has
// registered memory of (a Pin is held): unmapping it would let the device
// write into whatever the address space puts there next, and the program
// fault on its own buffers.
var ErrPinned = errors.New("dma: the region is still registered with a device")

// registry holds the open regions, so that code above this package (the
// device API: dma ranks below it and must not import it) can find the
// region a buffer belongs to and pin it while a device registration over
// the buffer lives. It has its own lock: a Region is used by one
// goroutine, but devices register and deregister memory from others.
var registry struct {
	mu      sync.Mutex
	regions []span
}

// span is an open region's address range; [start, end).
type span struct {
	start, end uint64
	r          *Region
}

// register adds a new region to the registry.
func register(r *Region) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.regions = append(registry.regions, span{start: r.addr, end: r.addr + uint64(len(r.mem)), r: r})
}

// unregister removes r from the registry unless it is pinned; it returns
// ErrPinned (naming the holders) then. The caller holds registry.mu.
func unregister(r *Region) error {
	if len(r.pins) > 0 {
		names := make([]string, len(r.pins))
		for i, p := range r.pins {
			names[i] = p.what
		}
		return fmt.Errorf("%w: close of the region at %#x: deregister first: %s", ErrPinned, r.addr, strings.Join(names, ", "))
	}
	for i, s := range registry.regions {
		if s.r == r {
			registry.regions = append(registry.regions[:i], registry.regions[i+1:]...)
			break
		}
	}
	return nil
}

// Pin is one device registration (a memory region, a umem) over memory
// of a Region: while any Pin of a region is held, the region's Close
// refuses with ErrPinned. Its methods are safe for concurrent use, with
// each other and with the region's.
type Pin struct {
	r    *Region
	what string
}

// PinBytes pins the region that holds buf, for a device registration
// named what ("MR lkey 0x12 of sim:a"): until Release, the region does
// not close. buf that overlaps no open region (C memory, the Go heap) is
// not this package's: PinBytes returns a nil Pin and no error, and
// keeping that memory valid is the caller's business. buf that starts in
// a region and ends past it is an error (no Buffer of a region does).
func PinBytes(buf []byte, what string) (*Pin, error) {
	if len(buf) == 0 {
		return nil, nil
	}
	start := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
	end := start + uint64(len(buf))
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, s := range registry.regions {
		if end <= s.start || start >= s.end {
			continue
		}
		if start < s.start || end > s.end {
			return nil, fmt.Errorf("dma: %s: the %d bytes at %#x reach past the region at %#x (%d bytes)",
				what, len(buf), start, s.start, s.end-s.start)
		}
		p := &Pin{r: s.r, what: what}
		s.r.pins = append(s.r.pins, p)
		return p, nil
	}
	return nil, nil
}

// Rename changes the name Close's error gives the registration (the
// device learns an MR's key only after it registered it, while the pin
// must be held before). A nil Pin does nothing.
func (p *Pin) Rename(what string) {
	if p == nil {
		return
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	p.what = what
}

// Release ends the registration: the region may close once no other Pin
// of it is held. Releasing a nil Pin, or one released already, does
// nothing.
func (p *Pin) Release() {
	if p == nil {
		return
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if p.r == nil {
		return
	}
	pins := p.r.pins
	for i, q := range pins {
		if q == p {
			p.r.pins = append(pins[:i], pins[i+1:]...)
			break
		}
	}
	p.r = nil
}

// Pins is the number of registrations that hold the region open.
func (r *Region) Pins() int {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return len(r.pins)
}
