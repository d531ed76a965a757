package resolve

import (
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/diag"
	"github.com/mlx5gen/mlx5gen/gen/model"
)

// splitNeed is a segment the generated Split walks a WQE with, and the
// fields or parts whose accessors it calls.
type splitNeed struct {
	seg    string
	fields []string
}

// What Split always uses: the control segment's ds and opcode, and the
// inline data header it tells from a data segment by MLX5_INLINE_SEG
// (model.Splitter's Ctrl and Inline, in this order).
var (
	splitSegs   = []splitNeed{{"mlx5_wqe_ctrl_seg", []string{"ds", "opcode"}}, {"mlx5_wqe_inl_data_seg", nil}}
	splitConsts = []string{"MLX5_INLINE_SEG"}
)

// What the body of a UMR WQE (umr* in a format) adds (model.Splitter's
// UMRCtrl, RepeatBlock and KLM, in this order).
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
	hdr := diag.Pos{File: b.c.Header, Line: 1, Col: 1}
	b.needs(hdr, "the WQE splitter (Split)", splitSegs, splitConsts)
	b.p.Split.Ctrl, b.p.Split.Inline = b.segs[splitSegs[0].seg], b.segs[splitSegs[1].seg]
	for _, f := range b.p.Formats {
		for _, st := range f.Steps {
			if st.Kind == model.StepUMR {
				b.needs(f.Src.Spec, "wqe format "+f.Name+": umr*", umrSegs, umrConsts)
				sp := &b.p.Split
				sp.UMRCtrl, sp.RepeatBlock, sp.KLM = b.segs[umrSegs[0].seg], b.segs[umrSegs[1].seg], b.segs[umrSegs[2].seg]
				return // once is enough
			}
		}
	}
}

func (b *builder) needs(pos diag.Pos, who string, segs []splitNeed, consts []string) {
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
			b.errorf(srcPos(sg.Src), "%s needs segment %s to have a field or part named %s", who, n.seg, strings.Join(missing, ", "))
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
func hasAccessor(sg *model.Segment, name string) bool {
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
