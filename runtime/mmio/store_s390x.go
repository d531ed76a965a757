package mmio

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// store8 is false: only the system call writes PCI memory (Write).
const store8 = false

func aligned(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0 }

// write64s hands the write to the kernel, which performs it with the PCI
// store instructions user space may not use (or MIO ones where the
// machine has them). It fails on memory that is not a PCI mapping.
func write64s(dst, src []byte) error {
	_, _, errno := unix.Syscall(unix.SYS_S390_PCI_MMIO_WRITE,
		uintptr(unsafe.Pointer(unsafe.SliceData(dst))), uintptr(unsafe.Pointer(unsafe.SliceData(src))), uintptr(len(src)))
	if errno != 0 {
		return fmt.Errorf("mmio: s390_pci_mmio_write of %d bytes: %w", len(src), errno)
	}
	return nil
}
