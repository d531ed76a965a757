package qmem

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mlx5gen/mlx5gen/runtime/dma"
)

// lowMemlock runs f with RLIMIT_MEMLOCK lowered to 64 KiB and, on this
// goroutine's thread, CAP_IPC_LOCK (which overrides the limit) dropped;
// both are restored afterwards. The package's tests do not run in
// parallel, so nothing else locks memory meanwhile.
func lowMemlock(t *testing.T, f func(limit uint64)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var caps [2]unix.CapUserData
	if err := unix.Capget(&hdr, &caps[0]); err != nil {
		t.Fatal(err)
	}
	saved := caps
	caps[0].Effective &^= 1 << unix.CAP_IPC_LOCK
	if err := unix.Capset(&hdr, &caps[0]); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := unix.Capset(&hdr, &saved[0]); err != nil {
			t.Fatal(err)
		}
	}()
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl); err != nil {
		t.Fatal(err)
	}
	low := rl
	// 16 pages: 64 KiB with 4 KiB pages, more where pages are larger
	// (loong64 16 KiB, ppc64le 64 KiB), so that the small rings below fit.
	low.Cur = min(uint64(16*os.Getpagesize()), rl.Max)
	if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &low); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &rl); err != nil {
			t.Fatal(err)
		}
	}()
	f(low.Cur)
}

// TestLockRequired: Plain's memory is locked, and when it cannot be
// (above RLIMIT_MEMLOCK, without CAP_IPC_LOCK) Plain returns mlock's
// error naming the limit, where it used to return unpinned memory with
// Pinned false; best effort returns the memory unpinned and says why.
func TestLockRequired(t *testing.T) {
	m, err := Plain(8, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Pinned || m.LockErr != nil {
		t.Errorf("Plain(8, 8, 0): pinned %v, %v", m.Pinned, m.LockErr)
	}
	m.Close()
	lowMemlock(t, func(limit uint64) {
		n := int(min(4*limit/64, 1<<16)) // a ring of 4 times the limit
		m, err := Plain(n, 0, 0)
		if err == nil {
			m.Close()
			t.Fatalf("%d bytes were locked under a limit of %d bytes", n*64, limit)
		}
		if !strings.HasPrefix(err.Error(), "qmem: dma: mlock") || !strings.Contains(err.Error(), "RLIMIT_MEMLOCK") ||
			!(errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.EPERM)) {
			t.Errorf("required: %v", err)
		}
		m, err = New(Options{WQEBBs: n, Lock: dma.LockBestEffort})
		if err != nil {
			t.Fatalf("best effort: %v", err)
		}
		if m.Pinned || m.LockErr == nil || !strings.Contains(m.LockErr.Error(), "RLIMIT_MEMLOCK") || m.Check() != nil {
			t.Errorf("best effort: pinned %v, %v, %v", m.Pinned, m.LockErr, m.Check())
		}
		m.SQ[len(m.SQ)-1] = 1
		m.Close()
		m, err = Plain(8, 8, 0) // 5 pages, well within the limit
		if err != nil || !m.Pinned {
			t.Fatalf("small rings under the limit: %v", err)
		}
		m.Close()
	})
}

// TestCloseTwice: Close is idempotent and memory used after it is
// refused by Check (so by the writers), with ErrClosed.
func TestCloseTwice(t *testing.T) {
	m, err := Plain(8, 8, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if !m.Closed() || !errors.Is(m.Check(), ErrClosed) || m.SQ != nil || m.CQ != nil {
		t.Fatalf("after Close: %v", m.Check())
	}
	if _, err := New(Options{WQEBBs: 8, Lock: 7}); err == nil || !strings.Contains(err.Error(), "Options.Lock") {
		t.Fatalf("a bad lock mode: %v", err)
	}
}
