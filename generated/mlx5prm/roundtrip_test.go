package mlx5prm_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
)

// bitsOf returns the layout's bytes (p points to a byte array).
func bitsOf(p reflect.Value) []byte {
	a := p.Elem()
	return a.Slice(0, a.Len()).Bytes()
}

// bitSet reports bit i of b, counted from the most significant bit of
// byte 0 as mlx5_ifc.h counts: independent of the package's own code.
func bitSet(b []byte, i int) bool { return b[i/8]&(0x80>>(i%8)) != 0 }

// call calls method name of p with args and returns its results.
func call(t *testing.T, p reflect.Value, name string, args ...any) []reflect.Value {
	t.Helper()
	m := p.MethodByName(name)
	if !m.IsValid() {
		t.Fatalf("%s has no method %s", p.Type(), name)
	}
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		in[i] = reflect.ValueOf(a).Convert(m.Type().In(i))
	}
	return m.Call(in)
}

// TestIntFieldsRoundTrip sets each value field to its largest value in a
// zero layout and to zero in an all-ones layout, and checks that exactly
// the field's bits change, that the getter reads the value back, and that
// a value one bit too wide is refused without writing.
func TestIntFieldsRoundTrip(t *testing.T) {
	for _, l := range mlx5prm.Layouts {
		for _, f := range l.Fields {
			if f.Kind != mlx5prm.IntField {
				continue
			}
			max := ^uint64(0) >> (64 - f.Width)
			p := reflect.ValueOf(l.New())
			if errv := call(t, p, "Set"+f.Go, max)[0]; !errv.IsNil() {
				t.Errorf("%s.%s: Set(%#x): %v", l.Name, f.Name, max, errv.Interface())
				continue
			}
			b := bitsOf(p)
			for i := 0; i < l.Bits; i++ {
				if in := i >= f.Bit && i < f.Bit+f.Width; bitSet(b, i) != in {
					t.Errorf("%s.%s (bit %#x width %d): after Set(max) bit %#x is %v", l.Name, f.Name, f.Bit, f.Width, i, bitSet(b, i))
					break
				}
			}
			if got := call(t, p, f.Go)[0].Convert(reflect.TypeFor[uint64]()).Uint(); got != max {
				t.Errorf("%s.%s: got %#x after Set(%#x)", l.Name, f.Name, got, max)
			}
			// All ones, then the field cleared: the neighbours keep their bits.
			for i := range b {
				b[i] = 0xff
			}
			call(t, p, "Set"+f.Go, 0)
			for i := 0; i < l.Bits; i++ {
				if out := i < f.Bit || i >= f.Bit+f.Width; bitSet(b, i) != out {
					t.Errorf("%s.%s: after Set(0) on all ones bit %#x is %v", l.Name, f.Name, i, bitSet(b, i))
					break
				}
			}
			if f.Width == 64 {
				continue // every value fits
			}
			paramBits := p.MethodByName("Set" + f.Go).Type().In(0).Bits()
			if f.Width >= paramBits {
				continue // the Go type cannot hold a wider value
			}
			before := append([]byte(nil), b...)
			errv := call(t, p, "Set"+f.Go, max+1)[0]
			var fe *mlx5prm.FieldError
			if errv.IsNil() || !errors.As(errv.Interface().(error), &fe) || fe.Field != f.Name || fe.Layout != l.Name || fe.Width != f.Width {
				t.Errorf("%s.%s: Set(%#x) = %v, want a *FieldError naming the field", l.Name, f.Name, max+1, errv)
			}
			if string(before) != string(b) {
				t.Errorf("%s.%s: a refused Set wrote", l.Name, f.Name)
			}
		}
	}
}

// TestRegionsInPlace checks that nested layouts, unions and byte fields
// are views at the field's byte offset, of the right size.
func TestRegionsInPlace(t *testing.T) {
	for _, l := range mlx5prm.Layouts {
		for _, f := range l.Fields {
			if f.Kind == mlx5prm.IntField {
				continue
			}
			p := reflect.ValueOf(l.New())
			base := p.Pointer()
			switch f.Kind {
			case mlx5prm.NestedField:
				v := call(t, p, f.Go)[0]
				if v.Pointer() != base+uintptr(f.Bit/8) || v.Elem().Len()*8 != f.Width {
					t.Errorf("%s.%s: view at +%d of %d bytes, want +%d of %d", l.Name, f.Name, v.Pointer()-base, v.Elem().Len(), f.Bit/8, f.Width/8)
				}
			case mlx5prm.BytesField, mlx5prm.UnionField:
				v := call(t, p, f.Go)[0]
				if v.Pointer() != base+uintptr(f.Bit/8) || v.Len()*8 != f.Width || v.Cap() != v.Len() {
					t.Errorf("%s.%s: bytes at +%d len %d cap %d, want +%d len %d", l.Name, f.Name, v.Pointer()-base, v.Len(), v.Cap(), f.Bit/8, f.Width/8)
				}
				for _, n := range f.Layouts {
					m := mlx5prm.LayoutByName(n)
					u := call(t, p, f.Go+m.Go)[0]
					if u.Pointer() != base+uintptr(f.Bit/8) || u.Elem().Len()*8 != m.Bits {
						t.Errorf("%s.%s as %s: wrong view", l.Name, f.Name, n)
					}
				}
			}
		}
	}
}

