//go:build race

package mkey_test

// raceEnabled: the race detector instruments allocations, so allocation
// counts are not asserted under it.
const raceEnabled = true
