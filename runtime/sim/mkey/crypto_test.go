package mkey_test

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"hash/crc64"
	"os"
	"strconv"
	"strings"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sim/mkey"
	"github.com/mlx5gen/mlx5gen/runtime/sim/sigblock"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
	"golang.org/x/crypto/xts"
)

type vector struct {
	key      []byte
	seq      uint64
	ptx, ctx []byte
}

// ieee1619 reads the IEEE Std 1619-2007 Annex B vectors sigblock keeps.
func ieee1619(t *testing.T) map[int]vector {
	t.Helper()
	f, err := os.Open("../sigblock/testdata/ieee1619.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]vector{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<16)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 5 || fs[0][0] == '#' {
			continue
		}
		n, _ := strconv.Atoi(fs[0])
		var v vector
		var e [4]error
		v.key, e[0] = hex.DecodeString(fs[1])
		v.seq, e[1] = strconv.ParseUint(fs[2], 0, 64)
		v.ptx, e[2] = hex.DecodeString(fs[3])
		v.ctx, e[3] = hex.DecodeString(fs[4])
		if err := errors.Join(e[:]...); err != nil {
			t.Fatal(err)
		}
		out[n] = v
	}
	return out
}

// TestCryptoIEEE1619: vectors 4 and 5 (one key, data units 0 and 1,
// 5's plaintext is 4's ciphertext) and 10 (a 256-bit key, unit 0xff),
// as 512-byte data units through a crypto mkey, on both XTS engines (the
// single-block one takes vector 10 only, one data unit per mkey): a
// SEND with encrypt_on_tx gives the ciphertext, a RECV of the ciphertext
// stores the plaintext; without encrypt_on_tx the memory holds the
// ciphertext and the wire the plaintext.
func TestCryptoIEEE1619(t *testing.T) {
	vs := ieee1619(t)
	v4, v5, v10 := vs[4], vs[5], vs[10]
	if len(v4.ptx) != 512 || !bytes.Equal(v5.ptx, v4.ctx) || v5.seq != 1 || len(v10.ptx) != 512 {
		t.Fatal("the vectors file changed")
	}
	cases := []struct {
		name     string
		key      []byte
		seq      uint64
		ptx, ctx []byte
	}{
		{"vectors 4+5", v4.key, 0, append(append([]byte{}, v4.ptx...), v5.ptx...), append(append([]byte{}, v4.ctx...), v5.ctx...)},
		{"vector 10", v10.key, v10.seq, v10.ptx, v10.ctx},
	}
	for _, multi := range []bool{false, true} {
		for _, c := range cases {
			if len(c.ptx) > 512 && !multi {
				continue // the single-block engine takes one data unit per mkey (rule crypto.single_block)
			}
			r := newRigXTS(t, multi)
			buf := make([]byte, len(c.ptx))
			k := r.mem.reg(0x5000, buf, rw)
			mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, 4)
			id, err := r.tab.CreateDEK(c.key, nil)
			if err != nil {
				t.Fatal(err)
			}
			sges := []mlx.SGE{{Addr: 0x5000, Length: uint32(len(buf)), LKey: k}}
			for _, encOnTx := range []bool{true, false} {
				memData, wireData := c.ptx, c.ctx
				if !encOnTx {
					memData, wireData = c.ctx, c.ptx
				}
				cr := cryptoAttr(&sq.DEK{ObjectID: id}, encOnTx, mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_AFTER_CRYPTO_ON_TX, mlx.MLX5DV_BLOCK_SIZE_512, c.seq)
				if err := r.configure(mk, rw, sges, nil, cr); err != nil {
					t.Fatal(err)
				}
				copy(buf, memData)
				wire, err := r.tab.Gather(mk.LKey, 0, uint64(len(buf)), false, nil)
				if err != nil || !bytes.Equal(wire, wireData) {
					t.Fatalf("%s (multi-block %v, encrypt_on_tx %v): SEND %v, wire differs", c.name, multi, encOnTx, err)
				}
				clear(buf)
				if err := r.tab.Scatter(mk.LKey, 0, wireData, false); err != nil || !bytes.Equal(buf, memData) {
					t.Fatalf("%s (multi-block %v, encrypt_on_tx %v): RECV %v, memory differs", c.name, multi, encOnTx, err)
				}
			}
			if len(buf) == 1024 {
				// The second data unit alone is a message whose first unit
				// takes the initial tweak (mlx5dv_wr_set_mkey_crypto(3):
				// "the LBA of the first block in the message"): with
				// initial tweak 1 it is vector 5, with 0 it is not.
				for _, tw := range []uint64{1, 0} {
					cr := cryptoAttr(&sq.DEK{ObjectID: id}, true, 0, mlx.MLX5DV_BLOCK_SIZE_512, tw)
					if err := r.configure(mk, rw, sges, nil, cr); err != nil {
						t.Fatal(err)
					}
					copy(buf, c.ptx)
					wire, err := r.tab.Gather(mk.LKey, 512, 512, false, nil)
					if err != nil || bytes.Equal(wire, v5.ctx) != (tw == 1) {
						t.Fatalf("the second data unit alone, initial tweak %d: %v", tw, err)
					}
				}
			}
		}
	}
}

