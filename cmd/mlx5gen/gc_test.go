package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// setGC turns the collector's pacing off in favour of a memory limit,
// unless the environment sets either.
func TestSetGC(t *testing.T) {
	restore := func(pct int, limit int64) {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	}
	defer restore(debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64))
	for _, c := range []struct {
		env       map[string]string
		pct       int
		wantLimit int64
	}{
		{env: nil, pct: -1, wantLimit: gcMemoryLimit},
		{env: map[string]string{"GOGC": "200"}, pct: 100, wantLimit: math.MaxInt64},
		{env: map[string]string{"GOMEMLIMIT": "1GiB"}, pct: 100, wantLimit: math.MaxInt64},
	} {
		restore(100, math.MaxInt64)
		setGC(func(k string) string { return c.env[k] })
		if got := debug.SetGCPercent(100); got != c.pct {
			t.Errorf("env %v: GC percent %d, want %d", c.env, got, c.pct)
		}
		if got := debug.SetMemoryLimit(-1); got != c.wantLimit {
			t.Errorf("env %v: memory limit %d, want %d", c.env, got, c.wantLimit)
		}
	}
}
