package dma

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestAllocErrors(t *testing.T) {
	r := mapped(t, Options{Size: 1 << 16})
	page := r.PageSize()
	for _, c := range []struct {
		size, align int
		want        string
	}{
		{0, 0, "Alloc of 0 bytes"}, {-1, 0, "Alloc of -1 bytes"}, {math.MinInt, 0, "must be from 1"},
		{r.Len() + 1, 0, "region's"}, {math.MaxInt, 0, "region's"},
		{64, 3, "alignment 3"}, {64, -8, "alignment -8"}, {64, math.MinInt, "power of two"},
		{64, 2 * page, "no larger than"}, {64, math.MaxInt, "power of two"},
	} {
		if _, err := r.Alloc(c.size, c.align); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Alloc(%d, %d): %v, want %q", c.size, c.align, err, c.want)
		}
	}
	if r.Outstanding() != 0 {
		t.Errorf("%d buffers outstanding after errors", r.Outstanding())
	}
}

// TestFreeErrors: a buffer Free cannot account for is an error and
// changes nothing.
func TestFreeErrors(t *testing.T) {
	r := mapped(t, Options{Size: 1 << 16})
	other := mapped(t, Options{Size: 1 << 16})
	a, _ := r.Alloc(100, 0)
	if err := r.Free(a); err != nil {
		t.Fatal(err)
	}
	b, _ := r.Alloc(100, 0) // the same block again
	if b.Addr != a.Addr {
		t.Fatalf("the freed block was not reused: %#x, %#x", a.Addr, b.Addr)
	}
	foreign, _ := other.Alloc(100, 0)
	heap := b
	heap.Bytes = make([]byte, 100)
	shifted := b
	shifted.Bytes = b.Bytes[1:]
	moved := b
	moved.Addr += 64
	grown := b
	grown.Bytes = unsafe.Slice(&b.Bytes[0], r.MinBlock()*4)
	for name, c := range map[string]struct {
		buf  Buffer
		want error
	}{
		"double free (the block reused since)": {a, ErrNotAllocated},
		"another region's buffer":              {foreign, ErrForeign},
		"the zero Buffer":                      {Buffer{}, ErrForeign},
		"Bytes from the Go heap":               {heap, ErrForeign},
		"Bytes resliced":                       {shifted, ErrForeign},
		"Addr moved":                           {moved, ErrNotAllocated},
		"Bytes past the block":                 {grown, ErrForeign},
	} {
		if err := r.Free(c.buf); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if r.Outstanding() != 1 {
		t.Fatalf("%d buffers outstanding, want 1", r.Outstanding())
	}
	if err := r.Free(b); err != nil {
		t.Errorf("the live buffer: %v", err)
	}
	if err := r.Free(b); !errors.Is(err, ErrNotAllocated) {
		t.Errorf("double free: %v", err)
	}
}

func TestAllocAlignment(t *testing.T) {
	r := mapped(t, Options{Size: 1 << 18, MinBlock: 8})
	for align := 1; align <= r.PageSize(); align *= 2 {
		for _, size := range []int{1, 7, 100, 4000} {
			b, err := r.Alloc(size, align)
			if err != nil {
				t.Fatal(err)
			}
			if b.Addr%uint64(align) != 0 || len(b.Bytes) != size || cap(b.Bytes) != size ||
				uintptr(unsafe.Pointer(&b.Bytes[0])) != uintptr(b.Addr) {
				t.Errorf("Alloc(%d, %d): Addr %#x, len %d, cap %d", size, align, b.Addr, len(b.Bytes), cap(b.Bytes))
			}
			if align == 1 { // keep one live so that the next is not at the region's start
				continue
			}
			if err := r.Free(b); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestCoalescing fills a region with the smallest blocks, frees them in a
// random order, and then gets the whole region as one buffer.
func TestCoalescing(t *testing.T) {
	r := mapped(t, Options{Size: 1 << 16})
	var bufs []Buffer
	for len(bufs) <= r.Len()/r.MinBlock() { // bounded: one more than fits
		b, err := r.Alloc(1, 0)
		if errors.Is(err, ErrNoSpace) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
	}
	if len(bufs) != r.Len()/r.MinBlock() {
		t.Fatalf("%d blocks of %d bytes in %d bytes", len(bufs), r.MinBlock(), r.Len())
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(bufs), func(i, j int) { bufs[i], bufs[j] = bufs[j], bufs[i] })
	if _, err := r.Alloc(1, 0); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("a full region gave a block: %v", err)
	}
	for _, b := range bufs {
		if err := r.Free(b); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := r.Alloc(r.Len(), r.PageSize())
	if err != nil || whole.Addr != r.Addr() {
		t.Fatalf("the whole region after freeing everything: %v", err)
	}
}

// A region that is not a power of two of blocks hands out exactly its
// blocks and nothing past its end.
func TestOddRegion(t *testing.T) {
	page := unix.Getpagesize()
	r := mapped(t, Options{Size: 5 * page})
	end := r.Addr() + uint64(r.Len())
	for _, size := range []int{page, r.MinBlock()} {
		var bufs []Buffer
		for len(bufs) <= r.Len()/size { // bounded: one more than fits
			b, err := r.Alloc(size, 0)
			if err != nil {
				break
			}
			if b.Addr+uint64(size) > end {
				t.Fatalf("a %d-byte buffer at %#x ends past the region's end %#x", size, b.Addr, end)
			}
			bufs = append(bufs, b)
		}
		if len(bufs) != r.Len()/size {
			t.Errorf("%d buffers of %d bytes in %d bytes", len(bufs), size, r.Len())
		}
		for _, b := range bufs {
			if err := r.Free(b); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestAllocFreeNoAllocs: the allocator's hot path allocates nothing, its
// errors included.
func TestAllocFreeNoAllocs(t *testing.T) {
	r := mapped(t, Options{Size: 1 << 16})
	keep, _ := r.Alloc(100, 0)
	n := testing.AllocsPerRun(1000, func() {
		b, err := r.Alloc(2048, 64)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Free(b); err != nil {
			t.Fatal(err)
		}
		if r.Free(b) == nil || r.Free(Buffer{}) == nil {
			t.Fatal("a bad free passed")
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per Alloc and Free", n)
	}
	r.Free(keep)
}

// BenchmarkAllocFree: one Alloc and one Free of 2 KiB with 64 other
// buffers live, in regions of 64 KiB, 1 MiB and 64 MiB (trees of 10, 14
// and 20 levels of 64-byte blocks): each walks the tree once down and up.
func BenchmarkAllocFree(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20, 64 << 20} {
		b.Run(sizeName(size), func(b *testing.B) {
			r := mapped(b, Options{Size: size, Lock: LockBestEffort})
			for i := 0; i < 64; i++ {
				r.Alloc(64<<(i%4), 0)
			}
			b.ReportAllocs()
			for b.Loop() {
				buf, err := r.Alloc(2048, 0)
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Free(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestNilRegion(t *testing.T) {
	var r *Region
	if _, err := r.Alloc(64, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Alloc: %v", err)
	}
	if err := r.Free(Buffer{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Free: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
