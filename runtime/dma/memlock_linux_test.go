package dma

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const memlockChild = "DMA_TEST_MEMLOCK_CHILD"

// TestMemlockLimit lowers RLIMIT_MEMLOCK to 64 KiB in a child process (so
// this one keeps its limit) and checks that Map returns mlock's failure
// for 1 MiB, naming the limit and the size; that best effort keeps the
// mapping and reports it unpinned; and that 16 KiB, within the limit, is
// pinned.
func TestMemlockLimit(t *testing.T) {
	if os.Getenv(memlockChild) == "1" {
		memlockInChild(t)
		return
	}
	args := []string{os.Args[0], "-test.run=^TestMemlockLimit$", "-test.v", "-test.count=1"}
	if emulated() {
		// The host kernel cannot exec a foreign binary (no binfmt_misc
		// here): run the child under the same qemu, found as
		// scripts/qemu-test.sh finds it.
		q := map[string]string{"arm64": "aarch64", "loong64": "loongarch64", "386": "i386"}[runtime.GOARCH]
		if q == "" {
			q = runtime.GOARCH
		}
		path, err := exec.LookPath("qemu-" + q + "-static")
		if err != nil {
			path, err = exec.LookPath("qemu-" + q)
		}
		if err != nil {
			t.Fatalf("running under qemu-user, but no qemu-%s(-static) in PATH to run the child with: %v", q, err)
		}
		args = append([]string{path}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), memlockChild+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("the child failed: %v", err)
	}
	if !strings.Contains(string(out), "memlock child: checked") {
		t.Fatal("the child did not run its checks")
	}
}

func memlockInChild(t *testing.T) {
	// Capabilities are per thread: drop CAP_IPC_LOCK (which overrides the
	// limit) on this goroutine's thread only, and never give the thread
	// back, so the runtime ends it with the test.
	runtime.LockOSThread()
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var caps [2]unix.CapUserData
	if err := unix.Capget(&hdr, &caps[0]); err != nil {
		t.Fatal(err)
	}
	caps[0].Effective &^= 1 << unix.CAP_IPC_LOCK
	if err := unix.Capset(&hdr, &caps[0]); err != nil {
		t.Fatal(err)
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl); err != nil {
		t.Fatal(err)
	}
	limit := min(64<<10, rl.Max) // a hard limit below 64 KiB cannot be raised
	rl.Cur = limit
	if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &rl); err != nil {
		t.Fatal(err)
	}

	r, err := Map(Options{Size: 1 << 20})
	if err == nil {
		r.Close()
		t.Fatalf("1 MiB was locked under a limit of %d bytes", limit)
	}
	t.Logf("required: %v", err)
	if !errors.Is(err, unix.ENOMEM) && !errors.Is(err, unix.EPERM) {
		t.Errorf("not mlock's errno: %v", err)
	}
	for _, part := range []string{"mlock of 1048576 bytes", "RLIMIT_MEMLOCK", "ulimit -l", fmt.Sprintf("%d bytes (ulimit -l %d) soft", limit, limit/1024), "CAP_IPC_LOCK", "LockBestEffort"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("the error does not say %q", part)
		}
	}

	r, err = Map(Options{Size: 1 << 20, Lock: LockBestEffort})
	if err != nil {
		t.Fatalf("best effort: %v", err)
	}
	if r.Pinned() || r.LockErr() == nil || !strings.Contains(r.LockErr().Error(), "RLIMIT_MEMLOCK") {
		t.Errorf("best effort: Pinned %v, LockErr %v", r.Pinned(), r.LockErr())
	}
	// Unlocked, it is resident all the same: MAP_POPULATE (qemu-user's
	// smaps shows no residency).
	if s, ok := smapsAt(t, r.Addr()); !emulated() && (!ok || s.rss < r.Len()) {
		t.Errorf("%d of the unlocked region's %d bytes are resident", s.rss, r.Len())
	}
	if b, err := r.Alloc(4096, 0); err != nil || len(b.Bytes) != 4096 {
		t.Errorf("an unpinned region's Alloc: %v", err)
	}
	r.Close()

	if small := int(limit) / 4 / os.Getpagesize() * os.Getpagesize(); small > 0 {
		r, err = Map(Options{Size: small})
		if err != nil || !r.Pinned() {
			t.Fatalf("%d bytes under a limit of %d: %v", small, limit, err)
		}
		r.Close()
	}
	t.Log("memlock child: checked")
}
