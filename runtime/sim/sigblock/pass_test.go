package sigblock

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

func domains() []Domain {
	var out []Domain
	for _, bs := range []int{512, 520, 4048, 4096, 4160} {
		for _, bg := range []uint16{0, 0xFFFF} {
			out = append(out,
				Domain{Kind: KindT10DIF, BlockSize: bs, BGType: BGCRC, BG: bg, AppTag: 0x1234, RefTag: 0xFFFFFFFE, Flags: FlagRefRemap},
				Domain{Kind: KindT10DIF, BlockSize: bs, BGType: BGCSUM, BG: bg, AppTag: 7, RefTag: 100})
		}
		for _, c := range []CRCType{TypeCRC32, TypeCRC32C, TypeCRC64XP10} {
			out = append(out, Domain{Kind: KindCRC, BlockSize: bs, CRC: c, Seed: 0},
				Domain{Kind: KindCRC, BlockSize: bs, CRC: c, Seed: ^uint64(0)})
		}
	}
	return out
}

func fullMask(d *Domain) uint8 {
	if d.Kind == KindT10DIF {
		return MaskT10DIFGuard | MaskT10DIFAppTag | MaskT10DIFRefTag
	}
	return [...]uint8{MaskCRC32, MaskCRC32C, MaskCRC64XP10}[d.CRC]
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestTupleLayout: guard, app tag, ref tag big-endian; ref tag per block
// with REF_REMAP (wrapping at 2^32), constant without; CRCs little-endian
// (least significant byte first, as a ConnectX-6 Dx writes CRC32C).
func TestTupleLayout(t *testing.T) {
	data := bytes.Repeat([]byte("123456789"), 57)[:512]
	d := Domain{Kind: KindT10DIF, BlockSize: 512, AppTag: 0xBEEF, RefTag: 0xFFFFFFFF, Flags: FlagRefRemap}
	out := make([]byte, 2*520)
	if n, err := d.Generate(out, append(data, data...), 0); n != 1040 || err != nil {
		t.Fatalf("Generate = %d, %v", n, err)
	}
	g := CRC16T10DIF(0, data)
	want0 := []byte{byte(g >> 8), byte(g), 0xBE, 0xEF, 0xFF, 0xFF, 0xFF, 0xFF}
	want1 := []byte{byte(g >> 8), byte(g), 0xBE, 0xEF, 0, 0, 0, 0}
	if !bytes.Equal(out[512:520], want0) || !bytes.Equal(out[1032:1040], want1) {
		t.Errorf("tuples %x %x, want %x %x", out[512:520], out[1032:1040], want0, want1)
	}
	d.Flags = 0
	if d.RefTagOf(5) != 0xFFFFFFFF {
		t.Errorf("ref tag without REF_REMAP changes per block")
	}
	c := Domain{Kind: KindCRC, BlockSize: 512, CRC: TypeCRC64XP10, Seed: ^uint64(0)}
	tup := make([]byte, 8)
	if err := c.PutTuple(tup[:7], data, 0); err != ErrShort {
		t.Errorf("PutTuple into 7 bytes: %v", err)
	}
	c.PutTuple(tup, data, 0)
	if got := binary.LittleEndian.Uint64(tup); got != CRC64XP10(^uint64(0), data) {
		t.Errorf("CRC64 field %x", tup)
	}
	// CRC-32C of 4096 'a' bytes is 0x26c74ca2 (the value changchengx/irdma
	// crc32c/check_rdma_crc32c.c expects from a ConnectX-6 Dx): its field
	// is a2 4c c7 26.
	c = Domain{Kind: KindCRC, BlockSize: 4096, CRC: TypeCRC32C, Seed: 0xFFFFFFFF}
	c.PutTuple(tup, bytes.Repeat([]byte{'a'}, 4096), 0)
	if want := []byte{0xa2, 0x4c, 0xc7, 0x26}; !bytes.Equal(tup[:4], want) {
		t.Errorf("CRC32C field % x, want % x", tup[:4], want)
	}
	// A CRC check reads the field little-endian: the byte-swapped field
	// fails with the field's value as Expected.
	field := []byte{0x26, 0xc7, 0x4c, 0xa2}
	e, err := c.CheckTuple(bytes.Repeat([]byte{'a'}, 4096), field, 0, MaskCRC32C)
	if err != nil || e.Failed != FailGuard || e.ExpectedGuard != 0xa24cc726 || e.ActualGuard != 0x26c74ca2 {
		t.Errorf("big-endian CRC32C field: %+v %v", e, err)
	}
}

// TestRoundTrip: every domain's generated blocks check clean and strip back
// to the data, with zero allocations per pass.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, d := range domains() {
		data := randBytes(rng, 3*d.BlockSize)
		prot := make([]byte, 3*d.Stride())
		if _, err := d.Generate(prot, data, 9); err != nil {
			t.Fatal(err)
		}
		if e, err := d.Check(prot, 9, 0xFF); err != nil || e.Failed != 0 {
			t.Fatalf("%+v: clean blocks fail: %v %v", d, e.Error(), err)
		}
		back := make([]byte, len(data))
		if n, e, err := d.Strip(back, prot, 9, 0xFF); n != len(data) || e.Failed != 0 || err != nil || !bytes.Equal(back, data) {
			t.Fatalf("%+v: strip = %d %+v %v", d, n, e, err)
		}
		allocs := testing.AllocsPerRun(20, func() {
			d.Generate(prot, data, 9)
			d.Check(prot, 9, 0xFF)
			d.Strip(back, prot, 9, 0xFF)
		})
		if allocs != 0 && !raceEnabled {
			t.Errorf("%+v: %v allocations per pass", d, allocs)
		}
	}
}

