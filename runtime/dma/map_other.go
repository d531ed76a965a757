//go:build !linux

package dma

import (
	"fmt"
	"runtime"
)

// Map needs Linux: pinned memory is made with its mmap, mlock and madvise.
func Map(o Options) (*Region, error) {
	return nil, fmt.Errorf("dma: pinned memory needs Linux (mmap with MAP_POPULATE, mlock, madvise MADV_DONTFORK); this is %s", runtime.GOOS)
}
