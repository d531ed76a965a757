package wqedecode_test

import (
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/wqedecode"
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	"github.com/mlx5gen/mlx5gen/internal/vectors"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

var (
	loadOnce sync.Once
	model44  *model.Package
	loadErr  error
)

// load builds the model of the header generated/mlx5dv was generated from
// (rdma-core 44.0, the embedded spec).
func load(t testing.TB) *wqedecode.Decoder {
	t.Helper()
	loadOnce.Do(func() {
		root, err := rdmacore.IncludeRoot(".", "44.0")
		if err != nil {
			loadErr = err
			return
		}
		res, err := gen.Load(gen.Config{IncludeRoot: root, Spec: specfiles.FS})
		if err != nil {
			loadErr = err
			return
		}
		model44 = res.Package
	})
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	d, err := wqedecode.New(model44)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// same checks that the model's split and print of wqe is the generated
// package's, byte for byte, errors included.
func same(t testing.TB, d *wqedecode.Decoder, wqe []byte, dci bool) {
	t.Helper()
	want, wantErr := mlx.Split(wqe, mlx.SplitOptions{DCI: dci})
	got, gotErr := d.Split(wqe, dci)
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && strings.TrimPrefix(wantErr.Error(), "mlx5dv: ") != gotErr.Error() {
		t.Fatalf("WQE %x (dci %v): error %v; generated Split: %v", wqe, dci, gotErr, wantErr)
	}
	if len(got) != len(want) {
		t.Fatalf("WQE %x (dci %v): %d segments; generated Split: %d", wqe, dci, len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Offset != w.Offset || g.Name != w.Name || string(g.Raw) != string(w.Raw) || g.Text != w.View.String() {
			t.Fatalf("WQE %x (dci %v), segment %d:\n got %d %s %s\nwant %d %s %s", wqe, dci, i, g.Offset, g.Name, g.Text, w.Offset, w.Name, w.View)
		}
	}
}

// TestMatchesGenerated: every WQE of the reference vectors, split and
// printed from the model, reads as the generated package prints it.
func TestMatchesGenerated(t *testing.T) {
	d := load(t)
	files, err := filepath.Glob("../../testdata/vectors/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors: %v", err)
	}
	n := 0
	for _, path := range files {
		f, err := vectors.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range f.Cases {
			for _, b := range c.Result.Batches {
				for _, w := range b.WQEs {
					wqe, err := vectors.Bytes(w.Hex)
					if err != nil {
						t.Fatal(err)
					}
					same(t, d, wqe, c.Setup.DCI())
					n++
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d WQEs in the vectors", n)
	}
}

// TestMatchesGeneratedRandom: random WQEs of every opcode, with random ds,
// inline bits, UMR octoword counts and BSF types, split the same way, bad
// ones with the same errors.
func TestMatchesGeneratedRandom(t *testing.T) {
	d := load(t)
	var opcodes []uint8
	for _, f := range model44.Formats {
		for _, o := range f.Opcodes {
			opcodes = append(opcodes, uint8(o.Value.Bits))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		same(t, d, randomWQE(r, opcodes), r.IntN(4) == 0)
	}
}

// randomWQE makes a WQE that is mostly well-formed, so that the walk goes
// deep: a known opcode, a ds within the bytes, and structure in the body.
func randomWQE(r *rand.Rand, opcodes []uint8) []byte {
	n := 16 * (1 + r.IntN(20))
	wqe := make([]byte, n+16*r.IntN(2))
	for i := range wqe {
		if r.IntN(3) == 0 {
			wqe[i] = byte(r.Uint32())
		}
	}
	op := opcodes[r.IntN(len(opcodes))]
	if r.IntN(10) == 0 {
		op = byte(r.Uint32())
	}
	wqe[3] = op
	ds := n / 16
	if r.IntN(10) == 0 {
		ds = r.IntN(64)
	}
	wqe[7] = wqe[7]&^0x3f | byte(ds)
	// Data segments and inline data, past the fixed segments of a format.
	for off := 16 + 16*r.IntN(4); off+4 <= len(wqe); off += 16 * (1 + r.IntN(3)) {
		if r.IntN(2) == 0 {
			binary.BigEndian.PutUint32(wqe[off:], 0x80000000|uint32(r.IntN(40)))
		} else {
			binary.BigEndian.PutUint32(wqe[off:], uint32(r.IntN(1<<12)))
		}
	}
	if op == 0x25 && len(wqe) >= 64 { // MLX5_OPCODE_UMR: klm and BSF octowords, flags
		binary.BigEndian.PutUint16(wqe[20:], uint16(r.IntN(12)))
		binary.BigEndian.PutUint16(wqe[22:], uint16(4*r.IntN(3)+r.IntN(2)))
		wqe[16] = byte(r.IntN(2)) << 4 // MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET
		// After the mkey context (64..128): a repeat block's op word, its
		// num_ent; BSF type 1 (crypto) somewhere.
		if len(wqe) >= 144 && r.IntN(2) == 0 {
			binary.BigEndian.PutUint32(wqe[132:], model.RepeatBlockOp)
			binary.BigEndian.PutUint16(wqe[142:], uint16(r.IntN(5)))
		}
		for off := 128; off < len(wqe); off += 64 {
			if r.IntN(3) == 0 {
				wqe[off] = 1
			}
		}
	}
	return wqe
}

// FuzzMatchesGenerated: any bytes split and print as the generated package
// does.
func FuzzMatchesGenerated(f *testing.F) {
	d := load(f)
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20; i++ {
		f.Add(randomWQE(r, []uint8{0x08, 0x0a, 0x25, 0x11}), false)
	}
	f.Fuzz(func(t *testing.T, wqe []byte, dci bool) {
		if len(wqe) > 1024 {
			return
		}
		same(t, d, wqe, dci)
	})
}

// TestModelWithoutSegments: a model that lacks what a WQE needs is an
// error naming it, at New for the control and inline segments, at Split for
// a segment a WQE reaches.
func TestModelWithoutSegments(t *testing.T) {
	load(t)
	if _, err := wqedecode.New(&model.Package{}); err == nil || !strings.Contains(err.Error(), "no segment mlx5_wqe_ctrl_seg") {
		t.Errorf("New of an empty model: %v", err)
	}
	p := *model44
	p.Segments = nil
	for _, sg := range model44.Segments {
		if sg.CName != "mlx5_wqe_av" {
			p.Segments = append(p.Segments, sg)
		}
	}
	d, err := wqedecode.New(&p)
	if err != nil {
		t.Fatal(err)
	}
	wqe := make([]byte, 64)
	wqe[3], wqe[7] = 0x0a, 4 // MLX5_OPCODE_SEND, ds 4
	if _, err := d.Split(wqe, true); err == nil || err.Error() != "split: at byte 16: the model has no segment mlx5_wqe_av" {
		t.Errorf("a DCI WQE without mlx5_wqe_av in the model: %v", err)
	}
}
