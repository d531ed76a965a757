package mmio

import (
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"
)

// TestRecord32Whole races Record32 against a device's LoadRecord32 on
// another goroutine: every value the device reads must be one the driver
// stored, never bytes of two. The values differ in every byte, so a
// record written byte by byte (what encoding/binary's PutUint32 compiles
// to on riscv64 and loong64) is seen torn: a QP's send counter read as
// 0x09fb between 0x08fb and 0x0900, and the device executes 256 stale
// WQEs. It can only fail where the compiler splits the store; the qemu
// stage (scripts/qemu-test.sh) runs it on those architectures.
func TestRecord32Whole(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Logf("GOMAXPROCS %d: the reader and the writer take turns, which cannot tear", runtime.GOMAXPROCS(0))
	}
	var rec struct {
		_ [0]uint32 // aligned, as a doorbell record is
		b [4]byte
	}
	vals := [2]uint32{0x01020304, 0xfefdfcfb}
	Record32(&rec.b, vals[0])
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; !stop.Load(); i++ {
			Record32(&rec.b, vals[i&1])
		}
	}()
	n := 2000000
	if testing.Short() {
		n /= 10
	}
	bad := 0
	var first uint32
	for range n {
		if v := LoadRecord32(&rec.b); v != vals[0] && v != vals[1] {
			if bad++; bad == 1 {
				first = v
			}
		}
	}
	stop.Store(true)
	<-done
	if bad != 0 {
		t.Errorf("the device read %d torn records in %d loads (first %#08x; stored only %#08x and %#08x)", bad, n, first, vals[0], vals[1])
	}
	if uintptr(unsafe.Pointer(&rec.b))%4 != 0 {
		t.Fatal("the test's record is not aligned")
	}
}
