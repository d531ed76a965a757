package mmio

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// page maps a page: aligned memory, as a register window is.
func page(t *testing.T) []byte {
	t.Helper()
	b, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	return b
}

func TestPlainCopies(t *testing.T) {
	reg, src := page(t), page(t)
	for i := range 64 {
		src[i] = byte(i + 1)
	}
	if err := Write(reg[3:64], src[:61], false); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(reg[3:64], src[:61]) {
		t.Fatalf("plain memory: got % x", reg[:64])
	}
}

// TestDevice writes as to a device register: 64-bit words everywhere but
// s390x, where only the system call may write PCI memory and anonymous
// memory is refused (EINVAL on a machine, ENOSYS under qemu-user): the
// error is returned and nothing is written.
func TestDevice(t *testing.T) {
	reg, src := page(t), page(t)
	for i := range 128 {
		src[i] = byte(i + 1)
	}
	err := Write(reg[64:128], src[:64], true)
	if runtime.GOARCH == "s390x" {
		var errno unix.Errno
		if !errors.As(err, &errno) || !strings.Contains(err.Error(), "s390_pci_mmio_write") {
			t.Fatalf("s390x: Write to anonymous memory = %v, want the system call's error", err)
		}
		if !bytes.Equal(reg[:128], make([]byte, 128)) {
			t.Fatalf("s390x: the failed write wrote % x", reg[:128])
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(reg[64:128], src[:64]) || !bytes.Equal(reg[:64], make([]byte, 64)) {
		t.Fatalf("got % x", reg[:128])
	}
}

func TestDeviceNeedsWords(t *testing.T) {
	reg, src := page(t), page(t)
	for _, c := range []struct {
		name     string
		dst, src []byte
	}{
		{"odd length", reg[:12], src[:12]},
		{"unaligned register", reg[4:12], src[:8]},
		{"unaligned source", reg[:8], src[4:12]},
		{"lengths differ", reg[:16], src[:8]},
	} {
		if err := Write(c.dst, c.src, true); err == nil || !strings.Contains(err.Error(), "aligned 64-bit words") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if !bytes.Equal(reg[:64], make([]byte, 64)) {
		t.Fatalf("a refused write wrote % x", reg[:64])
	}
	if err := Write(reg[:0], src[:0], true); err != nil {
		t.Fatalf("empty write: %v", err)
	}
}

// TestWrite8 writes as Write does: one word to a register or plain
// memory, and Write's errors for a window that is not one aligned word.
func TestWrite8(t *testing.T) {
	for _, device := range []bool{false, true} {
		reg, want, src := page(t), page(t), [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
		e1 := Write8(reg[8:16], &src, device)
		e2 := Write(want[8:16], src[:], device)
		if (e1 == nil) != (e2 == nil) || !bytes.Equal(reg[:32], want[:32]) {
			t.Fatalf("device %v: Write8 %v wrote % x; Write %v wrote % x", device, e1, reg[:32], e2, want[:32])
		}
		if err := Write8(reg[4:12], &src, true); err == nil || !strings.Contains(err.Error(), "aligned 64-bit words") {
			t.Errorf("device %v: an unaligned doorbell: %v", device, err)
		}
	}
}
