package main

import (
	"strings"
	"testing"
)

// TestOnSimulator runs the program on two simulated devices, as CI does,
// and checks every message landed in its receive buffer.
func TestOnSimulator(t *testing.T) {
	got, err := run("sim:example-client", "sim:example-server")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`receive 0: 5 bytes "hello"`,
		`receive 1: 9 bytes "two-sided"`,
		`receive 2: 19 bytes "with immediate data", immediate data 42`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("received:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
