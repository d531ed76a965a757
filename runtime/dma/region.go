package dma

import (
	"errors"
	"fmt"
	"math/bits"
	"unsafe"
)

// Page sizes a mapping may ask for. PageBase is the system's base page
// (unix.Getpagesize: 4 KiB on most systems, 64 KiB on some arm64 and ppc64
// kernels).
const (
	PageBase = 0
	Page2M   = 2 << 20
	Page1G   = 1 << 30
)

// Lock says what Map does when mlock fails.
type Lock int

const (
	// LockRequired (the default): Map unmaps and returns mlock's error.
	LockRequired Lock = iota
	// LockBestEffort: Map keeps the unlocked mapping; Pinned reports
	// false and LockErr the reason.
	LockBestEffort
)

// MaxBlocks bounds the allocator's bookkeeping (5 bytes per block).
const MaxBlocks = 1 << 20

// DefaultMinBlock is the smallest buffer the allocator hands out when
// Options.MinBlock is 0 (a cache line; larger for regions of more than
// MaxBlocks such blocks).
const DefaultMinBlock = 64

// Options describe a mapping.
type Options struct {
	// Size in bytes, rounded up to a multiple of the page size used.
	Size int
	// PageSize is the preferred page: PageBase (0), Page2M or Page1G.
	// Without huge pages of that size Map falls back to the next smaller
	// one, unless StrictPageSize.
	PageSize       int
	StrictPageSize bool
	// Lock: LockRequired (default) or LockBestEffort.
	Lock Lock
	// DontDump also keeps the region out of core dumps (MADV_DONTDUMP).
	DontDump bool
	// MinBlock is the allocator's smallest block: a power of two, at most
	// the base page; 0 for DefaultMinBlock.
	MinBlock int
}

// Errors of Alloc and Free (boxed once: the hot path returns them without
// allocating).
var (
	ErrClosed       = errors.New("dma: the region is closed")
	ErrNoSpace      = errors.New("dma: no free block of that size in the region")
	ErrForeign      = errors.New("dma: the buffer was not handed out by this region (or Bytes and Addr disagree)")
	ErrNotAllocated = errors.New("dma: the buffer is not allocated (freed already?)")
)

// Region is one pinned mapping and the allocator of its buffers. It owns
// the mapping: only Close unmaps it.
type Region struct {
	mem      []byte
	addr     uint64
	page     int
	pinned   bool
	lockErr  error
	pageErr  error
	minBlock int
	alloc    *buddy
	unmap    func([]byte) error
	closed   bool
	pins     []*Pin // device registrations over the region (guarded by registry.mu)
}

// Buffer is memory handed out by Region.Alloc: Bytes (capacity cut to the
// size asked) and Addr, its virtual address for an SGE.
type Buffer struct {
	Bytes []byte
	Addr  uint64

	region *Region
	tag    uint32
}

// Addr is the region's first byte's virtual address (for registering it
// as a memory region); 0 after Close.
func (r *Region) Addr() uint64 {
	if r.closed {
		return 0
	}
	return r.addr
}

// Len is the mapping's length: Options.Size rounded up to the page size.
func (r *Region) Len() int { return len(r.mem) }

// PageSize is the page size the mapping got.
func (r *Region) PageSize() int { return r.page }

// PageErr says why the preferred huge page size was not used (nil when
// it was, or when none was asked for).
func (r *Region) PageErr() error { return r.pageErr }

// Pinned reports whether mlock succeeded.
func (r *Region) Pinned() bool { return r.pinned }

// LockErr is mlock's error when Options.Lock was LockBestEffort and it
// failed; nil otherwise.
func (r *Region) LockErr() error { return r.lockErr }

// MinBlock is the allocator's smallest block: every buffer takes a power
// of two of at least this many bytes.
func (r *Region) MinBlock() int { return r.minBlock }

// Outstanding is the number of buffers handed out and not freed.
func (r *Region) Outstanding() int {
	if r.closed {
		return 0
	}
	return r.alloc.live
}

// Alloc hands out size bytes aligned to align (a power of two no larger
// than PageSize; 0 or 1 for no alignment beyond MinBlock). It takes the
// smallest power-of-two block that holds both, so the largest buffer is
// the largest power of two within Len. The contents are what the last
// user left. It allocates nothing; a full region is ErrNoSpace.
func (r *Region) Alloc(size, align int) (Buffer, error) {
	if r == nil || r.closed {
		return Buffer{}, ErrClosed
	}
	if size <= 0 || size > len(r.mem) {
		return Buffer{}, fmt.Errorf("dma: Alloc of %d bytes: the size must be from 1 to the region's %d", size, len(r.mem))
	}
	if align < 0 || align&(align-1) != 0 || align > r.page {
		return Buffer{}, fmt.Errorf("dma: Alloc alignment %d: must be a power of two no larger than the region's %d-byte page", align, r.page)
	}
	need := max(size, align, r.minBlock)
	order := uint(bits.Len(uint(need-1))) - r.alloc.minShift
	off, tag, ok := r.alloc.alloc(order)
	if !ok {
		return Buffer{}, ErrNoSpace
	}
	return Buffer{Bytes: r.mem[off : off+size : off+size], Addr: r.addr + uint64(off), region: r, tag: tag}, nil
}

