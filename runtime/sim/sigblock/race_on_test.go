//go:build race

package sigblock

// raceEnabled: the race detector instruments allocations, so allocation
// counts are not asserted under it.
const raceEnabled = true
