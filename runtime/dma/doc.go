// Package dma is memory a device may read and write: pinned anonymous
// mappings, and an allocator of data buffers out of them that hands out the
// bytes and the address a scatter/gather entry (SGE) names.
//
// Map makes a Region: an anonymous private mapping, populated at once
// (MAP_POPULATE), on 2 MiB or 1 GiB huge pages when asked and available
// (falling back to the next smaller size unless StrictPageSize; PageSize
// says what was used and PageErr why a larger one was not), locked in RAM
// with mlock (VmFlags "lo" in /proc/self/smaps), and kept out of child
// processes with MADV_DONTFORK (VmFlags "dc"; a forked child would share the
// pages copy-on-write, and the parent's next write would move them away
// from under the device). Locking is required by default: when mlock fails
// Map returns an error that names RLIMIT_MEMLOCK (`ulimit -l`), its current
// value and the size asked; Options.Lock = LockBestEffort keeps the
// mapping instead, and Pinned and LockErr report the outcome.
//
// Region.Alloc hands out Buffers: Bytes is the memory, Addr its virtual
// address for an SGE (the region must be registered as a memory region for
// the device to accept it). The allocator is a binary buddy system over
// blocks of MinBlock bytes: a request takes the smallest power-of-two block
// that holds its size and alignment, the lowest-addressed one free; Free
// merges a block with its free buddy again. Both are O(log n) and allocate
// nothing; the bookkeeping (a tree of one byte per block and a tag of four
// bytes per block) is made by Map. Free recognises a buffer it did not hand
// out, or one freed already, and returns an error (ErrForeign,
// ErrNotAllocated) without touching the allocator.
//
// The device's memory is never Go heap memory: the collector neither moves
// nor frees a mapping, and only Close unmaps it. Close is idempotent; after
// it Alloc and Free return ErrClosed. Buffers handed out before Close point
// into unmapped memory afterwards and must not be used: touching them
// faults. A device must not write a region after it is unmapped either:
// PinBytes, called by the device API when it registers memory of a region
// (device.PD.RegMR, device.Context.RegUmem), holds the region open until
// the registration is closed, and Close refuses (ErrPinned, naming the
// registrations) meanwhile. Memory that is no region's (C memory) is not
// tracked: keeping it mapped while registered is its owner's business.
// Bytes has its capacity cut to its length so that append cannot
// write past it (append copies to the Go heap instead, which the device
// never sees). A Region is not safe for concurrent use; the hot loop that
// posts and polls owns it, or callers guard it.
//
// Linux only: on other systems Map returns an error. The system calls are
// golang.org/x/sys/unix's.
package dma
