package downstream

import "testing"

// TestWriteOnSimulator runs WriteOnDevice on the simulated device: the
// module's code on runtime/device, runtime/sim and runtime/sq.
func TestWriteOnSimulator(t *testing.T) {
	got, err := WriteOnDevice("sim:downstream", "hello from downstream")
	if err != nil {
		t.Fatal(err)
	}
	if got != "hello from downstream" {
		t.Fatalf("the target buffer holds %q", got)
	}
}