// TestCheckReports builds failing T10-DIF blocks and checks the tags, the
// expected and actual values, the offset and the reporting orders.
func TestCheckReports(t *testing.T) {
	d := Domain{Kind: KindT10DIF, BlockSize: 512, AppTag: 0x1234, RefTag: 100, Flags: FlagRefRemap}
	data := bytes.Repeat([]byte{0xA5}, 4*512)
	prot := make([]byte, 4*520)
	d.Generate(prot, data, 0)
	g := CRC16T10DIF(0, data[:512])
	// Block 2: ref tag 103 instead of 102, app tag 0x1235, guard broken.
	binary.BigEndian.PutUint32(prot[2*520+516:], 103)
	binary.BigEndian.PutUint16(prot[2*520+514:], 0x1235)
	binary.BigEndian.PutUint16(prot[2*520+512:], g^1)
	e, _ := d.Check(prot, 0, 0xFF)
	if e.Failed != FailGuard|FailApp|FailRef || e.Block != 2 || e.Offset != 2*520 {
		t.Fatalf("Check = %+v", e)
	}
	if typ, exp, act := e.Reported(); typ != MkeyBadRefTag || exp != 102 || act != 103 {
		t.Errorf("Reported = %v %d %d, want REFTAG 102 103", typ, exp, act)
	}
	if e.Syndrome() != SyndromeGuard|SyndromeAppTag|SyndromeRefTag {
		t.Errorf("Syndrome = %#x", e.Syndrome())
	}
	f := e.T10First()
	if typ, exp, act := f.Reported(); typ != MkeyBadGuard || exp != uint64(g^1) || act != uint64(g) {
		t.Errorf("T10First = %v %#x %#x", typ, exp, act)
	}
	// Masked out: only the guard is checked, then nothing.
	if e, _ := d.Check(prot, 0, MaskT10DIFGuard); e.Failed != FailGuard {
		t.Errorf("guard mask: %+v", e)
	}
	if e, _ := d.Check(prot, 0, MaskT10DIFAppTag&0x10); e.Failed != FailApp {
		t.Errorf("APP[0] mask: %+v", e) // 0x1234 vs 0x1235 differ in the low byte
	}
	if e, _ := d.Check(prot, 0, MaskT10DIFAppTag&0x20); e.Failed != 0 {
		t.Errorf("APP[1] mask: %+v", e)
	}
	// Escapes: app tag 0xffff skips the block with APP_ESCAPE; with
	// APP_REF_ESCAPE only when the ref tag is 0xffffffff too.
	binary.BigEndian.PutUint16(prot[2*520+514:], 0xFFFF)
	d.Flags = FlagRefRemap | FlagAppEscape
	if e, _ := d.Check(prot, 0, 0xFF); e.Failed != 0 {
		t.Errorf("APP_ESCAPE: %+v", e)
	}
	d.Flags = FlagRefRemap | FlagAppRefEscape
	if e, _ := d.Check(prot, 0, 0xFF); e.Failed == 0 {
		t.Errorf("APP_REF_ESCAPE with ref 103 escaped")
	}
	binary.BigEndian.PutUint32(prot[2*520+516:], 0xFFFFFFFF)
	if e, _ := d.Check(prot, 0, 0xFF); e.Failed != 0 {
		t.Errorf("APP_REF_ESCAPE: %+v", e)
	}
}

// TestCQEWords: the CQE words match the layout of the signature vectors
// (testdata/cqe-vectors/signature.json, cases sig_t10dif_csum_apptag and
// sig_crc64_xp10_guard).
func TestCQEWords(t *testing.T) {
	e := Error{Failed: FailApp, Kind: KindT10DIF, ExpectedGuard: 0x9A9A, ActualGuard: 0x9A9A,
		ExpectedApp: 1, ActualApp: 2, ExpectedRef: 8192, ActualRef: 8192}
	et, at, er, ar := e.CQE()
	if et != 2593783809 || at != 2593783810 || er != 8192 || ar != 8192 {
		t.Errorf("T10-DIF CQE words %d %d %d %d", et, at, er, ar)
	}
	if typ, exp, act := e.Reported(); typ != MkeyBadAppTag || exp != 1 || act != 2 {
		t.Errorf("Reported %v %d %d", typ, exp, act)
	}
	x := Error{Failed: FailGuard, Kind: KindCRC, CRC: TypeCRC64XP10,
		ExpectedGuard: 12577168950407869252, ActualGuard: 754802123877021576}
	et, at, er, ar = x.CQE()
	if et != 2928350342 || at != 175741064 || er != 287454020 || ar != 1432778632 {
		t.Errorf("CRC64 CQE words %d %d %d %d", et, at, er, ar)
	}
	c := Error{Failed: FailGuard, Kind: KindCRC, CRC: TypeCRC32, ExpectedGuard: 3421780262, ActualGuard: 305419896}
	if et, at, er, ar = c.CQE(); et != 3421780262 || at != 305419896 || er != 0 || ar != 0 {
		t.Errorf("CRC32 CQE words %d %d %d %d", et, at, er, ar)
	}
	if got := c.Error(); got != "sigblock: block 0 at offset 0: bad guard: expected 0xcbf43926, actual 0x12345678" {
		t.Errorf("Error() = %q", got)
	}
}

