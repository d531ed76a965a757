package barrier

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestBarriersRun executes every barrier on the architecture the test runs
// on (scripts/test-slow.sh runs it under qemu for arm64, ppc64le and s390x): an
// instruction the CPU does not have would kill the test. Elsewhere Check
// names the GOARCH and every barrier panics with that error.
func TestBarriersRun(t *testing.T) {
	var rec uint32
	var reg [2]uint64
	fns := map[string]func(){
		"UDMAToDeviceBarrier":   UDMAToDeviceBarrier,
		"UDMAFromDeviceBarrier": UDMAFromDeviceBarrier,
		"MMIOWCStart":           MMIOWCStart,
		"MMIOFlushWrites":       MMIOFlushWrites,
		"Doorbell8": func() {
			Doorbell8(unsafe.Pointer(&rec), 0x01020304, unsafe.Pointer(&reg[1]), 0x1122334455667788)
		},
	}
	err := Check()
	if slices.Contains(strings.Split(Supported, ", "), runtime.GOARCH) {
		if err != nil {
			t.Fatal(err)
		}
		for _, fn := range fns {
			fn()
		}
		// Doorbell8 stores its two values where it is told, and nothing
		// else.
		if rec != 0x01020304 || reg != [2]uint64{0, 0x1122334455667788} {
			t.Fatalf("Doorbell8 stored %#x and %#x", rec, reg)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "GOARCH="+runtime.GOARCH) {
		t.Fatalf("Check on %s = %v, want an error naming the GOARCH", runtime.GOARCH, err)
	}
	for name, fn := range fns {
		func() {
			defer func() {
				if r := recover(); r == nil || r.(error).Error() != err.Error() {
					t.Errorf("%s on %s: recovered %v, want the Check error", name, runtime.GOARCH, r)
				}
			}()
			fn()
		}()
	}
}

func BenchmarkMMIOFlushWrites(b *testing.B) {
	for b.Loop() {
		MMIOFlushWrites()
	}
}
