// Package resolve builds the Go model (gen/model) of the C model of the
// header (gen/cheader) refined by the spec descriptors (gen/spec): it
// decides what is generated (gates), resolves every name the spec gives to
// the header's declarations and to the model's pointers, lays out the
// mirrors and checks the spec against the header. Every user error (a spec
// entry naming nothing in the header, a name collision, a field past the
// end of its segment) is found here, with its position, before anything
// is written; the links back to the header and the spec stay here.
//
// One file per concept, as in gen/model: enums.go, segments.go,
// formats.go, split.go (what Split needs), funcs.go, mirrors.go, rules.go,
// argcheck.go, gates.go, prm.go (the PRM layouts).
package resolve

import (
	"go/token"
	"sort"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/gen/diag"
	"github.com/mlx5gen/mlx5gen/gen/model"
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

// builder holds what Build has resolved so far. The links back to the
// header and the spec (the mirrors' records, the functions' descriptors)
// stay here: the Package it returns holds none.
type builder struct {
	c    *cheader.Model
	s    *spec.Spec
	p    *model.Package
	errs diag.List

	enumByC   map[*cheader.Enum]*model.Enum
	enumByGo  map[string]*model.Enum
	enumSpec  map[*model.Enum]*spec.Enum // the spec that describes an enum
	consts    map[string]*model.Const
	segs      map[string]*model.Segment
	idents    map[string]declared // Go identifier -> what declared it
	names     *model.Namer        // of the C types
	funcNames *model.Namer        // of the C functions

	funcs   map[string]*model.Func   // available functions by C name
	mirrors map[string]*model.Mirror // available structs by C name
	mirrorC map[*model.Mirror]*cheader.Record
}

func (b *builder) errorf(pos diag.Pos, format string, args ...any) {
	b.errs.Add(pos, format, args...)
}

// pos is the position an error about the item names: the spec's, if the
// spec describes it, else the header's.
func srcPos(s model.Source) diag.Pos {
	if s.Spec.File != "" {
		return s.Spec
	}
	return s.Header
}

// hpos is a header position as the model keeps it.
func hpos(p cheader.Pos) diag.Pos { return diag.Pos{File: p.File, Line: p.Line, Col: p.Col} }

// declared is what took a Go identifier, and where.
type declared struct {
	what string
	pos  diag.Pos
}

// declare reserves a package-level Go identifier; a second claim is an
// error naming both items and the first one's position.
func (b *builder) declare(pos diag.Pos, name, what string) bool {
	if !token.IsIdentifier(name) {
		b.errorf(pos, "Go name %q of %s is not a Go identifier", name, what)
		return false
	}
	if prev, dup := b.idents[name]; dup {
		at := ""
		if prev.pos.File != "" {
			at = " (" + prev.pos.String() + ")"
		}
		b.errorf(pos, "Go name %s of %s is already used by %s%s", name, what, prev.what, at)
		return false
	}
	b.idents[name] = declared{what, pos}
	return true
}

// Build makes the Go model of c refined by s. Its error is a diag.List of
// every problem found.
func Build(c *cheader.Model, s *spec.Spec, cfg Config) (*model.Package, error) {
	if cfg.Package == "" {
		cfg.Package = "mlx5dv"
	}
	b := &builder{
		c: c, s: s,
		p:        &model.Package{Name: cfg.Package, Header: c.Header, Version: c.Version, Spec: headerSpec(s)},
		enumByC:  map[*cheader.Enum]*model.Enum{},
		enumByGo: map[string]*model.Enum{},
		enumSpec: map[*model.Enum]*spec.Enum{},
		consts:   map[string]*model.Const{},
		segs:     map[string]*model.Segment{},
		idents:   map[string]declared{},
		funcs:    map[string]*model.Func{},
		mirrors:  map[string]*model.Mirror{},
		mirrorC:  map[*model.Mirror]*cheader.Record{},
	}
	for _, n := range model.Reserved() {
		b.idents[n] = declared{what: "the generated package"}
	}
	b.names = model.NewNamer(typeTags(c, s))
	b.funcNames = model.NewNamer(funcNames(c, s))
	b.enums()
	b.constants()
	b.meanings()
	b.segments()
	b.formats()
	b.splitNeeds()
	b.api()
	b.prm()
	if len(b.errs) > 0 {
		return nil, b.errs
	}
	return b.p, nil
}

// headerSpec are the spec files the header's package comes from: all but
// those that describe PRM layouts only (generated/mlx5prm names those).
func headerSpec(s *spec.Spec) []string {
	var files []string
	for _, f := range s.Rel {
		if !s.PRMOnly[f] {
			files = append(files, f)
		}
	}
	return files
}

// typeTags are the tags of every C type the package could name: the
// header's records and enums, and the spec's private segments.
func typeTags(c *cheader.Model, s *spec.Spec) []string {
	var tags []string
	for _, r := range c.Records {
		tags = append(tags, r.Tag)
	}
	for _, e := range c.Enums {
		tags = append(tags, e.Tag, e.Typedef)
	}
	for _, sg := range s.Segments {
		tags = append(tags, sg.C)
	}
	return tags
}

// funcNames are the names of every C function the package could name:
// the header's and the spec's.
func funcNames(c *cheader.Model, s *spec.Spec) []string {
	var names []string
	for _, f := range c.Funcs {
		names = append(names, f.Name)
	}
	for _, f := range s.Functions {
		names = append(names, f.Name)
	}
	return names
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

func posLess(a, b diag.Pos) bool {
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

// inConstFile reports whether f is a header whose every constant is
// generated.
func inConstFile(f string) bool {
	for _, cf := range constFiles {
		if f == cf {
			return true
		}
	}
	return false
}

// intType is the Go integer type of a C integer or enum type.
func intType(t *cheader.Type) (model.IntType, bool) {
	k := t.Kind
	if k == cheader.Enumeration {
		k = t.Enum.Underlying.Kind
	}
	if !k.IsInteger() || k == cheader.Int128 || k == cheader.UInt128 {
		return model.IntType{}, false
	}
	return model.IntType{Bits: int(t.Size) * 8, Signed: k.IsSigned()}, true
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

// sortByHeader sorts items by their header position, constants files first.
func sortByHeader[T any](items []T, pos func(T) diag.Pos) {
	sort.SliceStable(items, func(i, j int) bool { return posLess(pos(items[i]), pos(items[j])) })
}
