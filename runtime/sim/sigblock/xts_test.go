package sigblock

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
)

type xtsVector struct {
	n        int
	key      []byte
	seq      uint64
	ptx, ctx []byte
}

// ieee1619 reads testdata/ieee1619.txt, typed in from IEEE Std 1619-2007
// Annex B.
func ieee1619(t *testing.T) map[int]xtsVector {
	f, err := os.Open("testdata/ieee1619.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]xtsVector{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<16)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) != 5 {
			t.Fatalf("bad line %q", line)
		}
		var v xtsVector
		var e [5]error
		v.n, e[0] = strconv.Atoi(fs[0])
		v.key, e[1] = hex.DecodeString(fs[1])
		v.seq, e[2] = strconv.ParseUint(fs[2], 0, 64)
		v.ptx, e[3] = hex.DecodeString(fs[3])
		v.ctx, e[4] = hex.DecodeString(fs[4])
		for _, err := range e {
			if err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
		}
		out[v.n] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestXTSIEEE1619 runs the standard's vectors through the data-unit engine:
// 1-3 (32 bytes, a partial last unit), 10 (a 512-bit key), 4 and 5 as one
// two-unit job (vector 5's plaintext is vector 4's ciphertext and its
// sequence number the next one, so the per-unit tweak increment is
// checked), and 15-18 (ciphertext stealing) through the unit step.
func TestXTSIEEE1619(t *testing.T) {
	vs := ieee1619(t)
	for _, n := range []int{1, 2, 3, 4, 5, 10} {
		v := vs[n]
		x, err := NewXTS(v.key, 512)
		if err != nil {
			t.Fatalf("vector %d: %v", n, err)
		}
		got := make([]byte, len(v.ptx))
		if err := x.Encrypt(got, v.ptx, v.seq); err != nil || !bytes.Equal(got, v.ctx) {
			t.Errorf("vector %d: encrypt %x, %v", n, got, err)
		}
		if err := x.Decrypt(got, got, v.seq); err != nil || !bytes.Equal(got, v.ptx) {
			t.Errorf("vector %d: decrypt in place %x, %v", n, got, err)
		}
	}
	v4, v5 := vs[4], vs[5]
	x, _ := NewXTS(v4.key, 512)
	job := append(append([]byte{}, v4.ptx...), v5.ptx...)
	got := make([]byte, len(job))
	if err := x.Encrypt(got, job, v4.seq); err != nil || !bytes.Equal(got[:512], v4.ctx) || !bytes.Equal(got[512:], v5.ctx) {
		t.Errorf("vectors 4+5 as one job: %v", err)
	}
	for _, n := range []int{15, 16, 17, 18} {
		v := vs[n]
		x, _ := NewXTS(v.key, 512)
		got := make([]byte, len(v.ptx))
		x.unitOp(got, v.ptx, v.seq, false)
		if !bytes.Equal(got, v.ctx) {
			t.Errorf("vector %d: stolen %x, want %x", n, got, v.ctx)
		}
		x.unitOp(got, got, v.seq, true)
		if !bytes.Equal(got, v.ptx) {
			t.Errorf("vector %d: decrypt %x", n, got)
		}
	}
}

func TestXTSJobSizeAndTweak(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	for _, c := range []struct {
		unit, job int
		ok        bool
	}{
		// mlx5dv_wr_set_mkey_crypto(3)'s examples.
		{512, 512, true}, {512, 128, true}, {512, 47, false},
		{520, 520, true}, {520, 496, true}, {520, 512, false},
		{520, 1040 + 16, true}, {4096, 4096 + 4080, true}, {4096, 4096 + 4096 - 8, false},
	} {
		x, _ := NewXTS(key, c.unit)
		buf := make([]byte, c.job)
		err := x.Encrypt(buf, buf, 1)
		if (err == nil) != c.ok {
			t.Errorf("unit %d job %d: %v", c.unit, c.job, err)
		}
	}
	if _, err := NewXTS(key[:16], 512); err != ErrKeySize {
		t.Errorf("16-byte key: %v", err)
	}
	if _, err := NewXTS(key, 500); err != ErrUnitSize {
		t.Errorf("unit 500: %v", err)
	}
	x, _ := NewXTS(key, 512)
	if err := x.Encrypt(make([]byte, 1024), make([]byte, 1024), ^uint64(0)); err != ErrTweak {
		t.Errorf("tweak wrap: %v", err)
	}
	if tw, err := Tweak([16]byte{0x9a, 0x78, 0x56, 0x34, 0x12}); tw != 0x123456789a || err != nil {
		t.Errorf("Tweak = %#x, %v", tw, err)
	}
	if _, err := Tweak([16]byte{15: 1}); err != ErrTweak {
		t.Errorf("128-bit tweak: %v", err)
	}
}

// TestXTS520 runs 520-byte units (T10-DIF blocks, ciphertext stealing in
// every unit): each unit equals a lone unit with its own tweak, decryption
// inverts, and no allocation happens per job.
func TestXTS520(t *testing.T) {
	key := bytes.Repeat([]byte{0x5c}, 64)
	x, _ := NewXTS(key, 520)
	src := make([]byte, 4*520)
	for i := range src {
		src[i] = byte(i * 7)
	}
	enc := make([]byte, len(src))
	if err := x.Encrypt(enc, src, 40); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		one := make([]byte, 520)
		x.Encrypt(one, src[i*520:(i+1)*520], 40+uint64(i))
		if !bytes.Equal(one, enc[i*520:(i+1)*520]) {
			t.Errorf("unit %d differs from a lone unit with tweak %d", i, 40+i)
		}
	}
	dec := make([]byte, len(src))
	if err := x.Decrypt(dec, enc, 40); err != nil || !bytes.Equal(dec, src) {
		t.Errorf("decrypt: %v", err)
	}
	if a := testing.AllocsPerRun(10, func() { x.Encrypt(enc, src, 40) }); a != 0 && !raceEnabled {
		t.Errorf("%v allocations per job", a)
	}
}

// BenchmarkXTS520 encrypts 8 data units of 520 bytes (ciphertext stealing).
func BenchmarkXTS520(b *testing.B) {
	x, _ := NewXTS(make([]byte, 64), 520)
	buf := make([]byte, 8*520)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		x.Encrypt(buf, buf, 0)
	}
}