// TestCryptoWithSignature runs rows of mlx5dv_wr_set_mkey_crypto(3)'s
// table, checked against x/crypto/xts and the bitwise CRC16: B (wire =
// enc(data) + DIF over the ciphertext), C (wire = enc(data + DIF), the
// crypto Example 2 with 520-byte data units, round trip) and H (memory =
// enc(data + DIF), wire = data).
func TestCryptoWithSignature(t *testing.T) {
	key := pattern(32, 0x77)
	x, err := xts.NewCipher(aes.NewCipher, key)
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(2*512, 0x42)
	dif := func(blk []byte, i int) []byte {
		f := binary.BigEndian.AppendUint16(nil, crc16(blk))
		f = binary.BigEndian.AppendUint16(f, 0x11)
		return binary.BigEndian.AppendUint32(f, 0x40+uint32(i))
	}
	difD := difDomain(0, 0x11, 0x40, uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP), mlx.MLX5DV_BLOCK_SIZE_512)
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE

	r := newRigXTS(t, true)
	id, _ := r.tab.CreateDEK(key, nil)
	dek := &sq.DEK{ObjectID: id}
	buf := append([]byte{}, data...)
	k := r.mem.reg(0x8000, buf, rw)
	mk := r.create(flags, 4)
	sges := []mlx.SGE{{Addr: 0x8000, Length: uint32(len(buf)), LKey: k}}

	// Row B: encrypt on TX, signature after crypto, wire signature.
	cr := cryptoAttr(dek, true, mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_AFTER_CRYPTO_ON_TX, mlx.MLX5DV_BLOCK_SIZE_512, 9)
	if err := r.configure(mk, rw, sges, &mlx.SigBlockAttr{Wire: difD, CheckMask: 0xff}, cr); err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := 0; i < 2; i++ {
		enc := make([]byte, 512)
		x.Encrypt(enc, data[i*512:(i+1)*512], 9+uint64(i))
		want = append(append(want, enc...), dif(enc, i)...)
	}
	wire, err := r.tab.Gather(mk.LKey, 0, 1040, true, nil) // a remote span counts wire bytes
	if err != nil || !bytes.Equal(wire, want) {
		t.Fatalf("row B: %v, wire is not enc(data)+DIF", err)
	}

	// Row C: signature before crypto on TX, 520-byte data units.
	cr = cryptoAttr(dek, true, mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_BEFORE_CRYPTO_ON_TX, mlx.MLX5DV_BLOCK_SIZE_520, 3)
	if err := r.configure(mk, rw, sges, &mlx.SigBlockAttr{Wire: difD, CheckMask: 0xff}, cr); err != nil {
		t.Fatal(err)
	}
	wire, err = r.tab.Gather(mk.LKey, 0, 1040, true, nil)
	if err != nil || len(wire) != 1040 {
		t.Fatalf("row C: %v, %d wire bytes", err, len(wire))
	}
	// Each 520-byte unit is a whole 16-byte-block XTS run plus a stolen
	// tail; its first 512 bytes equal x/crypto/xts of the 512-byte prefix
	// except the last full block, which the stealing replaces.
	for i := 0; i < 2; i++ {
		plain := append(append([]byte{}, data[i*512:(i+1)*512]...), dif(data[i*512:(i+1)*512], i)...)
		ref := make([]byte, 512)
		x.Encrypt(ref, plain[:512], 3+uint64(i))
		if !bytes.Equal(wire[i*520:i*520+496], ref[:496]) || !bytes.Equal(wire[i*520+512:i*520+520], ref[496:504]) {
			t.Fatalf("row C unit %d is not AES-XTS of data+DIF with tweak %d", i, 3+i)
		}
	}
	clear(buf)
	if err := r.tab.Scatter(mk.LKey, 0, wire, true); err != nil || !bytes.Equal(buf, data) {
		t.Fatalf("row C RDMA WRITE: %v, memory is not the data", err)
	}
	if e, ok := r.tab.SigError(mk.LKey); ok {
		t.Fatalf("row C round trip reported %+v", e)
	}

	// Row H: memory enc(data+DIF), decrypt on TX, signature after crypto.
	memH := make([]byte, 0, 1040)
	for i := 0; i < 2; i++ {
		blk := data[i*512 : (i+1)*512]
		memH = append(append(memH, blk...), dif(blk, i)...)
	}
	bufH := make([]byte, 1040)
	kH := r.mem.reg(0x20000, bufH, rw)
	cr = cryptoAttr(dek, false, mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_AFTER_CRYPTO_ON_TX, mlx.MLX5DV_BLOCK_SIZE_512, 5)
	if err := r.configure(mk, rw, []mlx.SGE{{Addr: 0x20000, Length: 1040, LKey: kH}}, &mlx.SigBlockAttr{Mem: difD, CheckMask: 0xff}, cr); err != nil {
		t.Fatal(err)
	}
	// The memory is encrypted in 512-byte units with tweaks 5, 6, 7 (the
	// last unit 16 bytes).
	for u := 0; u*512 < 1040; u++ {
		end := min((u+1)*512, 1040)
		x.Encrypt(bufH[u*512:end], memH[u*512:end], 5+uint64(u))
	}
	// The wire has no signature: the SGE counts the 1024 data bytes.
	wire, err = r.tab.Gather(mk.LKey, 0, 1024, false, nil)
	if err != nil || !bytes.Equal(wire, data) {
		t.Fatalf("row H: %v, wire is not the data", err)
	}
	if e, ok := r.tab.SigError(mk.LKey); ok {
		t.Fatalf("row H reported %+v", e)
	}
	rowsEJ(t, r, x, mk, data, dek)
}