// Free gives a buffer back; its bytes must no longer be used, by the
// program or the device. A buffer of another region, one freed already, or
// one whose Bytes and Addr no longer match what Alloc returned is an error
// and changes nothing.
func (r *Region) Free(b Buffer) error {
	if r == nil || r.closed {
		return ErrClosed
	}
	if b.region != r || b.Addr < r.addr || b.Addr-r.addr >= uint64(len(r.mem)) {
		return ErrForeign
	}
	off := int(b.Addr - r.addr)
	if off&(r.minBlock-1) != 0 {
		return ErrForeign
	}
	leaf := off >> r.alloc.minShift
	if leaf >= len(r.alloc.tags) { // the tail past the last whole block
		return ErrForeign
	}
	if b.tag == 0 || r.alloc.tags[leaf] != b.tag {
		return ErrNotAllocated
	}
	if len(b.Bytes) == 0 || unsafe.SliceData(b.Bytes) != &r.mem[off] || len(b.Bytes) > r.alloc.blockSize(leaf) {
		return ErrForeign
	}
	if !r.alloc.free(leaf, b.tag) {
		return ErrNotAllocated
	}
	return nil
}

// Close unmaps the region (a nil Region is closed). It is idempotent; afterwards Alloc and Free
// return ErrClosed, and buffers handed out before must not be touched.
//
// While a device registration over the region is held (a Pin: the device
// API pins a region when it registers a memory region or umem of its
// memory, and releases it when that is deregistered), Close refuses with
// an error matching ErrPinned that names the registrations, and the
// region stays open and usable; close them and Close again. It refuses
// rather than unmapping later, when the last registration goes: the
// region has one owner, who learns of a close in the wrong order where
// it is made, instead of a Close that reports success while the memory
// stays mapped and locked, and a munmap run (and its error returned) by
// whoever deregisters last.
func (r *Region) Close() error {
	if r == nil || r.closed {
		return nil
	}
	registry.mu.Lock()
	err := unregister(r)
	registry.mu.Unlock()
	if err != nil {
		return err
	}
	r.closed = true
	mem := r.mem
	r.mem, r.alloc = nil, nil
	if r.unmap == nil {
		return nil
	}
	return r.unmap(mem)
}

// newRegion sets up the allocator over a mapping; the caller unmaps mem on
// an error.
func newRegion(mem []byte, page, minBlock int, unmap func([]byte) error) (*Region, error) {
	minBlock, err := minBlockFor(len(mem), minBlock)
	if err != nil {
		return nil, err
	}
	r := &Region{mem: mem, page: page, minBlock: minBlock, unmap: unmap,
		addr:  uint64(uintptr(unsafe.Pointer(unsafe.SliceData(mem)))),
		alloc: newBuddy(len(mem)/minBlock, uint(bits.TrailingZeros(uint(minBlock))))}
	register(r)
	return r, nil
}

// minBlockFor is the allocator's smallest block for a region: the one
// asked, or DefaultMinBlock doubled until the region has at most MaxBlocks.
func minBlockFor(length, asked int) (int, error) {
	if asked == 0 {
		b := DefaultMinBlock
		for length/b > MaxBlocks {
			b *= 2
		}
		return b, nil
	}
	if n := length / asked; n > MaxBlocks {
		return 0, fmt.Errorf("dma: Options.MinBlock %d: a %d-byte region would have %d blocks, more than the allocator's %d; raise MinBlock",
			asked, length, n, MaxBlocks)
	}
	return asked, nil
}

// check validates the options that need no system call.
func (o *Options) check(basePage int) error {
	switch {
	case o.Size <= 0:
		return fmt.Errorf("dma: Options.Size %d: must be positive", o.Size)
	case o.PageSize != PageBase && o.PageSize != basePage && o.PageSize != Page2M && o.PageSize != Page1G:
		return fmt.Errorf("dma: Options.PageSize %d: want 0 (the base page, %d bytes), dma.Page2M or dma.Page1G", o.PageSize, basePage)
	case o.Lock != LockRequired && o.Lock != LockBestEffort:
		return fmt.Errorf("dma: Options.Lock %d: want dma.LockRequired or dma.LockBestEffort", o.Lock)
	case o.MinBlock < 0 || o.MinBlock&(o.MinBlock-1) != 0 || o.MinBlock > basePage:
		return fmt.Errorf("dma: Options.MinBlock %d: want 0 or a power of two no larger than the %d-byte base page", o.MinBlock, basePage)
	}
	return nil
}
