//go:build !race

package mkey_test

const raceEnabled = false
