//go:build linux

package dma

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Map maps, populates, locks and marks a region as the options say.
// rdma-core: mlx5_alloc_prefered_buf tries huge pages first and falls back
// to ordinary ones in the same way (with SysV shared memory, not mmap).
func Map(o Options) (*Region, error) {
	base := unix.Getpagesize()
	if err := o.check(base); err != nil {
		return nil, err
	}
	var tried []string // why larger pages failed, for Region.PageErr
	for _, page := range pageSizes(o.PageSize, base) {
		if o.Size > int(^uint(0)>>1)-page {
			return nil, fmt.Errorf("dma: Options.Size %d overflows when rounded up to %s pages", o.Size, sizeName(page))
		}
		length := (o.Size + page - 1) / page * page
		flags := unix.MAP_PRIVATE | unix.MAP_ANONYMOUS | unix.MAP_POPULATE
		switch page {
		case Page2M:
			flags |= unix.MAP_HUGETLB | unix.MAP_HUGE_2MB
		case Page1G:
			flags |= unix.MAP_HUGETLB | unix.MAP_HUGE_1GB
		}
		mem, err := unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, flags)
		if err == nil {
			r, err := setUp(mem, page, o)
			if err == nil && len(tried) > 0 {
				r.pageErr = fmt.Errorf("dma: %s pages instead: %s", sizeName(page), strings.Join(tried, "; "))
			}
			return r, err
		}
		if page == base {
			return nil, fmt.Errorf("dma: mmap of %d bytes: %w", length, err)
		}
		tried = append(tried, fmt.Sprintf("%s pages: %v (%s)", sizeName(page), err, hugeState(page)))
		if o.StrictPageSize {
			boot := ""
			if page == Page1G {
				boot = ", or hugepagesz=1G hugepages=N on the kernel command line"
			}
			return nil, fmt.Errorf("dma: no mapping of %d bytes on %s; reserve enough (echo N > %snr_hugepages%s) or drop StrictPageSize",
				length, strings.Join(tried, "; "), hugeDir(page), boot)
		}
	}
	return nil, errors.New("dma: no page size to try") // not reached: the base page ends the list
}

// pageSizes lists the page sizes to try, largest first, ending with the
// base page.
func pageSizes(pref, base int) []int {
	switch pref {
	case Page1G:
		return []int{Page1G, Page2M, base}
	case Page2M:
		return []int{Page2M, base}
	}
	return []int{base}
}

// setUp marks, locks and wraps a fresh mapping; it unmaps it on an error.
func setUp(mem []byte, page int, o Options) (*Region, error) {
	fail := func(err error) (*Region, error) {
		unix.Munmap(mem)
		return nil, err
	}
	// A child of fork would share the pages copy-on-write, and the
	// parent's next write would give it new ones the device does not use.
	// rdma-core: ibv_dontfork_range.
	if err := unix.Madvise(mem, unix.MADV_DONTFORK); err != nil {
		return fail(fmt.Errorf("dma: madvise(MADV_DONTFORK) of %d bytes: %w", len(mem), err))
	}
	if o.DontDump {
		if err := unix.Madvise(mem, unix.MADV_DONTDUMP); err != nil {
			return fail(fmt.Errorf("dma: madvise(MADV_DONTDUMP) of %d bytes: %w", len(mem), err))
		}
	}
	var lockErr error
	if err := unix.Mlock(mem); err != nil {
		lockErr = mlockError(len(mem), err)
		if o.Lock == LockRequired {
			return fail(lockErr)
		}
	}
	r, err := newRegion(mem, page, o.MinBlock, unix.Munmap)
	if err != nil {
		return fail(err)
	}
	r.pinned, r.lockErr = lockErr == nil, lockErr
	return r, nil
}

// mlockError names the limit that most often makes mlock fail.
func mlockError(size int, err error) error {
	limit := "unknown"
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl) == nil {
		limit = fmt.Sprintf("%s soft, %s hard", limitName(rl.Cur), limitName(rl.Max))
	}
	locked := ""
	if st, e := os.ReadFile("/proc/self/status"); e == nil {
		for _, line := range bytes.Split(st, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("VmLck:")); ok {
				locked = fmt.Sprintf(", and the process has %s locked already", strings.Join(strings.Fields(string(v)), " "))
			}
		}
	}
	return fmt.Errorf("dma: mlock of %d bytes: %w: the locked-memory limit RLIMIT_MEMLOCK (`ulimit -l`) is %s%s; "+
		"raise it (ulimit -l, memlock in limits.conf, LimitMEMLOCK= for systemd), grant CAP_IPC_LOCK, or map with Lock: dma.LockBestEffort",
		size, err, limit, locked)
}

func limitName(v uint64) string {
	if v == unix.RLIM_INFINITY {
		return "unlimited"
	}
	return fmt.Sprintf("%d bytes (ulimit -l %d)", v, v/1024)
}

// hugeState reports the kernel's pool of huge pages of the size.
func hugeState(page int) string {
	dir := hugeDir(page)
	free, err1 := os.ReadFile(dir + "free_hugepages")
	total, err2 := os.ReadFile(dir + "nr_hugepages")
	if err1 != nil || err2 != nil {
		return "the kernel has no pool of " + sizeName(page) + " pages"
	}
	return fmt.Sprintf("%s of %s reserved pages free", strings.TrimSpace(string(free)), strings.TrimSpace(string(total)))
}

// hugeDir is the sysfs directory of the kernel's pool of pages of the size.
func hugeDir(page int) string {
	return fmt.Sprintf("/sys/kernel/mm/hugepages/hugepages-%dkB/", page/1024)
}

func sizeName(page int) string {
	switch {
	case page >= 1<<30:
		return fmt.Sprintf("%d GiB", page>>30)
	case page >= 1<<20:
		return fmt.Sprintf("%d MiB", page>>20)
	}
	return fmt.Sprintf("%d KiB", page>>10)
}
