package wrcheck

import (
	"reflect"
	"testing"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// never lists the fields of Mkey that no call of a batch changes, so
// that a rollback need not restore them.
var never = map[string]bool{"LKey": true, "Flags": true, "NumDesc": true, "MemPSV": true, "WirePSV": true, "sigErrs": true}

// TestRollbackCoversMkey: forget restores every field of an mkey a
// batch may change (every field but those of never, and Unknown, which
// it sets), once the calls that change the large groups saved them:
// each field, set to other values after touch, comes back. A field added
// to Mkey fails here until touch or one of the save calls restores it
// (or never lists it).
func TestRollbackCoversMkey(t *testing.T) {
	c := New(&QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 64, MaxSendSGE: 2})
	m := NewMkey(0x100, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, 4)
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		scramble(field(v, i), 1) // every field away from its zero value
	}
	want := *m
	c.touch(m)
	c.saveAttrs(m)
	c.saveCrypto(m)
	for i := range v.NumField() {
		if name := v.Type().Field(i).Name; !never[name] && name != "Unknown" {
			scramble(field(v, i), 2)
		}
	}
	c.forget()
	if !m.Unknown {
		t.Fatal("a rolled-back mkey is not unknown")
	}
	want.Unknown = true
	for i := range v.NumField() {
		if got, w := field(v, i).Interface(), field(reflect.ValueOf(&want).Elem(), i).Interface(); !reflect.DeepEqual(got, w) {
			t.Errorf("field %s not restored: %+v, was %+v", v.Type().Field(i).Name, got, w)
		}
	}
}

// TestRollbackLazyGroups: a rollback restores the signature and crypto
// attributes only where the batch saved them, and then as they were
// when it first changed them.
func TestRollbackLazyGroups(t *testing.T) {
	c := New(&QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 64, MaxSendSGE: 2})
	m := NewMkey(0x100, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	m.CheckMask, m.CryptoAttr.Keytag[0] = 1, 7
	c.touch(m)
	c.saveAttrs(m)
	m.CheckMask = 2
	c.saveAttrs(m) // saved already: keeps 1
	m.CheckMask, m.CryptoAttr.Keytag[0] = 3, 8
	c.forget()
	if m.CheckMask != 1 || m.CryptoAttr.Keytag[0] != 8 {
		t.Fatalf("check mask %d (want 1, as first saved), keytag %d (want 8: never saved)", m.CheckMask, m.CryptoAttr.Keytag[0])
	}
	c.saveAttrs(m) // no batch touched m: nothing to save, and no entry made
	if len(c.touched) != 0 {
		t.Fatal("saveAttrs made an entry")
	}
}

// field is v's field i, settable even when unexported.
func field(v reflect.Value, i int) reflect.Value {
	f := v.Field(i)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// scramble sets every leaf of v to a value derived from k and its old
// value, different from it.
func scramble(v reflect.Value, k uint64) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + int64(k))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(v.Uint() + k)
	case reflect.Struct:
		for i := range v.NumField() {
			scramble(field(v, i), k)
		}
	case reflect.Array:
		for i := range v.Len() {
			scramble(v.Index(i), k)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.UnsafePointer:
		v.SetPointer(unsafe.Pointer(new(uint64)))
	default:
		panic("scramble: a field of kind " + v.Kind().String())
	}
}

// TestRollbackTwoMkeys: a batch that configures two mkeys, one of them
// again after the other, rolls each back to its state before the batch:
// the first batch and a later one (whose first mkey touchFirst records
// in the list the first left), touched as openMkey touches them.
func TestRollbackTwoMkeys(t *testing.T) {
	c := New(&QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 64, MaxSendSGE: 2})
	touch := func(m *Mkey) { touchAsCalls(c, m) }
	a, b := NewMkey(0x100, 0, 4), NewMkey(0x200, 0, 4)
	for batch := range 2 {
		a.Length, b.Length = 1, 2
		touch(a)
		a.Length = 10
		touch(b)
		b.Length = 20
		touch(a) // touched already: its state before the batch stays saved
		a.Length = 100
		touch(b)
		c.forget()
		if a.Length != 1 || b.Length != 2 || len(c.touched) != 0 {
			t.Fatalf("batch %d: lengths %d, %d after the rollback (want 1, 2), %d entries left", batch, a.Length, b.Length, len(c.touched))
		}
	}
}

// TestSucceedClearsUnknown: a batch that succeeds clears the unknown
// state of every mkey it touched that was unknown, whether it was the
// batch's first (touchFirst) or a later one after a known one
// (touchSlow), and a rolled-back batch leaves its mkeys unknown.
func TestSucceedClearsUnknown(t *testing.T) {
	c := New(&QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 64, MaxSendSGE: 2})
	touch := func(m *Mkey) { touchAsCalls(c, m) }
	a, b := NewMkey(0x100, 0, 4), NewMkey(0x200, 0, 4)
	for _, tc := range []struct{ failed, again []*Mkey }{
		{[]*Mkey{a}, []*Mkey{a}},
		{[]*Mkey{a}, []*Mkey{b, a}},
		{[]*Mkey{b}, []*Mkey{a, b}},
		{[]*Mkey{a, b}, []*Mkey{b, a}},
	} {
		for _, m := range tc.failed {
			touch(m)
		}
		c.forget() // a failed batch: its mkeys are unknown
		for _, m := range tc.failed {
			if !m.Unknown {
				t.Fatalf("%v: a rolled-back mkey is not unknown", tc)
			}
		}
		for _, m := range tc.again { // a batch that configures them and succeeds
			touch(m)
		}
		c.succeed()
		if a.Unknown || b.Unknown {
			t.Fatalf("%v: unknown after a successful batch: %v, %v", tc, a.Unknown, b.Unknown)
		}
	}
}

// touchAsCalls touches m as openMkey and the template path do.
func touchAsCalls(c *Chain, m *Mkey) {
	if !c.touchFirst(m) {
		c.touch(m)
	}
}
