//go:build !cgo

package verbs

import (
	"errors"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// TestNoCgo: built with CGO_ENABLED=0 the backend is registered and says
// why it cannot open anything.
func TestNoCgo(t *testing.T) {
	if _, err := device.Open("mlx5_0"); !errors.Is(err, ErrNoCgo) {
		t.Fatalf("Open: %v, want ErrNoCgo", err)
	}
	if _, err := device.List(""); !errors.Is(err, ErrNoCgo) {
		t.Fatalf("List: %v, want ErrNoCgo", err)
	}
}
