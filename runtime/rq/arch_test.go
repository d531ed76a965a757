package rq_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/barrier"
	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// TestNewNeedsBarriers: on an architecture without DMA barriers (the
// 32-bit targets scripts/qemu-test.sh runs) both writers refuse to start,
// naming the GOARCH; elsewhere they start.
func TestNewNeedsBarriers(t *testing.T) {
	_, err := rq.New(rq.Config{Mem: newMem(64), Stride: 16})
	_, serr := rq.NewSRQ(rq.SRQConfig{Mem: newMem(64), Stride: 32, Tail: 1, Init: true})
	for _, err := range []error{err, serr} {
		if barrier.Check() == nil {
			if err != nil {
				t.Fatalf("%s: %v", runtime.GOARCH, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "GOARCH="+runtime.GOARCH) {
			t.Fatalf("%s: %v, want a refusal naming the GOARCH", runtime.GOARCH, err)
		}
	}
}
