package devicetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/dma"
)

// region maps a small runtime/dma region for a lifetime test; t's cleanup
// closes it, failing t if a registration still holds it.
func region(t *testing.T) *dma.Region {
	t.Helper()
	r, err := dma.Map(dma.Options{Size: 1 << 16, Lock: dma.LockBestEffort})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("closing the region at the end: %v", err)
		}
	})
	return r
}

// testMRPinsRegion: while an MR over a runtime/dma buffer is registered,
// the region refuses to close, naming the MR; closing the MR (itself, or
// through its PD) lets it close.
func testMRPinsRegion(t *testing.T, c *device.Context) {
	r := region(t)
	pd := Must[*device.PD](t, "AllocPD")(c.AllocPD())
	a := Must[dma.Buffer](t, "Alloc")(r.Alloc(4096, 64))
	b := Must[dma.Buffer](t, "Alloc")(r.Alloc(4096, 64))
	ma := Must[*device.MR](t, "RegMR a")(pd.RegMR(a.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE))
	mb := Must[*device.MR](t, "RegMR b")(pd.RegMR(b.Bytes[:100], mlx.IBV_ACCESS_LOCAL_WRITE))
	if ma.Addr != a.Addr || mb.Addr != b.Addr {
		t.Fatalf("MR addresses %#x %#x, want the buffers' %#x %#x", ma.Addr, mb.Addr, a.Addr, b.Addr)
	}
	err := r.Close()
	if !errors.Is(err, dma.ErrPinned) {
		t.Fatalf("Close of a region with two MRs registered: %v, want dma.ErrPinned", err)
	}
	for _, m := range []*device.MR{ma, mb} {
		if want := "MR lkey " + fmt.Sprintf("%#x", m.LKey); !strings.Contains(err.Error(), want) {
			t.Fatalf("Close's error %q does not name %q", err, want)
		}
	}
	if r.Addr() == 0 || r.Pins() != 2 {
		t.Fatalf("after the refused Close: Addr %#x, Pins %d; want open, 2", r.Addr(), r.Pins())
	}
	if err := ma.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ma.Close(); err != nil {
		t.Fatalf("second MR.Close: %v", err)
	}
	if err := r.Close(); !errors.Is(err, dma.ErrPinned) || strings.Contains(err.Error(), fmt.Sprintf("lkey %#x ", ma.LKey)) {
		t.Fatalf("Close with one MR left: %v, want ErrPinned naming only lkey %#x", err, mb.LKey)
	}
	if err := pd.Close(); err != nil { // closes mb
		t.Fatal(err)
	}
	if r.Pins() != 0 {
		t.Fatalf("%d pins left after the PD's Close", r.Pins())
	}
}

// testUmemClose: Umem.Close deregisters (idempotently) and unpins the
// region; a umem left open is closed by the context's Close.
func testUmemClose(t *testing.T, c *device.Context) {
	r := region(t)
	buf := Must[dma.Buffer](t, "Alloc")(r.Alloc(8192, 4096))
	u, err := c.RegUmem(buf.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE)
	if err != nil {
		t.Skipf("RegUmem: %v (a device without DEVX)", err)
	}
	if err := r.Close(); !errors.Is(err, dma.ErrPinned) || !strings.Contains(err.Error(), fmt.Sprintf("umem %#x ", u.ID())) {
		t.Fatalf("Close of a region with a umem registered: %v, want ErrPinned naming umem %#x", err, u.ID())
	}
	if err := u.Close(); err != nil {
		t.Fatalf("Umem.Close: %v", err)
	}
	if err := u.Close(); err != nil {
		t.Fatalf("second Umem.Close: %v", err)
	}
	if r.Pins() != 0 {
		t.Fatalf("%d pins left after Umem.Close", r.Pins())
	}
	// One left open: the context's Close deregisters it (the deferred
	// Close of the suite, then the region's cleanup, which fails t if the
	// pin were still held).
	Must[*device.Umem](t, "RegUmem again")(c.RegUmem(buf.Bytes, mlx.IBV_ACCESS_LOCAL_WRITE))
	if r.Pins() != 1 {
		t.Fatalf("Pins %d after a second RegUmem, want 1", r.Pins())
	}
}