func TestValidateAndLengths(t *testing.T) {
	for _, c := range []struct {
		d   Domain
		err error
	}{
		{Domain{Kind: KindT10DIF, BlockSize: 500}, ErrBlockSize},
		{Domain{Kind: KindT10DIF, BlockSize: 512, BG: 1}, ErrBGSeed},
		{Domain{Kind: KindT10DIF, BlockSize: 512, BGType: 2}, ErrBGType},
		{Domain{Kind: KindT10DIF, BlockSize: 512, Flags: 8}, ErrFlags},
		{Domain{Kind: KindCRC, BlockSize: 512, CRC: 3}, ErrCRCType},
		{Domain{Kind: KindCRC, BlockSize: 512, CRC: TypeCRC64XP10, Seed: 0xFFFFFFFF}, ErrCRCSeed},
		{Domain{Kind: KindCRC, BlockSize: 512, CRC: TypeCRC32, Seed: ^uint64(0)}, nil},
		{Domain{Kind: 9, BlockSize: 512}, ErrKind},
	} {
		if err := c.d.Validate(); err != c.err {
			t.Errorf("%+v: Validate = %v, want %v", c.d, err, c.err)
		}
		if _, err := c.d.Generate(make([]byte, 1024), make([]byte, 512), 0); c.err != nil && err != c.err {
			t.Errorf("%+v: Generate = %v, want %v", c.d, err, c.err)
		}
	}
	d := Domain{Kind: KindCRC, BlockSize: 512, CRC: TypeCRC32C}
	if _, err := d.Generate(make([]byte, 1024), make([]byte, 500), 0); err != ErrLength {
		t.Errorf("partial block: %v", err)
	}
	if _, err := d.Generate(make([]byte, 515), make([]byte, 512), 0); err != ErrShort {
		t.Errorf("short dst: %v", err)
	}
	if _, err := d.Check(make([]byte, 512), 0, 0xFF); err != ErrLength {
		t.Errorf("check partial: %v", err)
	}
	if _, _, err := d.Strip(make([]byte, 100), make([]byte, 516), 0, 0xFF); err != ErrShort {
		t.Errorf("strip short: %v", err)
	}
	for e, want := range map[uint32]int{0: 512, 1: 520, 2: 4048, 3: 4096, 4: 4160, 5: 0} {
		if got, ok := BlockSize(e); got != want || ok != (want != 0) {
			t.Errorf("BlockSize(%d) = %d %v", e, got, ok)
		}
	}
}

func TestCheckTupleAndCopyFields(t *testing.T) {
	d := Domain{Kind: KindT10DIF, BlockSize: 512, AppTag: 3, RefTag: 9}
	data := make([]byte, 512)
	tup := make([]byte, 8)
	d.PutTuple(tup, data, 0)
	if e, err := d.CheckTuple(data, tup, 0, 0xFF); e.Failed != 0 || err != nil {
		t.Errorf("CheckTuple = %+v %v", e, err)
	}
	if _, err := d.CheckTuple(data, tup[:4], 0, 0xFF); err != ErrShort {
		t.Errorf("short tuple: %v", err)
	}
	dst := []byte{0, 0, 0, 0, 0, 0, 0, 0}
	src := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	if err := CopyFields(dst, src, 8, MaskT10DIFAppTag); err != nil || !bytes.Equal(dst, []byte{0, 0, 3, 4, 0, 0, 0, 0}) {
		t.Errorf("CopyFields app tag: %x %v", dst, err)
	}
	if err := CopyFields(dst, src, 9, 0xFF); err != ErrShort {
		t.Errorf("CopyFields size 9: %v", err)
	}
}

// BenchmarkCheck4096 checks 8 T10-DIF (CRC guard) blocks of 4096 bytes.
func BenchmarkCheck4096(b *testing.B) {
	d := Domain{Kind: KindT10DIF, BlockSize: 4096, Flags: FlagRefRemap}
	data := make([]byte, 8*4096)
	prot := make([]byte, 8*d.Stride())
	d.Generate(prot, data, 0)
	b.SetBytes(int64(len(prot)))
	b.ReportAllocs()
	for b.Loop() {
		d.Check(prot, 0, 0xFF)
	}
}
