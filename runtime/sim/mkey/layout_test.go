package mkey_test

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sim/mkey"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestConfigureListExample is mlx5dv_wr_mkey_configure(3)'s list layout:
// remote read and write, the first 64 bytes in mr1 and the next 4096 in
// mr2; a remote RDMA WRITE through the mkey lands there and a remote READ
// gathers it back.
func TestConfigureListExample(t *testing.T) {
	r := newRig(t)
	mr1, mr2 := make([]byte, 64), make([]byte, 4096)
	k1 := r.mem.reg(0x10000, mr1, rw)
	k2 := r.mem.reg(0x20000, mr2, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4)
	sges := []mlx.SGE{{Addr: 0x10000, Length: 64, LKey: k1}, {Addr: 0x20000, Length: 4096, LKey: k2}}
	if err := r.configure(mk, mlx.IBV_ACCESS_REMOTE_READ|mlx.IBV_ACCESS_REMOTE_WRITE, sges, nil, nil); err != nil {
		t.Fatal(err)
	}
	data := pattern(4160, 0x5a)
	if err := r.tab.Scatter(mk.LKey, 0, data, true); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mr1, data[:64]) || !bytes.Equal(mr2, data[64:]) {
		t.Fatal("the RDMA WRITE did not land in mr1 then mr2")
	}
	got, err := r.tab.Gather(mk.LKey, 60, 100, true, []byte("hdr"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, append([]byte("hdr"), data[60:160]...)) {
		t.Fatal("the RDMA READ across the two regions gathered other bytes")
	}
	// The mkey has no LOCAL_WRITE: a receive into it is refused.
	var f *mkey.Fault
	if err := r.tab.Scatter(mk.LKey, 0, data[:8], false); !errors.As(err, &f) || f.Kind != mkey.FaultAccess || f.Remote {
		t.Fatalf("local write without LOCAL_WRITE: %v", err)
	}
}

// TestInterleavedExample is mlx5dv_wr_mkey_configure(3)'s interleaved
// layout: 512 bytes to mr1 skipping 4, 8 bytes to mr2, twice.
func TestInterleavedExample(t *testing.T) {
	r := newRig(t)
	mr1, mr2 := make([]byte, 1028), make([]byte, 16)
	k1 := r.mem.reg(0x10000, mr1, rw)
	k2 := r.mem.reg(0x20000, mr2, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 3)
	data := []mlx.MRInterleaved{{Addr: 0x10000, BytesCount: 512, BytesSkip: 4, LKey: k1}, {Addr: 0x20000, BytesCount: 8, LKey: k2}}
	err := r.post(func(q *sq.SQ) error {
		if err := q.MkeyConfigure(mk, 2, &mlx.MkeyConfAttr{}); err != nil {
			return err
		}
		if err := q.SetMkeyAccessFlags(mlx.IBV_ACCESS_REMOTE_READ | mlx.IBV_ACCESS_REMOTE_WRITE); err != nil {
			return err
		}
		return q.SetMkeyLayoutInterleaved(2, data)
	})
	if err != nil {
		t.Fatal(err)
	}
	in := pattern(1040, 3)
	if err := r.tab.Scatter(mk.LKey, 0, in, true); err != nil {
		t.Fatal(err)
	}
	want1 := append(append(append([]byte{}, in[:512]...), 0, 0, 0, 0), in[520:1032]...)
	want2 := append(append([]byte{}, in[512:520]...), in[1032:]...)
	if !bytes.Equal(mr1, want1) || !bytes.Equal(mr2, want2) {
		t.Fatalf("interleaved scatter:\nmr1 %x\nmr2 %x", mr1[500:530], mr2)
	}
	out, err := r.tab.Gather(mk.LKey, 500, 40, true, nil)
	if err != nil || !bytes.Equal(out, in[500:540]) {
		t.Fatalf("interleaved gather across entries and repetitions: %v", err)
	}
}

