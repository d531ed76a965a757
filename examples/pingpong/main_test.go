package main

import "testing"

// TestOnSimulator runs the program on two simulated devices, as CI does.
func TestOnSimulator(t *testing.T) {
	rtt, err := run("sim:example-ping", "sim:example-pong", 200)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("round trip %v", rtt)
}
