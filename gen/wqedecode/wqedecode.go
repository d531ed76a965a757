// Package wqedecode cuts a WQE into its segments and prints their fields by
// name, working from the model (gen/model) of the header mlx5gen reads
// rather than from generated code: mlx5gen wqe decode works for any
// rdma-core release, and the generator never depends on its own output.
//
// It walks a WQE as the generated package's Split does (the control
// segment, then the steps of the WQE format of its opcode) and prints a
// segment as the generated String methods do; TestMatchesGenerated holds
// the two to the same output.
package wqedecode

import (
	"encoding/binary"
	"fmt"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// Segment is one segment of a WQE.
type Segment struct {
	Offset int    // byte offset in the WQE
	Name   string // C name of the segment, or "inline data", "padding", "unparsed"
	Raw    []byte // the segment's bytes, aliasing the WQE
	Text   string // the fields by name, as the generated String prints them
}

// Decoder splits WQEs by a model's segments and WQE formats.
type Decoder struct {
	segs    map[string]*model.Segment
	consts  map[string]*model.Const
	formats map[uint64]*model.Format // by opcode
}

// The segments a WQE always has, and the constant that tells inline data
// from a data segment.
const (
	ctrlSeg   = "mlx5_wqe_ctrl_seg"
	inlineSeg = "mlx5_wqe_inl_data_seg"
	inlineBit = "MLX5_INLINE_SEG"
)

// New makes a decoder for the WQEs of a model.
func New(p *model.Package) (*Decoder, error) {
	d := &Decoder{segs: map[string]*model.Segment{}, consts: map[string]*model.Const{}, formats: map[uint64]*model.Format{}}
	for _, sg := range p.Segments {
		d.segs[sg.CName] = sg
	}
	for _, c := range p.Consts {
		d.consts[c.Name] = c
	}
	for _, f := range p.Formats {
		for _, o := range f.Opcodes {
			d.formats[o.Value.Bits] = f
		}
	}
	for _, need := range []struct{ seg, acc string }{{ctrlSeg, "ds"}, {ctrlSeg, "opcode"}, {inlineSeg, ""}} {
		sg := d.segs[need.seg]
		if sg == nil {
			return nil, fmt.Errorf("wqe decode: the model has no segment %s", need.seg)
		}
		if need.acc != "" {
			if _, ok := intAt(sg, nil, need.acc); !ok {
				return nil, fmt.Errorf("wqe decode: segment %s has no field or part %s", need.seg, need.acc)
			}
		}
	}
	if d.consts[inlineBit] == nil {
		return nil, fmt.Errorf("wqe decode: the model has no constant %s", inlineBit)
	}
	return d, nil
}

// splitter walks a WQE, appending the segments it finds.
type splitter struct {
	d    *Decoder
	wqe  []byte
	off  int
	segs []Segment
}

// Split cuts a WQE into its segments: the control segment (then, posted on
// a DC initiator, the address vector), then what the WQE format of the
// opcode says, up to the ds the control segment gives. Bytes it cannot
// interpret come back raw; a WQE whose ds or contents do not fit is an
// error, with the segments found so far.
func (d *Decoder) Split(wqe []byte, dci bool) ([]Segment, error) {
	ctrl := d.segs[ctrlSeg]
	if len(wqe) < ctrl.Size {
		return nil, fmt.Errorf("split: %d bytes is shorter than a control segment", len(wqe))
	}
	ds, _ := intAt(ctrl, wqe, "ds")
	opcode, _ := intAt(ctrl, wqe, "opcode")
	end := 16 * int(ds)
	if end < ctrl.Size || end > len(wqe) {
		return nil, fmt.Errorf("split: ds %d (%d bytes) does not fit the %d-byte WQE", ds, end, len(wqe))
	}
	s := &splitter{d: d, wqe: wqe[:end]}
	s.add(ctrlSeg, ctrl.Size, Text(ctrl, wqe))
	if dci {
		if err := s.fixed("mlx5_wqe_av"); err != nil {
			return s.segs, err
		}
	}
	f := d.formats[opcode]
	if f == nil {
		s.rest("unparsed", len(s.wqe))
	}
	for i, st := range stepsOf(f) {
		var err error
		switch st.Kind {
		case model.StepSegment:
			err = s.fixed(st.Segment.CName)
		case model.StepData:
			err = s.data()
		case model.StepUMR:
			// The model puts umr* right after the UMR control segment.
			prev := f.Steps[i-1].Segment
			err = s.umr(prev, s.segs[len(s.segs)-1].Raw)
		}
		if err != nil {
			return s.segs, err
		}
	}
	s.rest("padding", len(s.wqe))
	return s.segs, nil
}

func stepsOf(f *model.Format) []model.Step {
	if f == nil {
		return nil
	}
	return f.Steps
}

func (s *splitter) add(name string, n int, text string) {
	s.segs = append(s.segs, Segment{Offset: s.off, Name: name, Raw: s.wqe[s.off : s.off+n], Text: text})
	s.off += n
}

// fixed adds one segment of a known type.
func (s *splitter) fixed(cname string) error {
	sg := s.d.segs[cname]
	if sg == nil {
		return fmt.Errorf("split: at byte %d: the model has no segment %s", s.off, cname)
	}
	if s.off+sg.Size > len(s.wqe) {
		return fmt.Errorf("split: %s (%d bytes) at byte %d runs past the %d bytes ds gives", cname, sg.Size, s.off, len(s.wqe))
	}
	s.add(cname, sg.Size, Text(sg, s.wqe[s.off:]))
	return nil
}

// rest adds what is left up to end as raw bytes.
func (s *splitter) rest(name string, end int) {
	if s.off < end {
		s.add(name, end-s.off, "bytes{"+hexOf(s.wqe[s.off:end])+"}")
	}
}

// data adds data segments, or inline data, up to the end of the WQE.
func (s *splitter) data() error {
	inl := s.d.segs[inlineSeg]
	bit := uint32(s.d.consts[inlineBit].Value.Bits)
	for s.off < len(s.wqe) {
		if len(s.wqe)-s.off < 4 {
			return fmt.Errorf("split: %d stray bytes at byte %d", len(s.wqe)-s.off, s.off)
		}
		bc := binary.BigEndian.Uint32(s.wqe[s.off:])
		if bc&bit == 0 {
			if err := s.fixed("mlx5_wqe_data_seg"); err != nil {
				return err
			}
			continue
		}
		n := inl.Size + int(bc&^bit)
		if s.off+n > len(s.wqe) {
			return fmt.Errorf("split: inline data of %d bytes at byte %d runs past the %d bytes ds gives", n-inl.Size, s.off, len(s.wqe))
		}
		b := s.wqe[s.off : s.off+n]
		s.add("inline data", n, "inline{"+Text(inl, b)+", data: "+hexOf(b[inl.Size:])+"}")
		pad := (s.off + 15) &^ 15
		s.rest("padding", min(pad, len(s.wqe)))
	}
	return nil
}