// TestOneCallBuilders: mlx5dv_wr_mr_list and mlx5dv_wr_mr_interleaved
// configure in one call what the setters do.
func TestOneCallBuilders(t *testing.T) {
	r := newRig(t)
	a, b := pattern(100, 1), pattern(300, 2)
	ka, kb := r.mem.reg(0x1000, a, rw), r.mem.reg(0x9000, b, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 8)
	err := r.post(func(q *sq.SQ) error {
		return q.MRList(mk, mlx.IBV_ACCESS_LOCAL_WRITE, []mlx.SGE{{Addr: 0x1000 + 10, Length: 50, LKey: ka}, {Addr: 0x9000, Length: 0, LKey: kb}, {Addr: 0x9000 + 100, Length: 200, LKey: kb}})
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.tab.Gather(mk.LKey, 0, 250, false, nil)
	if err != nil || !bytes.Equal(out, append(append([]byte{}, a[10:60]...), b[100:300]...)) {
		t.Fatalf("mr_list gather: %v", err)
	}
	var f *mkey.Fault
	if _, err := r.tab.Gather(mk.LKey, 0, 10, true, nil); !errors.As(err, &f) || f.Kind != mkey.FaultAccess || !f.Remote {
		t.Fatalf("remote read without REMOTE_READ: %v", err)
	}
	err = r.post(func(q *sq.SQ) error {
		return q.MRInterleaved(mk, mlx.IBV_ACCESS_REMOTE_READ, 3, []mlx.MRInterleaved{{Addr: 0x1000, BytesCount: 4, BytesSkip: 6, LKey: ka}, {Addr: 0x9000, BytesCount: 2, BytesSkip: 1, LKey: kb}})
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err = r.tab.Gather(mk.LKey, 0, 18, true, nil)
	want := []byte{}
	for i := 0; i < 3; i++ {
		want = append(append(want, a[10*i:10*i+4]...), b[3*i:3*i+2]...)
	}
	if err != nil || !bytes.Equal(out, want) {
		t.Fatalf("mr_interleaved gather %x, want %x: %v", out, want, err)
	}
}

// TestFaults: bounds, access flags overridden by a later configuration, a
// local invalidate, unknown and destroyed keys, a fault of the memory
// behind the layout.
func TestFaults(t *testing.T) {
	r := newRig(t)
	buf := make([]byte, 256)
	k := r.mem.reg(0x1000, buf, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4)
	kind := func(err error) mkey.FaultKind {
		var f *mkey.Fault
		if !errors.As(err, &f) {
			t.Fatalf("%v is not a *Fault", err)
		}
		return f.Kind
	}
	if _, err := r.tab.Gather(mk.LKey, 0, 1, false, nil); kind(err) != mkey.FaultKey {
		t.Fatalf("an unconfigured mkey: %v", err)
	}
	sges := []mlx.SGE{{Addr: 0x1000, Length: 256, LKey: k}}
	if err := r.configure(mk, mlx.IBV_ACCESS_REMOTE_READ, sges, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.tab.Gather(mk.LKey, 200, 57, true, nil); kind(err) != mkey.FaultBounds {
		t.Fatalf("past the length: %v", err)
	}
	if err := r.tab.Scatter(mk.LKey, 0, []byte{1}, true); kind(err) != mkey.FaultAccess {
		t.Fatalf("remote write with REMOTE_READ only: %v", err)
	}
	// The second configuration overrides the access flags.
	if err := r.configure(mk, mlx.IBV_ACCESS_REMOTE_WRITE, sges, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.tab.Gather(mk.LKey, 0, 1, true, nil); kind(err) != mkey.FaultAccess {
		t.Fatalf("remote read after REMOTE_READ was dropped: %v", err)
	}
	if err := r.tab.Scatter(mk.LKey, 0, []byte{1}, true); err != nil {
		t.Fatal(err)
	}
	// A layout over memory the engine refuses: its fault comes through.
	if err := r.configure(mk, mlx.IBV_ACCESS_REMOTE_READ, []mlx.SGE{{Addr: 0x1000, Length: 512, LKey: k}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.tab.Gather(mk.LKey, 200, 100, true, nil); kind(err) != mkey.FaultBounds {
		t.Fatalf("a layout past its MR: %v", err)
	}
	// Local invalidate: the UMR sq writes frees the mkey.
	if err := r.post(func(q *sq.SQ) error { return q.LocalInv(mk.LKey) }); err != nil {
		t.Fatal(err)
	}
	if _, err := r.tab.Gather(mk.LKey, 0, 1, false, nil); kind(err) != mkey.FaultKey {
		t.Fatalf("after local invalidate: %v", err)
	}
	if _, err := r.tab.Gather(0x1000, 0, 1, false, nil); kind(err) != mkey.FaultKey {
		t.Fatalf("an MR key is no mkey: %v", err)
	}
	if err := r.tab.Destroy(mk.LKey); err != nil || r.tab.Is(mk.LKey) {
		t.Fatalf("destroy: %v", err)
	}
	if _, err := r.tab.Gather(mk.LKey, 0, 1, false, nil); kind(err) != mkey.FaultKey {
		t.Fatalf("a destroyed mkey: %v", err)
	}
}

// TestInvalidate: a local invalidate by call, a remote one only on an
// mkey created for it, and a new configuration makes the mkey valid again.
func TestInvalidate(t *testing.T) {
	r := newRig(t)
	buf := make([]byte, 64)
	k := r.mem.reg(0x1000, buf, rw)
	sges := []mlx.SGE{{Addr: 0x1000, Length: 64, LKey: k}}
	plain := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 1)
	inv := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE, 1)
	for _, mk := range []*sq.Mkey{plain, inv} {
		if err := r.configure(mk, rw, sges, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	var f *mkey.Fault
	if err := r.tab.RemoteInvalidate(plain.LKey); !errors.As(err, &f) || f.Kind != mkey.FaultAccess || !f.Remote {
		t.Fatalf("remote invalidate of an mkey without REMOTE_INVALIDATE: %v", err)
	}
	if err := r.tab.RemoteInvalidate(inv.LKey); err != nil {
		t.Fatal(err)
	}
	if err := r.tab.Invalidate(plain.LKey); err != nil {
		t.Fatal(err)
	}
	for _, mk := range []*sq.Mkey{plain, inv} {
		if _, err := r.tab.Gather(mk.LKey, 0, 1, false, nil); !errors.As(err, &f) || f.Kind != mkey.FaultKey {
			t.Fatalf("after invalidate: %v", err)
		}
		if err := r.configure(mk, rw, sges, nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := r.tab.Gather(mk.LKey, 0, 64, false, nil); err != nil {
			t.Fatalf("configured again: %v", err)
		}
	}
	if err := r.tab.Invalidate(0x1234); err == nil {
		t.Fatal("invalidate of no mkey")
	}
	if pd, ok := r.tab.PD(inv.LKey); !ok || pd != 1 {
		t.Fatalf("PD %d %v, want the creating PD 1", pd, ok)
	}
	if _, ok := r.tab.PD(0x1234); ok {
		t.Fatal("a PD for no mkey")
	}
}

// TestNestedMkeys: a layout may name another mkey (as a local access
// through it); one that names itself faults after a bounded depth
// instead of recursing forever.
func TestNestedMkeys(t *testing.T) {
	r := newRig(t)
	buf := pattern(256, 8)
	k := r.mem.reg(0x1000, buf, rw)
	inner := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 1)
	outer := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 2)
	if err := r.configure(inner, mlx.IBV_ACCESS_LOCAL_WRITE, []mlx.SGE{{Addr: 0x1000, Length: 256, LKey: k}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	// Two ranges of the inner mkey's address space, swapped.
	sges := []mlx.SGE{{Addr: 128, Length: 128, LKey: inner.LKey}, {Addr: 0, Length: 128, LKey: inner.LKey}}
	if err := r.configure(outer, rw, sges, nil, nil); err != nil {
		t.Fatal(err)
	}
	got, err := r.tab.Gather(outer.LKey, 100, 56, true, nil)
	if err != nil || !bytes.Equal(got, append(append([]byte{}, buf[228:]...), buf[:28]...)) {
		t.Fatalf("through the inner mkey: %v", err)
	}
	self := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 1)
	if err := r.configure(self, rw, []mlx.SGE{{Addr: 0, Length: 64, LKey: self.LKey}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	var f *mkey.Fault
	if _, err := r.tab.Gather(self.LKey, 0, 8, false, nil); !errors.As(err, &f) || f.Kind != mkey.FaultKey {
		t.Fatalf("an mkey naming itself: %v", err)
	}
}

// TestHugeLength: libmlx5 writes a list of 2 GiB and more with a length
// wrapped past 2^63; a transfer past the layout or above 2 GiB faults
// before it takes any memory.
func TestHugeLength(t *testing.T) {
	r := newRig(t)
	buf := make([]byte, 64)
	k := r.mem.reg(0x1000, buf, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4)
	ws := r.build(func(q *sq.SQ) error {
		return q.MRList(mk, rw, []mlx.SGE{{Addr: 0x1000, Length: 64, LKey: k}})
	})
	(*mlx.WQEMkeyContextSeg)(ws[0][64:128]).SetLen(0xFFFFFFFF80000000) // as libmlx5 writes 2 GiB
	if err := r.tab.ExecUMR(ws[0]); err != nil {
		t.Fatal(err)
	}
	var f *mkey.Fault
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, n := range []uint64{65, 1 << 31, 1<<31 + 1, 1 << 40} {
		if _, err := r.tab.Gather(mk.LKey, 0, n, false, nil); !errors.As(err, &f) || f.Kind != mkey.FaultBounds {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Fatalf("refused transfers allocated %d bytes", d)
	}
	if _, err := r.tab.Gather(mk.LKey, 0, 64, false, nil); err != nil {
		t.Fatalf("within the layout: %v", err)
	}
}
