//go:build linux && !race

package gate

import "testing"

// TestSymmetricFallback runs the close-and-unmap race with the fallback a
// process without membarrier takes (Enter's store sequentially
// consistent), and checks that this machine registers for membarrier.
func TestSymmetricFallback(t *testing.T) {
	if !asymmetric() {
		t.Log("membarrier(2) is not available here: every run uses the fallback")
	}
	old := asym.Load()
	asym.Store(2)
	defer asym.Store(old)
	TestCloseRacesOwnerUnmap(t)
}
