package device_test

import (
	"slices"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
)

// TestUmemCloseOnce: Umem.Close deregisters once however often it is
// called, and the context's Close does not deregister it again; an open
// umem is deregistered by the context's Close.
func TestUmemCloseOnce(t *testing.T) {
	buf := devicetest.Buffer(t, 4096) // first: its cleanup runs after the context's Close
	c := openFake(t)
	fc := lastFake()
	u := devicetest.Must[*device.Umem](t, "RegUmem")(c.RegUmem(buf, mlx.IBV_ACCESS_LOCAL_WRITE))
	left := devicetest.Must[*device.Umem](t, "RegUmem")(c.RegUmem(buf, mlx.IBV_ACCESS_LOCAL_WRITE))
	for i := 0; i < 2; i++ {
		if err := u.Close(); err != nil {
			t.Fatalf("Umem.Close #%d: %v", i+1, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{umemName(u), umemName(left), "context"}
	if !slices.Equal(fc.log, want) {
		t.Fatalf("closed %q, want %q", fc.log, want)
	}
	if err := left.Close(); err != nil {
		t.Fatalf("Close of a umem the context closed: %v", err)
	}
}

func umemName(u *device.Umem) string { return "umem 0x" + hex(u.ID()) }
