package model

import (
	"fmt"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
)

// RepeatBlockOp is what libmlx5 writes into the op word of an interleaved
// UMR translation (rdma-core providers/mlx5/qp.c), where a KLM list has an
// mkey: the WQE splitters tell the two apart by it. The public header has
// no name for it.
const RepeatBlockOp = 0x400

// splitNeed is a segment the generated Split walks a WQE with, and the
// fields or parts whose accessors it calls.
type splitNeed struct {
	seg    string
	fields []string
}

// What Split always uses: the control segment's ds and opcode, and the
// inline data header it tells from a data segment by MLX5_INLINE_SEG.
var (
	splitSegs   = []splitNeed{{"mlx5_wqe_ctrl_seg", []string{"ds", "opcode"}}, {"mlx5_wqe_inl_data_seg", nil}}
	splitConsts = []string{"MLX5_INLINE_SEG"}
)

// What the body of a UMR WQE (umr* in a format) adds.
var (
	umrSegs = []splitNeed{
		{"mlx5_wqe_umr_ctrl_seg", []string{"klm_octowords", "flags", "bsf_octowords"}},
		{"mlx5_wqe_umr_repeat_block_seg", []string{"num_ent"}},
		{"mlx5_wqe_umr_klm_seg", nil},
	}
	umrConsts = []string{"MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET"}
)

// splitNeeds reports what the WQE splitter uses that the header and spec
// do not give, so that such a header is a user error here rather than a
// generated package that does not compile.
func (b *builder) splitNeeds() {
	hdr := cheader.Pos{File: b.c.Header, Line: 1, Col: 1}
	b.needs(hdr, "the WQE splitter (Split)", splitSegs, splitConsts)
	for _, f := range b.p.Formats {
		for _, st := range f.Steps {
			if st.Kind == StepUMR {
				b.needs(f.Src.Spec, "wqe format "+f.Name+": umr*", umrSegs, umrConsts)
				return // once is enough
			}
		}
	}
}

func (b *builder) needs(pos fmt.Stringer, who string, segs []splitNeed, consts []string) {
	for _, n := range segs {
		sg := b.segs[n.seg]
		if sg == nil {
			b.errorf(pos, "%s needs segment %s, which neither %s (rdma-core %s) nor the spec declares", who, n.seg, b.c.Header, orUnknown(b.c.Version))
			continue
		}
		var missing []string
		for _, name := range n.fields {
			if !hasAccessor(sg, name) {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			b.errorf(sg.pos(), "%s needs segment %s to have a field or part named %s", who, n.seg, strings.Join(missing, ", "))
		}
	}
	for _, c := range consts {
		if b.consts[c] == nil {
			b.errorf(pos, "%s needs constant %s, which %s (rdma-core %s) does not declare", who, c, b.c.Header, orUnknown(b.c.Version))
		}
	}
}

// hasAccessor reports whether a segment has a field or a part with this C
// name (parts give the accessor of a bit range of a field).
func hasAccessor(sg *Segment, name string) bool {
	for _, f := range sg.Fields {
		if f.CName == name {
			return true
		}
		for _, p := range f.Parts {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}
