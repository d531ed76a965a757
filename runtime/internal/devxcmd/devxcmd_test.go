package devxcmd

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
)

// dwords checks b against want, a map from byte offset to the big-endian
// dword expected there; every other byte of b must be 0. The expected
// dwords are worked by hand from the bit offsets of mlx5_ifc.h (rdma-core
// v44.0 providers/mlx5/mlx5_ifc.h): a field at bit o of width w in the
// dword holding it is value << (32 - o%32 - w).
func dwords(t *testing.T, name string, b []byte, want map[int]uint32) {
	t.Helper()
	for off := 0; off+4 <= len(b); off += 4 {
		got := binary.BigEndian.Uint32(b[off:])
		if got != want[off] {
			t.Errorf("%s: dword at byte %d: %#08x, want %#08x", name, off, got, want[off])
		}
	}
}

// TestCreatePSV: opcode 0x600 in bits 0-15; num_psv 1 in bits 0x40-0x43,
// pd in bits 0x48-0x5f.
func TestCreatePSV(t *testing.T) {
	in, err := CreatePSV(0x123456)
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 16 {
		t.Fatalf("%d bytes, want 16 (create_psv_in is 0x80 bits)", len(in))
	}
	dwords(t, "CREATE_PSV", in, map[int]uint32{0: 0x06000000, 8: 0x10123456})
	v, _ := mlx5prm.ViewCreatePSVIn(in)
	if v.Opcode() != mlx5prm.MLX5_CMD_OP_CREATE_PSV || v.NumPSV() != 1 || v.PD() != 0x123456 {
		t.Errorf("getters: opcode %v num_psv %d pd %#x", v.Opcode(), v.NumPSV(), v.PD())
	}
	if _, err := CreatePSV(1 << 24); err == nil {
		t.Error("a 25-bit PD number was accepted")
	}
	out := make([]byte, CreatePSVOutLen)
	binary.BigEndian.PutUint32(out[16:], 0xab000042) // psv0_index: bits 0x88-0x9f; the byte above is reserved
	if i, err := PSVIndex(out); err != nil || i != 0x42 {
		t.Errorf("PSVIndex %#x, %v", i, err)
	}
	if _, err := PSVIndex(out[:16]); err == nil {
		t.Error("a 16-byte CREATE_PSV output was read")
	}
	d, _ := DestroyPSV(0x42)
	dwords(t, "DESTROY_PSV", d, map[int]uint32{0: 0x06010000, 8: 0x42})
}

