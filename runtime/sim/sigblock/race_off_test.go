//go:build !race

package sigblock

const raceEnabled = false
