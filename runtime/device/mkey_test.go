package device_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

const sigFlags = mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE

// sigErrCQE makes the fake device write a signature-error CQE naming
// lkey on q: a bad T10-DIF guard in the wire domain, expected guard, actual guard+1,
// at offset off.
func sigErrCQE(t *testing.T, q *device.CQ, lkey uint32, guard uint16, off uint64) {
	t.Helper()
	fakes.Lock()
	f := fakes.last.cqs[q.CQN()]
	fakes.Unlock()
	if f == nil || !f.write(mlx.MLX5_CQE_SIG_ERR, 0, 0, 0, 0) {
		t.Fatalf("fake CQ %#x: no room for a CQE", q.CQN())
	}
	n := uint32(len(f.mem.CQ) / 64)
	e := f.mem.CQ[((f.pi-1)&(n-1))*64:][:64]
	be.PutUint32(e[16:20], uint32(guard)<<16)
	be.PutUint32(e[20:24], uint32(guard+1)<<16)
	be.PutUint16(e[32:34], cq.SigSyndromeGuard)
	e[34], e[35] = 0, 0 // block signature, wire domain
	be.PutUint32(e[36:40], lkey)
	be.PutUint64(e[40:48], off)
}

// TestSigMkeyPSVs: a signature mkey's sq.Mkey carries the backend's PSV
// indexes; a plain mkey has none and no signature context to Check.
func TestSigMkeyPSVs(t *testing.T) {
	c := openFake(t)
	defer c.Close()
	pd, _ := c.AllocPD()
	plain, err := pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4)
	if err != nil {
		t.Fatal(err)
	}
	if m := plain.Mkey(); m.MemPSV != 0 || m.WirePSV != 0 {
		t.Errorf("plain mkey: PSVs %#x %#x", m.MemPSV, m.WirePSV)
	}
	if _, err := plain.Check(); err == nil || !strings.Contains(err.Error(), "BLOCK_SIGNATURE") {
		t.Errorf("plain mkey Check: %v, want an error naming BLOCK_SIGNATURE", err)
	}
	sig, err := pd.CreateMkey(sigFlags, 4)
	if err != nil {
		t.Fatal(err)
	}
	id := sig.LKey() >> 8
	if m := sig.Mkey(); m.MemPSV != id<<1|0x100 || m.WirePSV != id<<1|0x101 {
		t.Errorf("signature mkey: PSVs %#x %#x, want the backend's %#x %#x", m.MemPSV, m.WirePSV, id<<1|0x100, id<<1|0x101)
	}
	if e, err := sig.Check(); err != nil || e.Type != mlx.MLX5DV_MKEY_NO_ERR {
		t.Errorf("fresh signature mkey Check: %+v, %v", e, err)
	}
}

// TestSigErrAnyCQ: every CQ of the context, created before or after the
// signature mkey, records its signature errors for Check (libmlx5's
// context-wide mkey table); a closed mkey is no longer looked up.
func TestSigErrAnyCQ(t *testing.T) {
	c := openFake(t)
	defer c.Close()
	pd, _ := c.AllocPD()
	before, err := c.CreateCQ(device.CQConfig{CQEs: 8})
	if err != nil {
		t.Fatal(err)
	}
	mk, err := pd.CreateMkey(sigFlags, 4)
	if err != nil {
		t.Fatal(err)
	}
	after, err := c.CreateCQ(device.CQConfig{CQEs: 8})
	if err != nil {
		t.Fatal(err)
	}
	// What SetMkeySigBlock records: T10-DIF in the wire domain.
	mk.Mkey().Wire.Present = true
	mk.Mkey().Wire.Domain.SigType = mlx.MLX5DV_SIG_TYPE_T10DIF
	wc := make([]cq.WC, 1)
	for i, q := range []*device.CQ{before, after} {
		guard, off := uint16(0x1234+i), uint64(4104*(i+1))
		sigErrCQE(t, q, mk.LKey(), guard, off)
		if n, err := q.Poll(wc); n != 0 || err != nil {
			t.Fatalf("CQ %d: Poll over a signature error: %d, %v (want 0, nil: the CQE is not a completion)", i, n, err)
		}
		want := cq.MkeyErr{Type: mlx.MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD, Expected: uint64(guard), Actual: uint64(guard + 1), Offset: off}
		if e, err := mk.Check(); err != nil || e != want {
			t.Errorf("CQ %d: Check %+v, %v; want %+v", i, e, err, want)
		}
		if e, err := mk.Check(); err != nil || e.Type != mlx.MLX5DV_MKEY_NO_ERR {
			t.Errorf("CQ %d: second Check %+v, %v; want no error", i, e, err)
		}
	}
	if got := mk.Mkey().ErrCount + mk.Mkey().PendingSigErrs(); got != 3 || !mk.Mkey().ErrCountUpdated {
		t.Errorf("sq.Mkey error count %d (updated %v), want 3 (1 at creation + 2 the poller recorded), updated", got, mk.Mkey().ErrCountUpdated)
	}
	lkey := mk.LKey()
	if err := mk.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := mk.Check(); !errors.Is(err, device.ErrClosed) {
		t.Errorf("Check of a closed mkey: %v, want ErrClosed", err)
	}
	for i, q := range []*device.CQ{before, after} {
		sigErrCQE(t, q, lkey, 1, 0)
		var unk *cq.UnknownError
		if _, err := q.Poll(wc); !errors.As(err, &unk) || unk.What != "mkey index" {
			t.Errorf("CQ %d: a signature error of a closed mkey: %v, want cq.UnknownError naming the mkey index", i, err)
		}
	}
}

