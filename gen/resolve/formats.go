package resolve

import (
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// formats resolves the WQE formats.
func (b *builder) formats() {
	opcode := b.enumByGo[model.OpcodeType]
	seen := map[string]string{}
	for _, w := range b.s.Formats {
		f := &model.Format{Name: w.Name, Doc: strings.TrimSpace(w.Doc), Src: model.Source{Spec: w.Pos}}
		for _, o := range w.Opcodes {
			k := b.consts[o]
			if k == nil || opcode == nil || k.Enum != opcode {
				b.errorf(w.Pos, "wqe format %s: %s is not an MLX5_OPCODE_* constant of %s (rdma-core %s)", w.Name, o, b.c.Header, orUnknown(b.c.Version))
				continue
			}
			if prev := seen[o]; prev != "" {
				b.errorf(w.Pos, "wqe format %s: %s already belongs to format %s", w.Name, o, prev)
			}
			seen[o] = w.Name
			f.Opcodes = append(f.Opcodes, k)
		}
		for i, sname := range w.Segments {
			switch sname {
			case "data*":
				f.Steps = append(f.Steps, model.Step{Kind: model.StepData})
			case "umr*":
				if i == 0 || w.Segments[i-1] != "mlx5_wqe_umr_ctrl_seg" {
					b.errorf(w.Pos, "wqe format %s: umr* must follow mlx5_wqe_umr_ctrl_seg", w.Name)
				}
				f.Steps = append(f.Steps, model.Step{Kind: model.StepUMR})
			default:
				sg := b.segs[sname]
				if sg == nil {
					b.errorf(w.Pos, "wqe format %s: no segment %s", w.Name, sname)
					continue
				}
				f.Steps = append(f.Steps, model.Step{Kind: model.StepSegment, Segment: sg})
			}
			if (sname == "data*" || sname == "umr*") && i != len(w.Segments)-1 {
				b.errorf(w.Pos, "wqe format %s: %s must come last", w.Name, sname)
			}
		}
		b.p.Formats = append(b.p.Formats, f)
	}
}
