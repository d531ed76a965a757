//go:build !linux || race

package gate

// Without membarrier (or under the race detector), Enter stores its mark
// with a sequentially consistent atomic, and Close's own atomics order the
// rest.
func asymmetric() bool { return false }

func heavyBarrier() {}
