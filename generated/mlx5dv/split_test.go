package mlx5dv_test

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// The reference vectors (testdata/vectors, from rdma-core's libmlx5): only
// the parts these tests read.
type vectorFile struct {
	Cases []struct {
		ID    string `json:"id"`
		Setup struct {
			QPType string `json:"qp_type"`
		} `json:"setup"`
		Result struct {
			Batches []struct {
				WQEs []vectorWQE `json:"wqes"`
			} `json:"batches"`
		} `json:"result"`
	} `json:"cases"`
}

type vectorWQE struct {
	Hex     string `json:"hex"`
	DsBytes int    `json:"ds_bytes"`
	Ctrl    struct {
		Opmod, WQEIndex, Opcode, QPN, DS, Signature, FmCeSe, Fence, Ce, Se int
		DciStreamChannelID                                                 int    `json:"dci_stream_channel_id"`
		Imm                                                                uint32 `json:"imm"`
	} `json:"ctrl"`
}

func (w *vectorWQE) UnmarshalJSON(b []byte) error {
	type plain vectorWQE
	if err := json.Unmarshal(b, (*plain)(w)); err != nil {
		return err
	}
	// The ctrl object uses snake_case keys.
	var c struct {
		Ctrl map[string]any `json:"ctrl"`
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&c); err != nil {
		return err
	}
	get := func(k string) int {
		n, _ := c.Ctrl[k].(json.Number)
		x, _ := n.Int64()
		return int(x)
	}
	w.Ctrl.Opmod, w.Ctrl.WQEIndex, w.Ctrl.Opcode = get("opmod"), get("wqe_index"), get("opcode")
	w.Ctrl.QPN, w.Ctrl.DS, w.Ctrl.Signature, w.Ctrl.FmCeSe = get("qpn"), get("ds"), get("signature"), get("fm_ce_se")
	w.Ctrl.Fence, w.Ctrl.Ce, w.Ctrl.Se = get("fence"), get("ce"), get("se")
	w.Ctrl.DciStreamChannelID, w.Ctrl.Imm = get("dci_stream_channel_id"), uint32(get("imm"))
	return nil
}

type vectorCase struct {
	file, id string
	dci      bool
	wqe      vectorWQE
	bytes    []byte
}

func loadVectors(t testing.TB) []vectorCase {
	t.Helper()
	files, err := filepath.Glob("../../testdata/vectors/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors in testdata/vectors: %v", err)
	}
	var out []vectorCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var vf vectorFile
		if err := json.Unmarshal(data, &vf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range vf.Cases {
			for _, b := range c.Result.Batches {
				for _, w := range b.WQEs {
					raw, err := hex.DecodeString(w.Hex)
					if err != nil {
						t.Fatalf("%s %s: %v", f, c.ID, err)
					}
					out = append(out, vectorCase{filepath.Base(f), c.ID, strings.HasPrefix(c.Setup.QPType, "DCI"), w, raw})
				}
			}
		}
	}
	return out
}

// TestSplitVectors splits every WQE libmlx5 wrote in the reference vectors,
// checks that the segments tile the WQE up to ds, that the control segment
// decodes to the fields the vectors record, and that re-encoding every
// segment from its decoded fields gives back the same bytes.
func TestSplitVectors(t *testing.T) {
	vs := loadVectors(t)
	segs := 0
	names := map[string]int{}
	for _, v := range vs {
		where := v.file + " " + v.id
		parts, err := mlx5dv.Split(v.bytes, mlx5dv.SplitOptions{DCI: v.dci})
		if err != nil {
			// A raw WQE is whatever the caller wrote: its opcode's
			// format need not fit.
			if v.file != "raw_wqe.json" {
				t.Errorf("%s: %v", where, err)
			}
			continue
		}
		off := 0
		for _, p := range parts {
			names[p.Name]++
			segs++
			if p.Offset != off {
				t.Errorf("%s: segment %s at %d, want %d", where, p.Name, p.Offset, off)
			}
			off += len(p.Raw)
			if got := reencode(t, p); !reflect.DeepEqual(got, p.Raw) {
				t.Errorf("%s: %s at byte %d re-encodes to\n%x, want\n%x", where, p.Name, p.Offset, got, p.Raw)
			}
			if p.Name == "unparsed" && v.file != "raw_wqe.json" {
				t.Errorf("%s: opcode %v has no format", where, parts[0].View.(*mlx5dv.WQECtrlSeg).Opcode())
			}
		}
		if off != v.wqe.DsBytes {
			t.Errorf("%s: segments cover %d bytes, ds gives %d", where, off, v.wqe.DsBytes)
		}
		ctrl := parts[0].View.(*mlx5dv.WQECtrlSeg)
		c := v.wqe.Ctrl
		got := []int{int(ctrl.Opmod()), int(ctrl.WQEIndex()), int(ctrl.Opcode()), int(ctrl.QPN()), int(ctrl.DS()),
			int(ctrl.Signature()), int(ctrl.FmCeSe()), int(ctrl.Fence()), int(ctrl.Ce()), int(ctrl.Se()), int(ctrl.DCIStreamChannelID()), int(ctrl.Imm())}
		want := []int{c.Opmod, c.WQEIndex, c.Opcode, c.QPN, c.DS, c.Signature, c.FmCeSe, c.Fence, c.Ce, c.Se, c.DciStreamChannelID, int(c.Imm)}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ctrl decodes to %v, the vector says %v", where, got, want)
		}
	}
	t.Logf("%d WQEs split into %d segments: %v", len(vs), segs, names)
	if len(vs) < 200 {
		t.Errorf("only %d WQEs in the vectors", len(vs))
	}
}

// reencode decodes a segment's fields and writes them into a zeroed
// segment of the same type.
func reencode(t *testing.T, p mlx5dv.WQESegment) []byte {
	switch v := p.View.(type) {
	case mlx5dv.InlineData:
		out := make([]byte, len(v))
		h := (*mlx5dv.WQEInlDataSeg)(out[:4])
		f := v.Header().Fields()
		h.SetFields(&f)
		copy(out[4:], v.Payload())
		return out
	case mlx5dv.RawBytes:
		return append([]byte(nil), v...)
	}
	rv := reflect.ValueOf(p.View)
	fields := rv.MethodByName("Fields").Call(nil)[0]
	fresh := reflect.New(rv.Elem().Type())
	ptr := reflect.New(fields.Type())
	ptr.Elem().Set(fields)
	fresh.MethodByName("SetFields").Call([]reflect.Value{ptr})
	b := fresh.Elem()
	out := make([]byte, b.Len())
	reflect.Copy(reflect.ValueOf(out), b)
	return out
}
