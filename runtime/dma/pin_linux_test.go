package dma

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// TestPinRefusesClose: a pinned region does not close, names its pins,
// stays usable, and closes once they are released.
func TestPinRefusesClose(t *testing.T) {
	r, err := Map(Options{Size: 1 << 16, Lock: LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := r.Alloc(4096, 64)
	if err != nil {
		t.Fatal(err)
	}
	p1, err := PinBytes(b.Bytes, "MR (registering)")
	if err != nil || p1 == nil {
		t.Fatalf("PinBytes of a region's buffer: %v, %v", p1, err)
	}
	p1.Rename("MR lkey 0x12")
	p2, err := PinBytes(b.Bytes[100:200], "umem 0x3")
	if err != nil || p2 == nil {
		t.Fatalf("PinBytes of part of a buffer: %v, %v", p2, err)
	}
	if r.Pins() != 2 {
		t.Fatalf("Pins %d, want 2", r.Pins())
	}
	err = r.Close()
	if !errors.Is(err, ErrPinned) || !strings.Contains(err.Error(), "MR lkey 0x12") || !strings.Contains(err.Error(), "umem 0x3") {
		t.Fatalf("Close of a pinned region: %v, want ErrPinned naming both registrations", err)
	}
	// Refused: still open, its memory still mapped and its allocator working.
	b.Bytes[0] = 1
	if r.Addr() == 0 {
		t.Fatal("the refused Close closed the region")
	}
	b2, err := r.Alloc(64, 0)
	if err != nil {
		t.Fatalf("Alloc after a refused Close: %v", err)
	}
	if err := r.Free(b2); err != nil {
		t.Fatal(err)
	}
	p1.Release()
	p1.Release() // idempotent: must not drop p2
	if err := r.Close(); !errors.Is(err, ErrPinned) || strings.Contains(err.Error(), "lkey") {
		t.Fatalf("Close with one pin left: %v, want ErrPinned naming only the umem", err)
	}
	p2.Release()
	if err := r.Close(); err != nil {
		t.Fatalf("Close after every pin is released: %v", err)
	}
	if r.Addr() != 0 {
		t.Fatal("Close did not close")
	}
	// A closed region is not found any more: its old buffer is nobody's.
	if p, err := PinBytes(b.Bytes, "late"); p != nil || err != nil {
		t.Fatalf("PinBytes in a closed region: %v, %v, want nil, nil", p, err)
	}
}

// TestPinForeign: memory of no region is not pinned (the caller's), and a
// slice reaching past a region is refused.
func TestPinForeign(t *testing.T) {
	heap := make([]byte, 4096)
	if p, err := PinBytes(heap, "MR"); p != nil || err != nil {
		t.Fatalf("PinBytes of Go heap memory: %v, %v, want nil, nil", p, err)
	}
	if p, err := PinBytes(nil, "MR"); p != nil || err != nil {
		t.Fatalf("PinBytes(nil): %v, %v", p, err)
	}
	var nilPin *Pin
	nilPin.Release()
	nilPin.Rename("x")
	// One page, whatever its size (64 KiB on ppc64le): the region ends
	// where the page does.
	page := os.Getpagesize()
	r, err := Map(Options{Size: page, Lock: LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := r.Alloc(page, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A slice reaching 104 bytes past the region's end, made as a bug
	// would (never touched).
	over := unsafe.Slice(&b.Bytes[page-96], 200)
	if p, err := PinBytes(over, "MR over the end"); p != nil || err == nil || !strings.Contains(err.Error(), "MR over the end") {
		t.Fatalf("PinBytes past the region's end: %v, %v, want an error naming it", p, err)
	}
	if r.Pins() != 0 {
		t.Fatalf("a refused pin counted: %d", r.Pins())
	}
}

// TestPinConcurrent pins and releases from many goroutines while the
// owner tries to close (go test -race checks the locking).
func TestPinConcurrent(t *testing.T) {
	r, err := Map(Options{Size: 1 << 16, Lock: LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Alloc(1<<12, 0)
	if err != nil {
		t.Fatal(err)
	}
	first, err := PinBytes(b.Bytes, "holder")
	if err != nil || first == nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				p, err := PinBytes(b.Bytes, "worker")
				if err != nil || p == nil {
					t.Errorf("PinBytes: %v, %v", p, err)
					return
				}
				p.Release()
			}
		}()
	}
	for i := 0; i < 50; i++ {
		if err := r.Close(); !errors.Is(err, ErrPinned) {
			t.Fatalf("Close while pinned: %v", err)
		}
	}
	wg.Wait()
	first.Release()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}
