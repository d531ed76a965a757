//go:build !s390x

package mmio

import "testing"

// On s390x the write is a system call, which fails on test memory.
func TestWriteDoesNotAllocate(t *testing.T) {
	reg, src := page(t), page(t)
	if n := testing.AllocsPerRun(100, func() { _ = Write(reg[:64], src[:64], true) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