// TestCreateMkey works the mkc of a signature and crypto mkey by hand:
// free (bit 1), umr_en (0x10), lr (0x15), access_mode_1_0 KLMS (2, bits
// 0x16-0x17); qpn 0xffffff (0x20-0x37), mkey_7_0 0; bsf_en (0x61),
// en_rinval (0x67), pd (0x68-0x7f); bsf_octword_size (0x100: 64 + 64
// bytes of BSF, 8 octwords); translations_octword_size (0x1a0: 5
// entries rounded to 8); crypto_en 1 (0x1e3-0x1e4). The mkc starts at
// byte 16 of create_mkey_in.
func TestCreateMkey(t *testing.T) {
	in, err := CreateMkey(Mkey{PDN: 0x123456, MaxEntries: 5, Signature: true, Crypto: true, RemoteInvalidate: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 272 {
		t.Fatalf("%d bytes, want 272 (create_mkey_in is 0x880 bits)", len(in))
	}
	const mkc = 16
	dwords(t, "CREATE_MKEY", in, map[int]uint32{
		0: 0x02000000, mkc: 0x40008600, mkc + 4: 0xffffff00, mkc + 12: 0x41123456,
		mkc + 32: 8, mkc + 52: 8, mkc + 60: 0x08000000,
	})
	v, _ := mlx5prm.ViewCreateMkeyIn(in)
	m := v.MemoryKeyMkeyEntry()
	if v.Opcode() != mlx5prm.MLX5_CMD_OP_CREATE_MKEY || m.Free() != 1 || m.UMREn() != 1 || m.Lr() != 1 || m.Lw() != 0 ||
		m.AccessMode1To0() != mlx5prm.MLX5_MKC_ACCESS_MODE_KLMS || m.QPN() != 0xffffff || m.PD() != 0x123456 ||
		m.BSFEn() != 1 || m.BSFOctwordSize() != 8 || m.TranslationsOctwordSize() != 8 || m.CryptoEn() != 1 || m.EnRinval() != 1 {
		t.Errorf("getters disagree: % x", in[mkc:mkc+64])
	}
	// A signature mkey alone: 4 octwords of BSF, no crypto_en; one
	// entry rounds to 4.
	in, _ = CreateMkey(Mkey{PDN: 7, MaxEntries: 1, Signature: true})
	dwords(t, "CREATE_MKEY sig", in, map[int]uint32{
		0: 0x02000000, mkc: 0x40008600, mkc + 4: 0xffffff00, mkc + 12: 0x40000007,
		mkc + 32: 4, mkc + 52: 4,
	})
	// A crypto mkey alone.
	in, _ = CreateMkey(Mkey{PDN: 7, MaxEntries: 8, Crypto: true})
	dwords(t, "CREATE_MKEY crypto", in, map[int]uint32{
		0: 0x02000000, mkc: 0x40008600, mkc + 4: 0xffffff00, mkc + 12: 0x40000007,
		mkc + 32: 4, mkc + 52: 8, mkc + 60: 0x08000000,
	})
	for _, bad := range []Mkey{{PDN: 1, MaxEntries: 0}, {PDN: 1, MaxEntries: 1 << 16}, {PDN: 1 << 24, MaxEntries: 4}} {
		if _, err := CreateMkey(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	out := make([]byte, CreateMkeyOutLen)
	binary.BigEndian.PutUint32(out[8:], 0xff000123) // mkey_index: bits 0x48-0x5f
	if i, err := MkeyIndex(out); err != nil || i != 0x123 || MkeyKey(i) != 0x12300 {
		t.Errorf("MkeyIndex %#x, %v", i, err)
	}
}

// TestCreateDEK: the general object header (opcode 0xa00, obj_type DEK
// 0xc in bits 0x30-0x3f), then encryption_key_obj at byte 16: key_size
// (bits 0x54-0x57), has_keytag (0x58), key_purpose AES-XTS 3 (0x5c-0x5f),
// pd (0x68-0x7f), the opaque bytes at byte 48 and the key at byte 64 of
// the object, as they are.
func TestCreateDEK(t *testing.T) {
	d := DEK{PDN: 0x123456, Size256: true, HasKeytag: true, Opaque: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}
	for i := range d.Key {
		d.Key[i] = byte(0x80 + i)
	}
	in, err := CreateDEK(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 272 {
		t.Fatalf("%d bytes, want 272", len(in))
	}
	want := map[int]uint32{0: 0x0a000000, 4: 0x0000000c, 16 + 8: 0x00000183, 16 + 12: 0x00123456,
		16 + 48: 0x01020304, 16 + 52: 0x05060708}
	for i := 0; i < DEKKeyLen; i += 4 {
		want[16+64+i] = binary.BigEndian.Uint32(d.Key[i:])
	}
	dwords(t, "CREATE_GENERAL_OBJECT DEK", in, want)
	v, _ := mlx5prm.ViewCreateEncryptionKeyObjIn(in)
	o := v.KeyObj()
	if v.Hdr().ObjType() != mlx5prm.MLX5_OBJ_TYPE_DEK || o.KeySize() != mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_SIZE_SIZE_256 ||
		o.HasKeytag() != 1 || o.KeyPurpose() != mlx5prm.MLX5_ENCRYPTION_KEY_OBJ_KEY_PURPOSE_AES_XTS || o.PD() != 0x123456 ||
		o.Opaque() != 0x0102030405060708 || string(o.Key()) != string(d.Key[:]) {
		t.Error("getters disagree")
	}
	in, _ = CreateDEK(DEK{PDN: 5})
	dwords(t, "CREATE_GENERAL_OBJECT DEK 128", in, map[int]uint32{0: 0x0a000000, 4: 0x0000000c, 16 + 8: 0x00000003, 16 + 12: 5})
	out := make([]byte, CreateDEKOutLen)
	binary.BigEndian.PutUint32(out[8:], 0xdeadbeef)
	if id, err := ObjID(out); err != nil || id != 0xdeadbeef {
		t.Errorf("ObjID %#x, %v", id, err)
	}
	var fe *mlx5prm.FieldError
	if _, err := CreateDEK(DEK{PDN: 1 << 24}); !errors.As(err, &fe) {
		t.Errorf("a 25-bit PD: %v, want a *mlx5prm.FieldError", err)
	}
}

// TestQueryHCACap: opcode 0x100, op_mod the page ORed with GET_CUR (bit 0).
func TestQueryHCACap(t *testing.T) {
	in, _ := QueryHCACap(mlx5prm.MLX5_SET_HCA_CAP_OP_MOD_CRYPTO)
	dwords(t, "QUERY_HCA_CAP crypto", in, map[int]uint32{0: 0x01000000, 4: 0x35})
	in, _ = QueryHCACap(mlx5prm.MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE)
	dwords(t, "QUERY_HCA_CAP general", in, map[int]uint32{0: 0x01000000, 4: 0x01})
}

// TestParseGeneral sets capability bits by hand at their mlx5_ifc.h bit
// offsets within the page (which starts at byte 16 of the output): sho
// 0x217, sigerr_domain_and_sig_type 0x480, aes_xts_multi_block_be_tweak
// 0x3f2, crypto 0x469, general_obj_types 0x400-0x43f (bit 12: DEK).
func TestParseGeneral(t *testing.T) {
	out := make([]byte, QueryHCACapOutLen)
	setBit := func(bit int) { out[16+bit/8] |= 0x80 >> (bit % 8) }
	g, err := ParseGeneral(out)
	if err != nil || g.BlockSignature() || g.AESXTS() || g.DEKObjects() || g.Crypto {
		t.Fatalf("an empty page: %+v, %v", g, err)
	}
	setBit(0x217)
	if g, _ = ParseGeneral(out); !g.Sho || g.BlockSignature() {
		t.Errorf("sho alone: %+v", g)
	}
	setBit(0x480)
	setBit(0x3f2)
	setBit(0x469)
	setBit(0x400 + 63 - 12)
	g, _ = ParseGeneral(out)
	if !g.BlockSignature() || !g.AESXTSMultiBlock || g.AESXTSSingleBlock || !g.AESXTS() || !g.Crypto || !g.DEKObjects() || g.GeneralObjTypes != 1<<12 {
		t.Errorf("%+v", g)
	}
	if _, err := ParseGeneral(out[:100]); err == nil {
		t.Error("a short output was read")
	}
}

// TestParseCrypto: wrapped_import_method at bits 0x18-0x1f of the crypto
// page, log_max_num_deks at 0x2b-0x2f.
func TestParseCrypto(t *testing.T) {
	out := make([]byte, QueryHCACapOutLen)
	out[16+3] = WrappedImportAES
	out[16+5] = 0x0c // bits 0x28-0x2f: log_max_num_deks is the low five, 12
	c, err := ParseCrypto(out)
	if err != nil || !c.WrappedOnly() || c.LogMaxNumDEKs != 12 {
		t.Fatalf("%+v, %v", c, err)
	}
	out[16+3] = 0x01
	if c, _ = ParseCrypto(out); c.WrappedOnly() {
		t.Errorf("method 0x01 read as wrapped-only: %+v", c)
	}
}
