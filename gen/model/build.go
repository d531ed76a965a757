package model

import (
	"fmt"
	"go/token"
	"sort"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

// The header files whose every constant is generated. Enums of other
// files are generated when the spec lists them or a declaration of
// mlx5dv.h uses them.
var constFiles = []string{"infiniband/mlx5dv.h", "infiniband/mlx5_api.h"}

// segmentFile holds the hardware segments: its structs tagged mlx5_*.
const segmentFile = "infiniband/mlx5dv.h"

// Config names the generated package.
type Config struct {
	Package string // Go package name, default "mlx5dv"
}

// Error is a problem found while building the Go model, at a position in
// the spec or the header.
type Error struct {
	Pos fmt.Stringer
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Errors is every problem found.
type Errors []*Error

func (l Errors) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

type builder struct {
	c    *cheader.Model
	s    *spec.Spec
	p    *Package
	errs Errors

	enumByC  map[*cheader.Enum]*Enum
	enumByGo map[string]*Enum
	consts   map[string]*Const
	segs     map[string]*Segment
	idents   map[string]string // Go identifier -> what declared it
}

func (b *builder) errorf(pos fmt.Stringer, format string, args ...any) {
	b.errs = append(b.errs, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// declare reserves a package-level Go identifier.
func (b *builder) declare(pos fmt.Stringer, name, what string) bool {
	if !token.IsIdentifier(name) {
		b.errorf(pos, "Go name %q of %s is not a Go identifier", name, what)
		return false
	}
	if prev, dup := b.idents[name]; dup {
		b.errorf(pos, "Go name %s of %s is already used by %s", name, what, prev)
		return false
	}
	b.idents[name] = what
	return true
}

// Names the generated package declares by itself.
var builtinIdents = []string{"Split", "SplitOptions", "WQESegment", "InlineData", "RawBytes", "SegmentView", "BE16", "BE32", "BE64", "ToBE16", "ToBE32", "ToBE64", "RuleError", "setRuleError", "cloneRuleError", "Rules", "Func", "FuncInfo", "Funcs", "ChainCheck", "ChainError", "NumChainChecks", "NumFuncs", "QPType", "SetterGroup", "NewMirror", "ArgValidators", "RuleInfo", "KindVerb", "KindBuilder", "KindSetter", "KindHelper", "Test", "TestNone", "TestMax", "TestMin", "TestBits", "TestNeedBits", "TestOneOf", "TestZero", "TestNotNull", "TestMultipleOf", "TestNotNegative", "TestEqual", "TestMissing"}

// Build makes the Go model of c refined by s.
func Build(c *cheader.Model, s *spec.Spec, cfg Config) (*Package, error) {
	if cfg.Package == "" {
		cfg.Package = "mlx5dv"
	}
	b := &builder{
		c: c, s: s,
		p:        &Package{Name: cfg.Package, Header: c.Header, Version: c.Version, Spec: s.Rel, C: c},
		enumByC:  map[*cheader.Enum]*Enum{},
		enumByGo: map[string]*Enum{},
		consts:   map[string]*Const{},
		segs:     map[string]*Segment{},
		idents:   map[string]string{},
	}
	for _, n := range builtinIdents {
		b.idents[n] = "the generated package"
	}
	b.enums()
	b.constants()
	b.segments()
	b.formats()
	b.splitNeeds()
	b.api()
	if len(b.errs) > 0 {
		return nil, b.errs
	}
	return b.p, nil
}

func fileRank(f string) int {
	for i, cf := range constFiles {
		if f == cf {
			return i
		}
	}
	if f == "infiniband/verbs.h" {
		return len(constFiles)
	}
	return len(constFiles) + 1
}

func posLess(a, b cheader.Pos) bool {
	if ra, rb := fileRank(a.File), fileRank(b.File); ra != rb {
		return ra < rb
	}
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

func intType(t *cheader.Type) (IntType, bool) {
	k := t.Kind
	if k == cheader.Enumeration {
		k = t.Enum.Underlying.Kind
	}
	if !k.IsInteger() || k == cheader.Int128 || k == cheader.UInt128 {
		return IntType{}, false
	}
	return IntType{Bits: int(t.Size) * 8, Signed: k.IsSigned()}, true
}

// enums decides which C enums become named Go types.
func (b *builder) enums() {
	gated := map[*cheader.Enum]*spec.Enum{}
	for _, se := range b.s.Enums {
		var ce *cheader.Enum
		if se.C != "" {
			ce = b.c.Enum(se.C)
		} else if k, ok := b.c.Constant(se.Anonymous).(*cheader.Enumerator); ok {
			ce = k.Enum
		}
		if !b.gated(se.Pos, "enum "+se.C+se.Anonymous, se.Gate, ce != nil) {
			continue
		}
		if ce == nil {
			what := "enum " + se.C
			if se.C == "" {
				what = "an enum with enumerator " + se.Anonymous
			}
			b.errorf(se.Pos, "%s: not in %s (rdma-core %s)", what, b.c.Header, orUnknown(b.c.Version))
			continue
		}
		if se.C != "" && ce.Tag == "" && ce.Typedef != se.C {
			b.errorf(se.Pos, "enum %s is anonymous in the header", se.C)
			continue
		}
		if prev := gated[ce]; prev != nil {
			b.errorf(se.Pos, "%s is already described at %s", ce.CName(), prev.Pos)
			continue
		}
		gated[ce] = se
	}

	// Enums used by mlx5dv.h declarations are typed too.
	used := map[*cheader.Enum]bool{}
	var visit func(t *cheader.Type, depth int)
	visit = func(t *cheader.Type, depth int) {
		if t == nil || depth > 8 {
			return
		}
		switch t.Kind {
		case cheader.Enumeration:
			used[t.Enum] = true
		case cheader.Pointer, cheader.Array:
			visit(t.Elem, depth+1)
		case cheader.Function:
			visit(t.Func.Result, depth+1)
			for _, p := range t.Func.Params {
				visit(p.Type, depth+1)
			}
		}
	}
	for _, r := range b.c.Records {
		if r.Pos.File == segmentFile {
			for _, f := range r.Fields {
				visit(f.Type, 0)
			}
		}
	}
	for _, f := range b.c.Funcs {
		if f.Pos.File == segmentFile {
			visit(&cheader.Type{Kind: cheader.Function, Func: f.Type}, 0)
		}
	}

	var list []*cheader.Enum
	for _, e := range b.c.Enums {
		inFile := false
		for _, f := range constFiles {
			inFile = inFile || e.Pos.File == f
		}
		_, described := gated[e]
		if described || (e.Tag != "" && (inFile || used[e])) {
			list = append(list, e)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return posLess(list[i].Pos, list[j].Pos) })
	for _, ce := range list {
		se := gated[ce]
		it, _ := intType(&cheader.Type{Kind: cheader.Enumeration, Enum: ce, Size: ce.Underlying.Size})
		e := &Enum{CName: ce.CName(), Underlying: it, Src: Source{Header: ce.Pos}}
		if ce.Tag == "" && ce.Typedef == "" && len(ce.Enumerators) > 0 {
			e.CName = "the anonymous enum that starts with " + ce.Enumerators[0].Name
		}
		name := ce.Tag
		if name == "" {
			name = ce.Typedef
		}
		e.GoName = Camel(name)
		if se != nil {
			e.Flags, e.Man, e.Doc = se.Flags(), se.Man, strings.TrimSpace(se.Doc)
			e.Src.Spec = se.Pos
			if se.Go != "" {
				e.GoName = se.Go
			}
		}
		if !isIdent(e.GoName) {
			b.errorf(e.pos(), "%s: Go name %q is not an exported identifier", e.CName, e.GoName)
			continue
		}
		if !b.declare(e.pos(), e.GoName, e.CName) {
			continue
		}
		b.enumByC[ce] = e
		b.enumByGo[e.GoName] = e
		b.p.Enums = append(b.p.Enums, e)
	}
}

func (e *Enum) pos() fmt.Stringer {
	if e.Src.Spec.File != "" {
		return e.Src.Spec
	}
	return e.Src.Header
}

func gateString(g spec.Gate) string {
	switch {
	case g.Since != "" && g.Until != "":
		return g.Since + " up to " + g.Until
	case g.Since != "":
		return g.Since + " and later"
	case g.Until != "":
		return "before " + g.Until
	}
	return "all releases"
}

func orUnknown(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}

// constants collects the constants to generate, in source order.
func (b *builder) constants() {
	type item struct {
		pos   cheader.Pos
		name  string
		value cheader.Value
		enum  *Enum
		cenum *cheader.Enum
	}
	var items []item
	for _, ce := range b.c.Enums {
		e := b.enumByC[ce]
		inFile := false
		for _, f := range constFiles {
			inFile = inFile || ce.Pos.File == f
		}
		if e == nil && !inFile {
			continue
		}
		for _, x := range ce.Enumerators {
			items = append(items, item{x.Pos, x.Name, x.Value, e, ce})
		}
	}
	for _, m := range b.c.Macros {
		for _, f := range constFiles {
			if m.Pos.File == f {
				items = append(items, item{m.Pos, m.Name, m.Value, nil, nil})
			}
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return posLess(items[i].pos, items[j].pos) })
	for _, it := range items {
		if !b.declare(it.pos, it.name, "constant "+it.name) {
			continue
		}
		k := &Const{Name: it.name, Value: it.value, Enum: it.enum, CEnum: it.cenum, Src: Source{Header: it.pos}}
		if it.enum != nil {
			it.enum.Members = append(it.enum.Members, k)
			if it.enum.Flags && k.Value.Negative() {
				b.errorf(it.pos, "%s: flag set %s has a negative member", it.name, it.enum.CName)
			}
		}
		b.consts[it.name] = k
		b.p.Consts = append(b.p.Consts, k)
	}
}

// Camel turns a C identifier or member path into a Go exported name:
// mlx5_wqe_ctrl_seg -> Mlx5WqeCtrlSeg, key.dc_key -> KeyDcKey.
func Camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		switch {
		case r == '_' || r == '.':
			up = true
		case up && r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			up = false
		default:
			b.WriteRune(r)
			up = false
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" || !(s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
