package wqedecode

import (
	"fmt"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// The CQE layouts and the opcodes that pick the error layout.
const (
	cqeSeg    = "mlx5_cqe64"
	errCQESeg = "mlx5_err_cqe"
	req       = "MLX5_CQE_REQ"
	reqErr    = "MLX5_CQE_REQ_ERR"
	respErr   = "MLX5_CQE_RESP_ERR"
)

// CQE is a decoded 64-byte CQE.
type CQE struct {
	Layout string     // mlx5_cqe64, or mlx5_err_cqe for an error CQE
	Opcode string     // the CQE opcode's name (the high nibble of op_own)
	Fields []CQEField // every field of the layout, reserved ones too
	// An error CQE's syndrome: its name, the spec's meaning of it (""
	// if none), and the vendor syndrome beside it.
	Err            bool
	Syndrome       string
	Meaning        string
	VendorSyndrome uint64
	// WQEOpcode names the send WQE's opcode a requester CQE carries in
	// its byte 56 (s_wqe_opcode_qpn of an error CQE); "" for others.
	WQEOpcode string
}

// CQEField is one field of a CQE.
type CQEField struct {
	Offset int    // byte offset in the 64-byte CQE
	Name   string // C name
	Text   string // the value as the generated String prints it
}

// CQE decodes a 64-byte CQE by the model's mlx5_cqe64, or, for an error
// CQE, by mlx5_err_cqe, whose syndrome is explained by the meaning the
// spec gives its enum member. b must be exactly 64 bytes: a 128-byte
// CQE's second half.
func (d *Decoder) CQE(b []byte) (*CQE, error) {
	cqe, errSeg := d.segs[cqeSeg], d.segs[errCQESeg]
	if cqe == nil || errSeg == nil {
		return nil, fmt.Errorf("cqe decode: the model lacks %s or %s", cqeSeg, errCQESeg)
	}
	if len(b) != cqe.Size || len(b) != errSeg.Size {
		return nil, fmt.Errorf("cqe decode: %d bytes, a CQE is %d", len(b), cqe.Size)
	}
	op, ok := intAt(cqe, b, "opcode")
	if !ok {
		return nil, fmt.Errorf("cqe decode: %s has no opcode part", cqeSeg)
	}
	out := &CQE{Layout: cqeSeg, Opcode: enumPartText(cqe, "opcode", op)}
	seg := cqe
	for _, name := range []string{reqErr, respErr} {
		if k := d.consts[name]; k != nil && k.Value.Bits == op {
			seg, out.Layout, out.Err = errSeg, errCQESeg, true
		}
	}
	for _, f := range seg.Fields {
		var w strings.Builder
		writeField(&w, f, b[f.Offset:f.Offset+f.Size()])
		out.Fields = append(out.Fields, CQEField{Offset: f.Offset, Name: f.CName, Text: w.String()})
	}
	for _, name := range []string{req, reqErr} {
		if k := d.consts[name]; k != nil && k.Value.Bits == op {
			if v, ok := intAt(errSeg, b, "wqe_opcode"); ok {
				out.WQEOpcode = enumPartText(d.segs[ctrlSeg], "opcode", v)
			}
		}
	}
	if !out.Err {
		return out, nil
	}
	out.VendorSyndrome, _ = intAt(errSeg, b, "vendor_err_synd")
	synd, _ := intAt(errSeg, b, "syndrome")
	out.Syndrome = fmt.Sprintf("%#x", synd)
	if f := fieldOf(errSeg, "syndrome"); f != nil && f.Enum != nil {
		var w strings.Builder
		writeValue(&w, synd, f.Enum)
		out.Syndrome = w.String()
		out.Meaning = meaningOf(f.Enum, synd)
	}
	return out, nil
}

// enumPartText prints v by the enum of sg's field or part name (the
// send opcode's enum is the control segment's opcode part's), or in hex.
func enumPartText(sg *model.Segment, name string, v uint64) string {
	var e *model.Enum
	if sg != nil {
		for _, f := range sg.Fields {
			if f.CName == name {
				e = f.Enum
			}
			for _, p := range f.Parts {
				if p.Name == name {
					e = p.Enum
				}
			}
		}
	}
	var w strings.Builder
	writeValue(&w, v, e)
	return w.String()
}

func fieldOf(sg *model.Segment, name string) *model.Field {
	for _, f := range sg.Fields {
		if f.CName == name {
			return f
		}
	}
	return nil
}

// meaningOf returns the spec's meaning of value v of e, or "".
func meaningOf(e *model.Enum, v uint64) string {
	v = convert(v, e.Underlying)
	for _, m := range e.Members {
		if m.Value.Bits == v {
			return m.Meaning
		}
	}
	return ""
}
