package devxcmd

import (
	"encoding/binary"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
)

// dword is the big-endian dword i of b, as the PRM numbers them.
func dword(b []byte, i int) uint32 { return binary.BigEndian.Uint32(b[4*i:]) }

// TestCreatePSV: opcode 0x600, num_psv 1 and the PD, worked by hand from
// mlx5_ifc.h's create_psv_in (num_psv at bit 0x40, pd at 0x48).
func TestCreatePSV(t *testing.T) {
	c, err := CreatePSV(7)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.In) != 16 || len(c.Out) != 32 {
		t.Fatalf("in %d, out %d bytes", len(c.In), len(c.Out))
	}
	if dword(c.In, 0) != 0x06000000 || dword(c.In, 2) != 0x10000007 || dword(c.In, 1) != 0 || dword(c.In, 3) != 0 {
		t.Fatalf("create_psv_in % x", c.In)
	}
	o, _ := mlx5prm.ViewCreatePSVOut(c.Out)
	o.SetPSV0Index(0x1234)
	if ix, err := PSVIndex(c.Out); err != nil || ix != 0x1234 {
		t.Fatalf("PSVIndex %#x, %v", ix, err)
	}
}

// TestCreateMkey: the mkey context libmlx5 writes (_mlx5dv_create_mkey),
// dword by dword for a signature mkey with remote invalidation and a
// crypto mkey.
func TestCreateMkey(t *testing.T) {
	for _, tc := range []struct {
		flags               mlx.MkeyInitAttrFlags
		d3, d8, d13, d15    uint32
		sig, crypto, rinval bool
	}{
		{flags: mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, d3: 0x000009, d13: 8},
		{flags: mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE |
			mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE, d3: 0x41000009, d8: 4, d13: 8},
		{flags: mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, d3: 0x40000009, d8: 4, d13: 8, d15: 0x08000000},
		{flags: mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE,
			d3: 0x40000009, d8: 8, d13: 8, d15: 0x08000000},
	} {
		c, err := CreateMkey(9, tc.flags, 5)
		if err != nil {
			t.Fatal(err)
		}
		mkc := c.In[16:80] // memory_key_mkey_entry at bit 0x80
		if dword(c.In, 0) != 0x02000000 || dword(mkc, 0) != 0x40008600 || dword(mkc, 1) != 0xffffff00 ||
			dword(mkc, 3) != tc.d3 || dword(mkc, 8) != tc.d8 || dword(mkc, 13) != tc.d13 || dword(mkc, 15) != tc.d15 {
			t.Errorf("%v: create_mkey_in % x", tc.flags, c.In[:80])
		}
	}
	if _, err := CreateMkey(9, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 0); err == nil {
		t.Error("max_entries 0 was accepted")
	}
	c, _ := CreateMkey(1, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 1)
	o, _ := mlx5prm.ViewCreateMkeyOut(c.Out)
	o.SetMkeyIndex(0x800001)
	if key, err := MkeyKey(c.Out); err != nil || key != 0x80000100 {
		t.Fatalf("MkeyKey %#x, %v", key, err)
	}
	if _, err := CreateMkey(1<<24, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 1); err == nil {
		t.Error("a 25-bit PD number was accepted")
	}
}

// TestCreateDEK: the general object header (opcode 0xa00, obj_type 0xc)
// and the key object, the key bytes and opaque as mlx5dv_dek_init_attr
// lays them out.
func TestCreateDEK(t *testing.T) {
	a := mlx.DEKInitAttr{KeySize: mlx.MLX5DV_CRYPTO_KEY_SIZE_256, HasKeytag: true, KeyPurpose: mlx.MLX5DV_CRYPTO_KEY_PURPOSE_AES_XTS,
		Opaque: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}
	for i := range a.Key {
		a.Key[i] = byte(i)
	}
	c, err := CreateDEK(3, &a)
	if err != nil {
		t.Fatal(err)
	}
	obj := c.In[16:] // key_obj after the 16-byte header
	// encryption_key_obj (mlx5_ifc.h): key_size at bits 0x54-0x57 (1:
	// 256), has_keytag 0x58, key_purpose 0x5c-0x5f (3: AES_XTS), pd 0x68,
	// opaque 0x180, key 0x200.
	if dword(c.In, 0) != 0x0a000000 || dword(c.In, 1) != 0x0000000c || dword(obj, 2) != 0x00000183 ||
		dword(obj, 3) != 3 || dword(obj, 12) != 0x01020304 || dword(obj, 13) != 0x05060708 || obj[64] != 0 || obj[191] != 127 {
		t.Fatalf("create_encryption_key_obj_in % x", c.In[:96])
	}
	a.KeySize = 7
	if _, err := CreateDEK(3, &a); err == nil {
		t.Error("key size 7 was accepted")
	}
}
