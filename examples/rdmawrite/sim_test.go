package main

import "testing"

// TestOnSimulator runs the program on the simulated device, as CI does:
// the same code that runs on an mlx5 card.
func TestOnSimulator(t *testing.T) {
	if err := run("sim:example-rdmawrite"); err != nil {
		t.Fatal(err)
	}
}
