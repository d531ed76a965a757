package barrier

import "testing"

func TestBarriersRun(t *testing.T) {
	UDMAToDeviceBarrier()
	MMIOWCStart()
	MMIOFlushWrites()
}

func BenchmarkMMIOFlushWrites(b *testing.B) {
	for b.Loop() {
		MMIOFlushWrites()
	}
}
