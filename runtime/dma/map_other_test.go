//go:build !linux

package dma

import (
	"strings"
	"testing"
)

func TestMapNeedsLinux(t *testing.T) {
	if _, err := Map(Options{Size: 4096}); err == nil || !strings.Contains(err.Error(), "needs Linux") {
		t.Fatalf("Map: %v", err)
	}
}