// rowsEJ: row E (memory data+DIF checked and replaced by a CRC64_XP10 on
// the wire, then all encrypted) and row J (memory enc(data)+CRC32C over the
// ciphertext, checked and stripped, then decrypted).
func rowsEJ(t *testing.T, r *rig, x *xts.Cipher, mk *sq.Mkey, data []byte, dek *sq.DEK) {
	t.Helper()
	mem := make([]byte, 0, 1040)
	for i := 0; i < 2; i++ {
		blk := data[i*512 : (i+1)*512]
		mem = append(mem, blk...)
		mem = binary.BigEndian.AppendUint16(mem, crc16(blk))
		mem = binary.BigEndian.AppendUint16(mem, 0x11)
		mem = binary.BigEndian.AppendUint32(mem, 0x40+uint32(i))
	}
	buf := append([]byte{}, mem...)
	k := r.mem.reg(0x40000, buf, rw)
	sges := []mlx.SGE{{Addr: 0x40000, Length: 1040, LKey: k}}
	sig := &mlx.SigBlockAttr{Mem: difDomain(0, 0x11, 0x40, uint16(mlx.MLX5DV_SIG_T10DIF_FLAG_REF_REMAP), mlx.MLX5DV_BLOCK_SIZE_512),
		Wire: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC64_XP10, ^uint64(0), mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff}
	cr := cryptoAttr(dek, true, mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_BEFORE_CRYPTO_ON_TX, mlx.MLX5DV_BLOCK_SIZE_512, 2)
	if err := r.configure(mk, rw, sges, sig, cr); err != nil {
		t.Fatal(err)
	}
	var plain []byte
	xp10 := crc64.MakeTable(0x9A6C9329AC4BC9B5) // sigblock's polyXP10 cites its source
	for i := 0; i < 2; i++ {
		blk := data[i*512 : (i+1)*512]
		plain = binary.LittleEndian.AppendUint64(append(plain, blk...), crc64.Checksum(blk, xp10))
	}
	want := make([]byte, len(plain))
	for u := 0; u*512 < len(plain); u++ {
		end := min((u+1)*512, len(plain))
		x.Encrypt(want[u*512:end], plain[u*512:end], 2+uint64(u))
	}
	wire, err := r.tab.Gather(mk.LKey, 0, 1040, false, nil)
	if err != nil || !bytes.Equal(wire, want) {
		t.Fatalf("row E: %v, wire is not enc(data+CRC64_XP10)", err)
	}
	// Row J: the memory holds enc(data) with a CRC32C of each encrypted block.
	enc := make([]byte, 1024)
	for u := 0; u < 2; u++ {
		x.Encrypt(enc[u*512:(u+1)*512], data[u*512:(u+1)*512], 4+uint64(u))
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	buf = buf[:0]
	for i := 0; i < 2; i++ {
		blk := enc[i*512 : (i+1)*512]
		buf = binary.LittleEndian.AppendUint32(append(buf, blk...), crc32.Checksum(blk, tab))
	}
	sig = &mlx.SigBlockAttr{Mem: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, 0xffffffff, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xf0}
	cr = cryptoAttr(dek, false, mlx.MLX5DV_SIGNATURE_CRYPTO_ORDER_SIGNATURE_BEFORE_CRYPTO_ON_TX, mlx.MLX5DV_BLOCK_SIZE_512, 4)
	if err := r.configure(mk, rw, []mlx.SGE{{Addr: 0x40000, Length: 1032, LKey: k}}, sig, cr); err != nil {
		t.Fatal(err)
	}
	wire, err = r.tab.Gather(mk.LKey, 0, 1024, false, nil) // data bytes: the wire has no signature
	if err != nil || !bytes.Equal(wire, data) {
		t.Fatalf("row J: %v, wire is not the data", err)
	}
	if e, ok := r.tab.SigError(mk.LKey); ok {
		t.Fatalf("row J: the CRC32C over the ciphertext failed: %+v", e)
	}
}

// TestCryptoState: a crypto mkey faults until configured with crypto,
// with a keytag other than its DEK's, and after its DEK is destroyed.
func TestCryptoState(t *testing.T) {
	r := newRig(t)
	buf := make([]byte, 512)
	k := r.mem.reg(0x1000, buf, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, 4)
	sges := []mlx.SGE{{Addr: 0x1000, Length: 512, LKey: k}}
	state := func(what string) {
		t.Helper()
		var f *mkey.Fault
		if _, err := r.tab.Gather(mk.LKey, 0, 512, false, nil); !errors.As(err, &f) || f.Kind != mkey.FaultState {
			t.Fatalf("%s: %v, want a state fault", what, err)
		}
	}
	if err := r.configure(mk, rw, sges, nil, nil); err != nil {
		t.Fatal(err)
	}
	state("crypto never configured")
	tag := []byte("keytag01")
	id, err := r.tab.CreateDEK(pattern(64, 1), tag)
	if err != nil {
		t.Fatal(err)
	}
	cr := cryptoAttr(&sq.DEK{ObjectID: id}, true, 0, mlx.MLX5DV_BLOCK_SIZE_512, 0)
	copy(cr.Keytag[:], "keytag02")
	if err := r.configure(mk, rw, sges, nil, cr); err != nil {
		t.Fatal(err)
	}
	state("another keytag")
	copy(cr.Keytag[:], tag)
	if err := r.configure(mk, rw, sges, nil, cr); err != nil {
		t.Fatal(err)
	}
	if _, err := r.tab.Gather(mk.LKey, 0, 512, false, nil); err != nil {
		t.Fatalf("matching keytag: %v", err)
	}
	if err := r.tab.DestroyDEK(id); err != nil {
		t.Fatal(err)
	}
	state("DEK destroyed")
	if _, err := r.tab.CreateDEK(make([]byte, 48), nil); err == nil {
		t.Fatal("a 48-byte key was accepted")
	}
}

// TestCryptoWideTweak: initial tweaks past 64 bits (libmlx5's vectors use
// 0x1f1e...10) and one whose second data unit carries into the high half:
// a whole transfer is sigblock's EncryptWide of the tweak, and its second
// unit alone, at offset 512, the same bytes.
func TestCryptoWideTweak(t *testing.T) {
	r := newRigXTS(t, true)
	key := pattern(64, 0x19)
	id, _ := r.tab.CreateDEK(key, nil)
	data := pattern(1024, 0x44)
	buf := append([]byte{}, data...)
	k := r.mem.reg(0x3000, buf, rw)
	mk := r.create(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, 4)
	x, err := sigblock.NewXTS(key, 512)
	if err != nil {
		t.Fatal(err)
	}
	var wide, carry [16]byte
	for i := range wide {
		wide[i] = 0x10 + byte(i)
	}
	for i := 0; i < 8; i++ {
		carry[i] = 0xff
	}
	for _, tw := range [][16]byte{wide, carry} {
		cr := cryptoAttr(&sq.DEK{ObjectID: id}, true, 0, mlx.MLX5DV_BLOCK_SIZE_512, 0)
		cr.InitialTweak = tw
		if err := r.configure(mk, rw, []mlx.SGE{{Addr: 0x3000, Length: 1024, LKey: k}}, nil, cr); err != nil {
			t.Fatal(err)
		}
		want := make([]byte, 1024)
		if err := x.EncryptWide(want, data, tw); err != nil {
			t.Fatal(err)
		}
		got, err := r.tab.Gather(mk.LKey, 0, 1024, false, nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("tweak %x: %v, the transfer is not AES-XTS with the 128-bit tweak", tw, err)
		}
		// The second unit alone is a message of its own: it takes the
		// initial tweak, not the initial tweak plus one.
		alone := make([]byte, 512)
		if err := x.EncryptWide(alone, data[512:], tw); err != nil {
			t.Fatal(err)
		}
		got, err = r.tab.Gather(mk.LKey, 512, 512, false, nil)
		if err != nil || !bytes.Equal(got, alone) {
			t.Fatalf("tweak %x: the second unit alone: %v", tw, err)
		}
	}
}
