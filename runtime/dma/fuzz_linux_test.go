package dma

import (
	"errors"
	"testing"
	"unsafe"
)

// FuzzAllocFree runs arbitrary sequences of Alloc, Free and bad frees on
// one region and checks after each step that live buffers lie inside the
// region, respect their alignment, never overlap (their blocks are marked
// in an ownership map, and their bytes keep the pattern written into
// them), and that freeing everything gives the whole region back.
func FuzzAllocFree(f *testing.F) {
	f.Add([]byte{0, 10, 0, 200, 2, 0, 3, 0, 1, 255, 2, 1})
	f.Add([]byte{4, 1, 8, 2, 12, 3, 16, 4, 20, 5, 2, 2, 2, 0, 3, 1, 3, 0})
	f.Add([]byte{1, 255, 1, 255, 1, 255, 1, 255, 1, 255, 2, 3, 2, 1, 0, 17, 2, 0})
	r, err := Map(Options{Size: 1 << 16, MinBlock: 16, Lock: LockBestEffort})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	f.Fuzz(func(t *testing.T, ops []byte) {
		owner := make([]int, r.Len()/r.MinBlock()) // block -> 1 + index in live, 0 free
		var live, stale []Buffer
		var pattern []byte
		seq := byte(0)
		defer func() { // leave the region empty for the next input
			for _, b := range live {
				if err := r.Free(b); err != nil {
					t.Fatalf("freeing a live buffer: %v", err)
				}
			}
		}()
		for len(ops) >= 2 {
			op, arg := ops[0], int(ops[1])
			ops = ops[2:]
			switch op % 4 {
			case 0, 1: // Alloc: sizes up to 16 KiB, alignments up to 2^15
				size := 1 + arg*int(op/4+1)%(16<<10)
				align := 1 << (op / 4 % 16)
				b, err := r.Alloc(size, align)
				if align > r.PageSize() {
					if err == nil {
						t.Fatalf("Alloc(%d, %d) beyond the %d-byte page passed", size, align, r.PageSize())
					}
					continue
				}
				if errors.Is(err, ErrNoSpace) {
					continue
				}
				if err != nil {
					t.Fatalf("Alloc(%d, %d): %v", size, align, err)
				}
				checkBuffer(t, r, b, size, align)
				off := int(b.Addr-r.Addr()) / r.MinBlock()
				for i := off; i < off+r.alloc.blockSize(off)/r.MinBlock(); i++ {
					if owner[i] != 0 {
						t.Fatalf("Alloc(%d, %d) at %#x overlaps buffer %d", size, align, b.Addr, owner[i]-1)
					}
					owner[i] = len(live) + 1
				}
				seq++
				live = append(live, b)
				pattern = append(pattern, seq)
				for i := range b.Bytes {
					b.Bytes[i] = seq
				}
			case 2: // Free a live buffer
				if len(live) == 0 {
					continue
				}
				i := arg % len(live)
				b := live[i]
				checkPattern(t, b, pattern[i])
				off := int(b.Addr-r.Addr()) / r.MinBlock()
				for j := off; j < off+r.alloc.blockSize(off)/r.MinBlock(); j++ {
					owner[j] = 0
				}
				if err := r.Free(b); err != nil {
					t.Fatalf("Free of a live buffer: %v", err)
				}
				last := len(live) - 1
				live[i], pattern[i] = live[last], pattern[last]
				live, pattern = live[:last], pattern[:last]
				renumber(owner, r, live)
				stale = append(stale, b)
			case 3: // Free a buffer freed already
				if len(stale) == 0 {
					continue
				}
				n := r.Outstanding()
				if err := r.Free(stale[arg%len(stale)]); !errors.Is(err, ErrNotAllocated) {
					t.Fatalf("double free: %v", err)
				}
				if r.Outstanding() != n {
					t.Fatal("a double free changed the count")
				}
			}
		}
		for i, b := range live {
			checkPattern(t, b, pattern[i])
		}
		for _, b := range live {
			if err := r.Free(b); err != nil {
				t.Fatal(err)
			}
		}
		live = nil
		whole, err := r.Alloc(r.Len(), 0)
		if err != nil {
			t.Fatalf("the whole region after freeing everything: %v", err)
		}
		if err := r.Free(whole); err != nil {
			t.Fatal(err)
		}
	})
}

func checkBuffer(t *testing.T, r *Region, b Buffer, size, align int) {
	t.Helper()
	if b.Addr < r.Addr() || b.Addr+uint64(size) > r.Addr()+uint64(r.Len()) ||
		b.Addr%uint64(align) != 0 || len(b.Bytes) != size || cap(b.Bytes) != size ||
		uintptr(unsafe.Pointer(&b.Bytes[0])) != uintptr(b.Addr) {
		t.Fatalf("Alloc(%d, %d): Addr %#x (region %#x, %d bytes), len %d, cap %d",
			size, align, b.Addr, r.Addr(), r.Len(), len(b.Bytes), cap(b.Bytes))
	}
}

func checkPattern(t *testing.T, b Buffer, p byte) {
	t.Helper()
	for i, c := range b.Bytes {
		if c != p {
			t.Fatalf("buffer at %#x: byte %d is %d, want %d: another buffer wrote it", b.Addr, i, c, p)
		}
	}
}

// renumber rewrites the ownership map after live was reordered.
func renumber(owner []int, r *Region, live []Buffer) {
	clear(owner)
	for k, b := range live {
		off := int(b.Addr-r.Addr()) / r.MinBlock()
		for i := off; i < off+r.alloc.blockSize(off)/r.MinBlock(); i++ {
			owner[i] = k + 1
		}
	}
}
