package resolve

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/diag"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

// api resolves the functions, structs and rules of the spec: functions and
// structs first, as the rules name them.
func (b *builder) api() {
	a := &model.API{NumFuncs: len(b.s.Functions)}
	b.p.API = a
	b.buildFuncs()
	b.buildMirrors()
	b.bindRefs()
	b.buildRules()
	b.chainRules()
	b.uncovered()
}

// uncovered lists what the header offers that no descriptor covers.
func (b *builder) uncovered() {
	a := b.p.API
	for _, f := range b.c.Funcs {
		if f.Pos.File == segmentFile && strings.HasPrefix(f.Name, "mlx5dv_") && b.funcs[f.Name] == nil && specFunc(b.s, f.Name) == nil {
			a.Uncovered = append(a.Uncovered, f.Name+"()")
		}
	}
	for _, r := range b.c.Records {
		if r.Pos.File == segmentFile && strings.HasPrefix(r.Tag, "mlx5dv_") && b.mirrors[r.Tag] == nil && specStruct(b.s, r.Tag) == nil {
			a.Uncovered = append(a.Uncovered, "struct "+r.Tag)
		}
	}
	sort.Strings(a.Uncovered)
}

var spaceRE = regexp.MustCompile(`\s+`)

// normType makes C type spellings comparable: single spaces, none around
// '*', '[' or ']'.
func normType(s string) string {
	s = strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
	for _, t := range []string{"*", "[", "]"} {
		s = strings.ReplaceAll(s, " "+t, t)
		s = strings.ReplaceAll(s, t+" ", t)
	}
	return s
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func specFunc(s *spec.Spec, name string) *spec.Function {
	for _, f := range s.Functions {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func specStruct(s *spec.Spec, name string) *spec.Struct {
	for _, f := range s.Structs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// constant resolves a constant named in the spec.
func (b *builder) constant(pos diag.Pos, name, what string) *model.Const {
	k := b.consts[name]
	if k == nil {
		if c := b.c.Constant(name); c != nil {
			// A constant of the header the package does not generate
			// (from an enum of verbs.h that is not typed, say).
			return &model.Const{Name: name, Value: model.Value(c.ConstValue()), Src: model.Source{Header: hpos(c.Position())}}
		}
		b.errorf(pos, "%s: no constant %s in %s (rdma-core %s)", what, name, b.c.Header, orUnknown(b.c.Version))
	}
	return k
}

// value resolves a number or a constant name.
func (b *builder) value(pos diag.Pos, s, what string) (uint64, bool) {
	if n, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64); err == nil {
		return n, true
	}
	if n, err := strconv.ParseInt(s, 0, 64); err == nil {
		return uint64(n), true
	}
	switch s {
	case "UINT64_MAX":
		return ^uint64(0), true
	case "UINT32_MAX":
		return 0xffffffff, true
	case "UINT16_MAX":
		return 0xffff, true
	}
	if k := b.constant(pos, s, what); k != nil {
		return k.Value.Bits, true
	}
	return 0, false
}

// enumByTag finds the Go enum generated for a C enum tag.
func (b *builder) enumByTag(pos diag.Pos, tag, what string) *model.Enum {
	ce := b.c.Enum(tag)
	if ce == nil {
		b.errorf(pos, "%s: no enum %s in %s (rdma-core %s)", what, tag, b.c.Header, orUnknown(b.c.Version))
		return nil
	}
	e := b.enumByC[ce]
	if e == nil {
		b.errorf(pos, "%s: enum %s is not generated (list it in spec/enums)", what, tag)
	}
	return e
}
