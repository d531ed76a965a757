package dma

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// emulated reports whether the test runs under qemu-user, which ignores
// MADV_DONTFORK and MADV_DONTDUMP (its madvise is a hint it drops) and
// fakes the page sizes in smaps; mlock it passes to the host kernel.
func emulated() bool {
	if comm, err := os.ReadFile("/proc/self/comm"); err == nil && bytes.HasPrefix(comm, []byte("qemu-")) {
		return true // go test -exec qemu-<arch>-static
	}
	arch, err := os.ReadFile("/proc/sys/kernel/arch") // the host's; uname gives the guest's under qemu
	var u unix.Utsname
	if err != nil || unix.Uname(&u) != nil {
		return false
	}
	return strings.TrimSpace(string(arch)) != unix.ByteSliceToString(u.Machine[:])
}

// smaps is the /proc/self/smaps entry of the mapping that holds addr (the
// kernel merges neighbours with the same flags): its VmFlags and
// KernelPageSize and Rss (bytes); ok false when there is none.
type smaps struct {
	flags    map[string]bool
	pageSize int
	rss      int // bytes resident
}

func smapsAt(t *testing.T, addr uint64) (smaps, bool) {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatalf("reading smaps: %v", err)
	}
	var s smaps
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(f[0], "-"); ok && !strings.HasSuffix(f[0], ":") { // a mapping's first line
			if in {
				break
			}
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && start <= addr && addr < end
			continue
		}
		if !in {
			continue
		}
		switch f[0] {
		case "VmFlags:":
			s.flags = map[string]bool{}
			for _, fl := range f[1:] {
				s.flags[fl] = true
			}
		case "KernelPageSize:", "Rss:":
			kb, _ := strconv.Atoi(f[1])
			if f[0] == "Rss:" {
				s.rss = kb * 1024
			} else {
				s.pageSize = kb * 1024
			}
		}
	}
	return s, in
}

// sameBytesAt reports whether the process's memory at addr holds want,
// read through /proc/self/mem, which fails (EIO) rather than faults where
// nothing is mapped.
func sameBytesAt(addr uint64, want []byte) bool {
	f, err := os.Open("/proc/self/mem")
	if err != nil {
		return false
	}
	defer f.Close()
	got := make([]byte, len(want))
	n, err := f.ReadAt(got, int64(addr))
	return err == nil && n == len(want) && bytes.Equal(got, want)
}

// mapped maps a small region or fails the test; the test closes it.
func mapped(t testing.TB, o Options) *Region {
	t.Helper()
	r, err := Map(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
