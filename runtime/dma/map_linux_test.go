package dma

import (
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestMapBasePage(t *testing.T) {
	page := unix.Getpagesize()
	r := mapped(t, Options{Size: 10000})
	want := (10000 + page - 1) / page * page
	if r.Len() != want || r.PageSize() != page || !r.Pinned() || r.LockErr() != nil {
		t.Fatalf("Len %d (want %d), PageSize %d (want %d), Pinned %v, LockErr %v", r.Len(), want, r.PageSize(), page, r.Pinned(), r.LockErr())
	}
	if r.Addr()%uint64(page) != 0 {
		t.Errorf("address %#x is not page-aligned", r.Addr())
	}
	// A buffer is a power-of-two block: the 3-page region gives three
	// pages, at consecutive addresses from the region's, and no more.
	for i := 0; i < want/page; i++ {
		b, err := r.Alloc(page, 0)
		if err != nil {
			t.Fatal(err)
		}
		for j := range b.Bytes {
			b.Bytes[j] = byte(j)
		}
		if b.Addr != r.Addr()+uint64(i*page) {
			t.Errorf("page %d is at %#x, the region at %#x", i, b.Addr, r.Addr())
		}
	}
	if _, err := r.Alloc(1, 0); !errors.Is(err, ErrNoSpace) {
		t.Errorf("a full region: %v", err)
	}
}

// TestSmapsFlags: the kernel shows the mapping locked (lo), not copied on
// fork (dc: MADV_DONTFORK) and, when asked, not dumped (dd: MADV_DONTDUMP).
func TestSmapsFlags(t *testing.T) {
	plain := mapped(t, Options{Size: 1 << 16})
	nodump := mapped(t, Options{Size: 1 << 16, DontDump: true})
	for _, c := range []struct {
		r    *Region
		want map[string]bool
	}{
		{plain, map[string]bool{"lo": true, "dc": true, "dd": false}},
		{nodump, map[string]bool{"lo": true, "dc": true, "dd": true}},
	} {
		s, ok := smapsAt(t, c.r.Addr())
		if !ok || s.flags == nil {
			t.Fatalf("no smaps entry with VmFlags at %#x", c.r.Addr())
		}
		for flag, want := range c.want {
			if flag != "lo" && emulated() {
				t.Logf("qemu-user drops madvise: %s not checked (VmFlags %v)", flag, s.flags)
				continue
			}
			if s.flags[flag] != want {
				t.Errorf("DontDump %v: VmFlags %v: %s is %v, want %v", c.r == nodump, s.flags, flag, s.flags[flag], want)
			}
		}
		if !emulated() && s.pageSize != c.r.PageSize() {
			t.Errorf("smaps says %d-byte pages, the region %d", s.pageSize, c.r.PageSize())
		}
	}
}

// freeHuge is the number of free huge pages of the size (0 without a pool).
func freeHuge(page int) int {
	b, err := os.ReadFile("/sys/kernel/mm/hugepages/hugepages-" + strconv.Itoa(page/1024) + "kB/free_hugepages")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// TestHugePages maps on huge pages when the kernel has them free, and
// otherwise checks that a strict request fails clearly and the fallback
// reports the smaller page it got; smaps confirms the page size.
func TestHugePages(t *testing.T) {
	base := unix.Getpagesize()
	for _, c := range []struct {
		pref, size int
		chain      []int
	}{
		{Page2M, 3 << 20, []int{Page2M, base}},
		{Page1G, 1 << 20, []int{Page1G, Page2M, base}},
	} {
		// The page the kernel can give: the first with enough free pages.
		want := base
		for _, p := range c.chain[:len(c.chain)-1] {
			if !emulated() && freeHuge(p)*p >= (c.size+p-1)/p*p {
				want = p
				break
			}
		}
		t.Logf("preferring %s pages: %d free; expecting %s pages", sizeName(c.pref), freeHuge(c.pref), sizeName(want))
		strict, err := Map(Options{Size: c.size, PageSize: c.pref, StrictPageSize: true})
		if want == c.pref {
			if err != nil {
				t.Fatalf("%d free %s pages, yet: %v", freeHuge(c.pref), sizeName(c.pref), err)
			}
			checkPage(t, strict, c.pref)
			strict.Close()
		} else {
			if err == nil {
				strict.Close()
				t.Fatalf("a strict %s mapping succeeded, but no such pages are free", sizeName(c.pref))
			}
			msg := err.Error()
			for _, part := range []string{sizeName(c.pref) + " pages", "nr_hugepages", "StrictPageSize"} {
				if !strings.Contains(msg, part) {
					t.Errorf("the strict error does not name %q: %s", part, msg)
				}
			}
		}
		r, err := Map(Options{Size: c.size, PageSize: c.pref})
		if err != nil {
			t.Fatalf("with fallback: %v", err)
		}
		checkPage(t, r, want)
		if (r.PageErr() == nil) != (want == c.pref) || want != c.pref && !strings.Contains(r.PageErr().Error(), sizeName(c.pref)+" pages: ") {
			t.Errorf("got %s pages; PageErr: %v", sizeName(r.PageSize()), r.PageErr())
		}
		t.Logf("PageErr: %v", r.PageErr())
		r.Close()
	}
}

func checkPage(t *testing.T, r *Region, page int) {
	t.Helper()
	if r.PageSize() != page || r.Len()%page != 0 || r.Addr()%uint64(page) != 0 {
		t.Errorf("PageSize %d (want %d), Len %d, Addr %#x", r.PageSize(), page, r.Len(), r.Addr())
	}
	s, ok := smapsAt(t, r.Addr())
	if !ok {
		t.Fatalf("no smaps entry at %#x", r.Addr())
	}
	if !emulated() && s.pageSize != page {
		t.Errorf("the region reports %d-byte pages, smaps %d", page, s.pageSize)
	}
}

func TestOptionsErrors(t *testing.T) {
	page := unix.Getpagesize()
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{}, "Options.Size 0"},
		{Options{Size: -1}, "Options.Size -1"},
		{Options{Size: math.MinInt}, "must be positive"},
		{Options{Size: math.MaxInt}, "overflows"},
		{Options{Size: math.MaxInt - page + 2}, "overflows"},
		{Options{Size: math.MaxInt, PageSize: Page1G, StrictPageSize: true}, "overflows"},
		{Options{Size: 1, PageSize: 12345}, "Options.PageSize 12345"},
		{Options{Size: 1, PageSize: -Page2M}, "Options.PageSize"},
		{Options{Size: 1, Lock: 7}, "Options.Lock 7"},
		{Options{Size: 1, MinBlock: 3}, "Options.MinBlock 3"},
		{Options{Size: 1, MinBlock: -64}, "Options.MinBlock -64"},
		{Options{Size: 1, MinBlock: 2 * page}, "no larger than"},
		{Options{Size: 8 << 20, MinBlock: 1, Lock: LockBestEffort}, "raise MinBlock"},
	} {
		r, err := Map(c.o)
		if err == nil {
			r.Close()
			t.Errorf("%+v: no error", c.o)
			continue
		}
		if !strings.HasPrefix(err.Error(), "dma: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}

func TestMinBlockFor(t *testing.T) {
	for _, c := range []struct{ length, asked, want int }{
		{4096, 0, 64}, {64 << 20, 0, 64}, {64<<20 + 4096, 0, 128}, {1 << 30, 0, 1024}, {4096, 8, 8}, {8 << 20, 8, 8},
	} {
		got, err := minBlockFor(c.length, c.asked)
		if err != nil || got != c.want || c.length/got > MaxBlocks {
			t.Errorf("minBlockFor(%d, %d) = %d, %v; want %d", c.length, c.asked, got, err, c.want)
		}
	}
	if _, err := minBlockFor(16<<20, 8); err == nil {
		t.Error("2^21 blocks accepted")
	}
}

func TestClose(t *testing.T) {
	r, err := Map(Options{Size: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	addr := r.Addr()
	b, err := r.Alloc(100, 0)
	if err != nil {
		t.Fatal(err)
	}
	marker := []byte("dma TestClose: this region's own bytes")
	copy(b.Bytes, marker)
	// Where /proc/self/mem does not show the region (a sandbox's /proc),
	// the bytes' check could not fail: only the flags' check runs.
	bytesSeen := sameBytesAt(b.Addr, marker)
	if !bytesSeen {
		t.Log("/proc/self/mem does not show the region's bytes: checking its flags only")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// The address may be mapped again at once (the Go runtime's own
	// mmap(NULL, ...) often lands in the hole): what must be gone is
	// this mapping, its bytes and its flags (locked, not inherited).
	if s, ok := smapsAt(t, addr); ok && (s.flags["dc"] || s.flags["lo"]) {
		t.Errorf("a locked or don't-fork mapping is still at %#x after Close: %v", addr, s.flags)
	}
	if bytesSeen && sameBytesAt(b.Addr, marker) {
		t.Error("the region's bytes are still mapped after Close")
	}
	if _, err := r.Alloc(64, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Alloc after Close: %v", err)
	}
	if err := r.Free(b); !errors.Is(err, ErrClosed) {
		t.Errorf("Free after Close: %v", err)
	}
	if r.Addr() != 0 || r.Len() != 0 || r.Outstanding() != 0 {
		t.Errorf("after Close: Addr %#x, Len %d, Outstanding %d", r.Addr(), r.Len(), r.Outstanding())
	}
}
