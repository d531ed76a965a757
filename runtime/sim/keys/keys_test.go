package keys

import (
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

func TestMRChecks(t *testing.T) {
	tb := New(0x10)
	mem := make([]byte, 256)
	key, err := tb.RegMR(1, mem, 0x1000, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_REMOTE_READ)
	if err != nil {
		t.Fatal(err)
	}
	var f Fault
	b, bad := tb.Bytes(key, 1, 0x1010, 16, mlx.IBV_ACCESS_LOCAL_WRITE, false, &f)
	if bad != nil || len(b) != 16 || &b[0] != &mem[16] {
		t.Fatalf("in-bounds local write: %v", bad)
	}
	cases := []struct {
		name    string
		key, pd uint32
		addr, n uint64
		need    mlx.AccessFlags
		remote  bool
		want    FaultKind
	}{
		{"wrong tag", key ^ 1, 1, 0x1000, 8, 0, false, LocalProtection},
		{"wrong pd", key, 2, 0x1000, 8, 0, false, LocalProtection},
		{"past the end", key, 1, 0x10f8, 16, 0, false, LocalProtection},
		{"before the start", key, 1, 0xff8, 8, 0, false, LocalProtection},
		{"huge length", key, 1, 0x1000, 1 << 63, 0, false, LocalProtection},
		{"no remote write", key, 1, 0x1000, 8, mlx.IBV_ACCESS_REMOTE_WRITE, true, RemoteAccess},
		{"unknown rkey", 0x7777, 1, 0x1000, 8, mlx.IBV_ACCESS_REMOTE_READ, true, RemoteAccess},
	}
	for _, c := range cases {
		if _, bad := tb.Bytes(c.key, c.pd, c.addr, c.n, c.need, c.remote, &f); bad == nil || bad.Kind != c.want {
			t.Errorf("%s: fault %v, want %v", c.name, bad, c.want)
		}
	}
	if _, bad := tb.Bytes(key, 1, 0x1000, 8, mlx.IBV_ACCESS_REMOTE_READ, true, &f); bad != nil {
		t.Errorf("remote read: %v", bad)
	}
	if err := tb.Dereg(key); err != nil {
		t.Fatal(err)
	}
	if _, bad := tb.Bytes(key, 1, 0x1000, 8, 0, false, &f); bad == nil {
		t.Error("a deregistered key still works")
	}
	if _, err := tb.RegMR(1, mem, 0, mlx.IBV_ACCESS_REMOTE_WRITE); err == nil {
		t.Error("remote write without local write registered")
	}
}

func TestMW(t *testing.T) {
	tb := New(1)
	mem := make([]byte, 4096)
	mr, _ := tb.RegMR(3, mem, 0x10000, mlx.IBV_ACCESS_LOCAL_WRITE|mlx.IBV_ACCESS_MW_BIND)
	noBind, _ := tb.RegMR(3, mem, 0x10000, mlx.IBV_ACCESS_LOCAL_WRITE)
	mw, err := tb.AllocMW(3)
	if err != nil {
		t.Fatal(err)
	}
	var f Fault
	if _, bad := tb.BindMW(mw, 0x42, 3, noBind, 0x10000, 64, mlx.IBV_ACCESS_REMOTE_READ, &f); bad == nil {
		t.Error("bound to an MR without MW_BIND")
	}
	if _, bad := tb.BindMW(mw, 0x42, 3, mr, 0x10ff0, 64, mlx.IBV_ACCESS_REMOTE_READ, &f); bad == nil {
		t.Error("bound past the MR")
	}
	rkey, bad := tb.BindMW(mw, 0x42, 3, mr, 0x10100, 64, mlx.IBV_ACCESS_REMOTE_READ|mlx.IBV_ACCESS_REMOTE_WRITE, &f)
	if bad != nil || rkey != mw&^0xff|0x42 {
		t.Fatalf("bind: %#x %v", rkey, bad)
	}
	if b, bad := tb.Bytes(rkey, 3, 0x10100, 64, mlx.IBV_ACCESS_REMOTE_WRITE, true, &f); bad != nil || &b[0] != &mem[0x100] {
		t.Fatalf("through the window: %v", bad)
	}
	if _, bad := tb.Bytes(rkey, 3, 0x100f8, 16, mlx.IBV_ACCESS_REMOTE_READ, true, &f); bad == nil {
		t.Error("read before the window")
	}
	if _, bad := tb.Bytes(mw, 3, 0x10100, 8, mlx.IBV_ACCESS_REMOTE_READ, true, &f); bad == nil && mw != rkey {
		t.Error("the stale rkey still works")
	}
	if err := tb.Dereg(mr); err != ErrBound {
		t.Errorf("dereg of an MR with a bound window: %v", err)
	}
	if bad := tb.Invalidate(rkey, 3, 0, &f); bad != nil {
		t.Fatal(bad)
	}
	if _, bad := tb.Bytes(rkey, 3, 0x10100, 8, mlx.IBV_ACCESS_REMOTE_READ, true, &f); bad == nil {
		t.Error("an invalidated window still works")
	}
	if err := tb.Dereg(mr); err != nil {
		t.Error(err)
	}
}
