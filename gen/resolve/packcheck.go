package resolve

import (
	"fmt"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/cheader"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// goLayoutAligns gives every mirror the alignment Go gives its fields
// (GoAlign), a nested mirror's own included.
func goLayoutAligns(mirrors []*model.Mirror) {
	done := map[*model.Mirror]bool{}
	var align func(m *model.Mirror) int64
	align = func(m *model.Mirror) int64 {
		if done[m] {
			return m.GoAlign
		}
		done[m] = true // a mirror holds itself only through pointers
		m.GoAlign = 1
		for _, mf := range m.Fields {
			a := goAlign(mf)
			if mf.Kind == model.MNested {
				a = max(align(mf.Target), mf.Target.Align)
			}
			m.GoAlign = max(m.GoAlign, a)
		}
		return m.GoAlign
	}
	for _, m := range mirrors {
		align(m)
	}
}

// checkGoLayout refuses a mirror that Go cannot lay out as C does: a
// field at an offset its Go type cannot have (a member #pragma pack or
// the packed attribute leaves unaligned), or a size Go would round up.
// Such a field would have to be bytes, and the validators, the runtime
// and the bindings use every mirrored field by its Go type; so the
// mirror is refused, naming what packed the record.
func (b *builder) checkGoLayout(m *model.Mirror) {
	r := b.mirrorC[m]
	why := func() string {
		switch {
		case r.Pack != 0 && pragmaAt(r):
			return fmt.Sprintf("#pragma pack(%d) at %s packs it", r.Pack, r.PackPos)
		case r.Pack != 0:
			// cc/v4 gives a _Pragma operator no position of its own.
			return fmt.Sprintf("pack(%d), set by a _Pragma operator before it, packs it", r.Pack)
		case r.Packed:
			return "__attribute__((packed)) packs it"
		}
		return "its C layout is not Go's"
	}
	pos := r.Pos
	if r.Pack != 0 && pragmaAt(r) {
		pos = r.PackPos
	}
	for _, mf := range m.Fields {
		a := goAlign(mf)
		if mf.Kind == model.MNested {
			a = max(mf.Target.GoAlign, mf.Target.Align)
		}
		if mf.Offset%a != 0 {
			b.errorf(hpos(pos), "struct %s: field %s at offset %d cannot be mirrored: its Go type needs %d-byte alignment and %s (a packed struct of the spec is refused, not mirrored as bytes)",
				m.CName, fieldName(mf), mf.Offset, a, why())
			return
		}
	}
	if m.Size%m.GoAlign != 0 {
		b.errorf(hpos(pos), "struct %s cannot be mirrored: it has %d bytes, which Go would round up to a multiple of %d, and %s (a packed struct of the spec is refused, not mirrored as bytes)",
			m.CName, m.Size, m.GoAlign, why())
	}
}

func fieldName(mf *model.MirrorField) string {
	if mf.CName == "" {
		return "(anonymous union)"
	}
	return mf.CName
}

// pragmaAt reports whether the position of the pack pragma in force for r
// is known: cc/v4 places a _Pragma operator in a file of its own.
func pragmaAt(r *cheader.Record) bool {
	return r.PackPos.File != "" && !strings.HasPrefix(r.PackPos.File, "_Pragma")
}
