package main

import "testing"

// TestOnSimulator runs the program on the simulated device, as CI does.
func TestOnSimulator(t *testing.T) {
	if err := run("sim:example-t10dif"); err != nil {
		t.Fatal(err)
	}
}

// TestCRC16 checks the guard against the CRC-16/T10-DIF check value
// ("123456789" gives 0xD0DB).
func TestCRC16(t *testing.T) {
	if got := crc16T10([]byte("123456789")); got != 0xd0db {
		t.Fatalf("%#04x", got)
	}
}