// TestCreateMkeyBytes builds a CREATE_MKEY input as libmlx5's DEVX code
// does for a signature mkey and compares the dwords with values worked
// out by hand from mlx5_ifc.h's bit positions.
func TestCreateMkeyBytes(t *testing.T) {
	var in mlx5prm.CreateMkeyIn
	mkc := in.MemoryKeyMkeyEntry()
	for _, err := range []error{
		in.SetOpcode(mlx5prm.MLX5_CMD_OP_CREATE_MKEY),
		mkc.SetFree(1), mkc.SetUMREn(1), mkc.SetLr(1), mkc.SetLw(1),
		mkc.SetAccessMode1To0(mlx5prm.MLX5_MKC_ACCESS_MODE_KLMS),
		mkc.SetQPN(0xffffff), mkc.SetMkey7To0(0x42),
		mkc.SetBSFEn(1), mkc.SetPD(0x123456),
		mkc.SetStartAddr(0x1122334455667788), mkc.SetLen(0x1000),
		mkc.SetBSFOctwordSize(8), mkc.SetTranslationsOctwordSize(4),
		in.SetTranslationsOctwordActualSize(4),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	dw := func(i int) uint32 {
		return uint32(in[4*i])<<24 | uint32(in[4*i+1])<<16 | uint32(in[4*i+2])<<8 | uint32(in[4*i+3])
	}
	want := map[int]uint32{
		0: 0x02000000, // opcode 0x200 in bits 0..15
		// mkc dword 0: free (bit 1: 1<<30), umr_en (bit 16: 1<<15), lw (bit 20: 1<<11),
		// lr (bit 21: 1<<10), access_mode_1_0 = 2 (bits 22..23: 2<<8).
		4:      0x40008e00,
		4 + 1:  0xffffff42, // qpn, mkey_7_0
		4 + 3:  0x40123456, // bsf_en (bit 0x61), pd
		4 + 4:  0x11223344, // start_addr
		4 + 5:  0x55667788,
		4 + 7:  0x1000, // len, low dword
		4 + 8:  8,      // bsf_octword_size
		4 + 13: 4,      // translations_octword_size (bit 0x1a0)
		24:     4,      // translations_octword_actual_size (bit 0x300)
	}
	for i := 0; i < mlx5prm.CreateMkeyInSize/4; i++ {
		if got := dw(i); got != want[i] {
			t.Errorf("dword %d = %#08x, want %#08x", i, got, want[i])
		}
	}
}

// TestDEKBytes checks the DEK fields at hand-computed dwords and the key
// material's place.
func TestDEKBytes(t *testing.T) {
	var in mlx5prm.CreateEncryptionKeyObjIn
	hdr, key := in.Hdr(), in.KeyObj()
	for _, err := range []error{
		hdr.SetOpcode(mlx5prm.MLX5_CMD_OP_CREATE_GENERAL_OBJECT), hdr.SetObjType(mlx5prm.MLX5_OBJ_TYPE_DEK),
		key.SetKeySize(mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_SIZE_SIZE_256), key.SetHasKeytag(1),
		key.SetKeyPurpose(mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_PURPOSE_AES_XTS), key.SetPD(7),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	copy(key.Key(), strings.Repeat("k", 64))
	if got := in[0:8]; string(got) != "\x0a\x00\x00\x00\x00\x00\x00\x0c" {
		t.Errorf("header dwords 0-1 = % x", got)
	}
	// key_obj starts at byte 16; its dword 2 holds key_size (bits 0x54..0x57:
	// 1<<8), has_keytag (bit 0x58: 1<<7) and key_purpose (bits 0x5c..0x5f: 3).
	if got := in[16+8 : 16+16]; string(got) != "\x00\x00\x01\x83\x00\x00\x00\x07" {
		t.Errorf("key_obj dwords 2-3 = % x", got)
	}
	if in[16+64] != 'k' || in[16+64+63] != 'k' || in[16+64+64] != 0 {
		t.Errorf("key material is not at byte 64 of key_obj")
	}
}

// TestCheckStatus reads an output mailbox's status and syndrome.
func TestCheckStatus(t *testing.T) {
	var out mlx5prm.CreateMkeyOut
	if err := mlx5prm.CheckStatus(out[:]); err != nil {
		t.Fatalf("status OK: %v", err)
	}
	out[0], out[4], out[7] = byte(mlx5prm.MLX5_CMD_STAT_BAD_PARAM_ERR), 0x12, 0x34
	err := mlx5prm.CheckStatus(out[:])
	var ce *mlx5prm.CmdError
	if !errors.As(err, &ce) || ce.Status != mlx5prm.MLX5_CMD_STAT_BAD_PARAM_ERR || ce.Syndrome != 0x12000034 {
		t.Fatalf("CheckStatus = %v", err)
	}
	if s := err.Error(); !strings.Contains(s, "MLX5_CMD_STAT_BAD_PARAM_ERR") || !strings.Contains(s, "0x12000034") {
		t.Errorf("message %q", s)
	}
	var fe *mlx5prm.FieldError
	if err := mlx5prm.CheckStatus(out[:7]); !errors.As(err, &fe) || fe.Need != 16 || fe.Have != 7 {
		t.Errorf("short output: %v", err)
	}
	if s := mlx5prm.CmdStatus(0x77).String(); s != "CmdStatus(0x77)" {
		t.Errorf("unknown status prints %q", s)
	}
}

// TestViewShort refuses a buffer shorter than the layout.
func TestViewShort(t *testing.T) {
	buf := make([]byte, mlx5prm.QueryHCACapOutSize)
	out, err := mlx5prm.ViewQueryHCACapOut(buf)
	if err != nil {
		t.Fatal(err)
	}
	buf[16+0x217/8] |= 0x80 >> (0x217 % 8) // sho
	if out.CapabilityCmdHCACap().Sho() != 1 {
		t.Error("sho is not read from the capability page")
	}
	_, err = mlx5prm.ViewQueryHCACapOut(buf[:100])
	if err == nil || !strings.Contains(err.Error(), "query_hca_cap_out needs 4112 bytes, the buffer has 100") {
		t.Errorf("short view: %v", err)
	}
}