// TestSigMkeyPSVError: a backend that cannot tell a signature mkey's
// PSVs fails CreateMkey with its reason, and the mkey is destroyed.
func TestSigMkeyPSVError(t *testing.T) {
	c, err := device.Open("fake:nopsv")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pd, _ := c.AllocPD()
	if _, err := pd.CreateMkey(sigFlags, 4); !errors.Is(err, errNoPSV) {
		t.Fatalf("CreateMkey: %v, want the backend's errNoPSV", err)
	}
	fakes.Lock()
	log := strings.Join(fakes.last.log, "\n")
	fakes.Unlock()
	if !strings.Contains(log, "mkey") {
		t.Errorf("the mkey was not destroyed: close log %q", log)
	}
}

// TestDEKInitAttr: the mlx5dv_dek_init_attr of a DEKConfig lays out a
// plaintext key as key1, key2, then the keytag when there is one, with
// the opaque bytes apart; an unknown purpose is refused.
func TestDEKInitAttr(t *testing.T) {
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i + 1)
	}
	cfg := device.DEKConfig{KeySize: mlx.MLX5DV_CRYPTO_KEY_SIZE_256, Key: key, HasKeytag: true}
	copy(cfg.Keytag[:], "keytag01")
	copy(cfg.Opaque[:], "opaque01")
	a := cfg.InitAttr()
	if !a.HasKeytag || a.KeySize != cfg.KeySize || a.KeyPurpose != mlx.MLX5DV_CRYPTO_KEY_PURPOSE_AES_XTS ||
		string(a.Opaque[:]) != "opaque01" || string(a.Key[:64]) != string(key) || string(a.Key[64:72]) != "keytag01" ||
		a.Key[72] != 0 {
		t.Errorf("InitAttr: %+v", a)
	}
	cfg.HasKeytag = false
	if a := cfg.InitAttr(); a.HasKeytag || a.Key[64] != 0 {
		t.Errorf("InitAttr without keytag: key[64:72] % x", a.Key[64:72])
	}
	c := openFake(t)
	defer c.Close()
	pd, _ := c.AllocPD()
	cfg.Purpose = 7
	if _, err := pd.CreateDEK(cfg); err == nil || !strings.Contains(err.Error(), "DEKConfig.Purpose") {
		t.Errorf("CreateDEK of purpose 7: %v, want an error naming DEKConfig.Purpose", err)
	}
}

// TestOffloadCaps: a signature or crypto mkey, or a DEK, on a device whose
// Caps lack the offload fails at create time with EOPNOTSUPP naming the
// capability, before the backend sees it.
func TestOffloadCaps(t *testing.T) {
	c, err := device.Open("fake:nooffload")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []mlx.MkeyInitAttrFlags{mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO} {
		mk, err := pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|f, 4)
		if mk != nil || !errors.Is(err, syscall.EOPNOTSUPP) || !strings.Contains(err.Error(), "offload (Caps.") {
			t.Errorf("%v: %v, want EOPNOTSUPP naming the capability", f, err)
		}
	}
	if _, err := pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4); err != nil {
		t.Errorf("a plain indirect mkey: %v", err)
	}
	dek, err := pd.CreateDEK(device.DEKConfig{KeySize: mlx.MLX5DV_CRYPTO_KEY_SIZE_128, Key: make([]byte, 32)})
	if dek != nil || !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("CreateDEK: %v, want EOPNOTSUPP", err)
	}
}
