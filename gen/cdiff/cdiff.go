// Package cdiff compares two C models of mlx5dv.h (two rdma-core releases):
// the functions, structs and unions, their fields and layouts, the enum
// types, the integer constants (enumerators, flags among them, and
// macros) and the other macros (by their replacement tokens) that were
// added, removed or changed. Fields that only moved, all of one struct
// together, are one change. It is what a user reads when rdma-core moves.
package cdiff

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
)

// Kinds of declarations.
const (
	KindFunction = "function"
	KindRecord   = "struct" // or union: the name says which
	KindField    = "field"
	KindLayout   = "layout"
	KindEnum     = "enum"
	KindConstant = "constant"
)

// What happened to a declaration.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Change is one difference.
type Change struct {
	Kind   string `json:"kind"`
	Change string `json:"change"`
	Name   string `json:"name"`
	Old    string `json:"old,omitempty"` // the declaration before (removed, changed)
	New    string `json:"new,omitempty"` // after (added, changed)
	File   string `json:"file"`          // where it is declared (in the newer header when it exists)
}

// Side describes one of the two headers.
type Side struct {
	Version     string `json:"rdma_core"`
	IncludeRoot string `json:"include_root"`
}

// Report is the comparison of two models.
type Report struct {
	Old     Side     `json:"old"`
	New     Side     `json:"new"`
	Changes []Change `json:"changes"`
}

// Count returns how many changes of the kind are of the change ("" for
// all).
func (r *Report) Count(kind, change string) int {
	n := 0
	for _, c := range r.Changes {
		if (kind == "" || c.Kind == kind) && (change == "" || c.Change == change) {
			n++
		}
	}
	return n
}

// Compare compares the declarations of the rdma-core headers of two
// models.
func Compare(old, new *cheader.Model) *Report {
	r := &Report{
		Old:     Side{old.Version, old.IncludeRoot},
		New:     Side{new.Version, new.IncludeRoot},
		Changes: []Change{}, // JSON: [] when nothing changed
	}
	r.funcs(old, new)
	r.records(old, new)
	r.enums(old, new)
	r.constants(old, new)
	r.macros(old, new)
	slices.SortStableFunc(r.Changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(kindOrder(a.Kind), kindOrder(b.Kind)), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Change, b.Change))
	})
	return r
}

func kindOrder(k string) int {
	return slices.Index([]string{KindFunction, KindRecord, KindLayout, KindOffsets, KindField, KindEnum, KindConstant, KindMacro}, k)
}

func (r *Report) add(kind, change, name, old, new string, pos cheader.Pos) {
	r.Changes = append(r.Changes, Change{Kind: kind, Change: change, Name: name, Old: old, New: new, File: pos.String()})
}

// diffMaps reports the keys only in a, only in b, and in both.
func diffMaps[T any](a, b map[string]T, removed, added func(string, T), both func(string, T, T)) {
	for _, k := range sortedKeys(a) {
		if v, ok := b[k]; ok {
			both(k, a[k], v)
		} else {
			removed(k, a[k])
		}
	}
	for _, k := range sortedKeys(b) {
		if _, ok := a[k]; !ok {
			added(k, b[k])
		}
	}
}

func sortedKeys[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Signature is a function's prototype as C writes it.
func Signature(f *cheader.Func) string {
	var b strings.Builder
	if f.Static {
		b.WriteString("static ")
	}
	if f.Inline {
		b.WriteString("inline ")
	}
	b.WriteString(spell(f.Type.Result))
	b.WriteString(" ")
	b.WriteString(f.Name)
	b.WriteString("(")
	for i, p := range f.Type.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(spell(p.Type))
		if p.Name != "" {
			b.WriteString(" " + p.Name)
		}
	}
	if f.Type.Variadic {
		b.WriteString(", ...")
	}
	if len(f.Type.Params) == 0 && !f.Type.Variadic {
		b.WriteString("void")
	}
	b.WriteString(")")
	return b.String()
}

func (r *Report) funcs(old, new *cheader.Model) {
	index := func(m *cheader.Model) map[string]*cheader.Func {
		out := map[string]*cheader.Func{}
		for _, f := range m.Funcs {
			out[f.Name] = f
		}
		return out
	}
	// A function that became a function-like macro (a wrapper that picks
	// a versioned symbol) still compiles for callers: a change, not a
	// removal.
	macros := map[string]*cheader.Skipped{}
	for _, m := range new.Skipped {
		if m.Reason == cheader.SkipFunctionLike {
			macros[m.Name] = m
		}
	}
	diffMaps(index(old), index(new),
		func(n string, f *cheader.Func) {
			if m := macros[n]; m != nil {
				r.add(KindFunction, Changed, n, Signature(f), "#define "+n+"(...) "+strings.Join(strings.Fields(m.Replacement), " "), m.Pos)
				return
			}
			r.add(KindFunction, Removed, n, Signature(f), "", f.Pos)
		},
		func(n string, f *cheader.Func) { r.add(KindFunction, Added, n, "", Signature(f), f.Pos) },
		func(n string, a, b *cheader.Func) {
			// Parameter names are documentation; a change of types is
			// what breaks callers.
			if sa, sb := Signature(a), Signature(b); typesOnly(a) != typesOnly(b) {
				r.add(KindFunction, Changed, n, sa, sb, b.Pos)
			}
		})
}

func typesOnly(f *cheader.Func) string {
	s := spell(f.Type.Result) + "("
	for _, p := range f.Type.Params {
		s += spell(p.Type) + ","
	}
	return fmt.Sprint(s, f.Type.Variadic, ")")
}

func layout(rec *cheader.Record) string {
	return fmt.Sprintf("size %d, align %d", rec.Size, rec.Align)
}

func member(m cheader.Member) string {
	t := spell(m.Field.Type)
	if m.Field.Bitfield {
		return fmt.Sprintf("%s:%d at bit %d", t, m.Field.BitWidth, m.BitOffset)
	}
	return fmt.Sprintf("%s at %d", t, m.Offset)
}

// anonPos matches the position in the name of an anonymous record or
// enum, which moves whenever a line is added above it.
var anonPos = regexp.MustCompile(`<anonymous at [^>]*>`)

// spell is a type's C spelling without the positions of anonymous types.
func spell(t *cheader.Type) string { return anonPos.ReplaceAllString(t.Spelling(), "<anonymous>") }

func (r *Report) records(old, new *cheader.Model) {
	index := func(m *cheader.Model) map[string]*cheader.Record {
		out := map[string]*cheader.Record{}
		for _, rec := range m.Records {
			if rec.Tag != "" && !rec.External && !rec.Incomplete {
				out[rec.CName()] = rec
			}
		}
		return out
	}
	diffMaps(index(old), index(new),
		func(n string, rec *cheader.Record) { r.add(KindRecord, Removed, n, layout(rec), "", rec.Pos) },
		func(n string, rec *cheader.Record) { r.add(KindRecord, Added, n, "", layout(rec), rec.Pos) },
		func(n string, a, b *cheader.Record) {
			if la, lb := layout(a), layout(b); la != lb {
				r.add(KindLayout, Changed, n, la, lb, b.Pos)
			}
			fields := func(rec *cheader.Record) map[string]cheader.Member {
				out := map[string]cheader.Member{}
				for _, m := range rec.Members() {
					out[m.Path] = m
				}
				return out
			}
			var both [][2]cheader.Member
			diffMaps(fields(a), fields(b),
				func(p string, m cheader.Member) { r.add(KindField, Removed, n+"."+p, member(m), "", m.Field.Pos) },
				func(p string, m cheader.Member) { r.add(KindField, Added, n+"."+p, "", member(m), m.Field.Pos) },
				func(p string, x, y cheader.Member) { both = append(both, [2]cheader.Member{x, y}) })
			r.fieldChanges(n, both)
		})
}

func (r *Report) enums(old, new *cheader.Model) {
	index := func(m *cheader.Model) map[string]*cheader.Enum {
		out := map[string]*cheader.Enum{}
		for _, e := range m.Enums {
			if (e.Tag != "" || e.Typedef != "") && !e.External {
				out[e.CName()] = e
			}
		}
		return out
	}
	desc := func(e *cheader.Enum) string {
		return fmt.Sprintf("%d enumerators, %s", len(e.Enumerators), e.Underlying.Spelling())
	}
	diffMaps(index(old), index(new),
		func(n string, e *cheader.Enum) { r.add(KindEnum, Removed, n, desc(e), "", e.Pos) },
		func(n string, e *cheader.Enum) { r.add(KindEnum, Added, n, "", desc(e), e.Pos) },
		func(n string, a, b *cheader.Enum) {
			if a.Underlying.Spelling() != b.Underlying.Spelling() {
				r.add(KindEnum, Changed, n, desc(a), desc(b), b.Pos)
			}
		})
}

// constant describes a constant: its value in hex (flags read better so),
// its type, and the enum it belongs to.
func constant(c cheader.Constant) string {
	v := c.ConstValue()
	s := "0x" + strings.ToLower(fmt.Sprintf("%x", v.Uint64()))
	if v.Negative() {
		s = v.String()
	}
	s += " " + spell(c.ConstType())
	if e, ok := c.(*cheader.Enumerator); ok {
		s += " (" + anonPos.ReplaceAllString(e.Enum.CName(), "<anonymous>") + ")"
	} else {
		s += " (macro)"
	}
	return s
}

func (r *Report) constants(old, new *cheader.Model) {
	index := func(m *cheader.Model) map[string]cheader.Constant {
		out := map[string]cheader.Constant{}
		for _, c := range m.Constants() {
			if e, ok := c.(*cheader.Enumerator); ok && e.Enum.External {
				continue
			}
			out[c.ConstName()] = c
		}
		return out
	}
	diffMaps(index(old), index(new),
		func(n string, c cheader.Constant) { r.add(KindConstant, Removed, n, constant(c), "", c.Position()) },
		func(n string, c cheader.Constant) { r.add(KindConstant, Added, n, "", constant(c), c.Position()) },
		func(n string, a, b cheader.Constant) {
			if ca, cb := constant(a), constant(b); ca != cb {
				r.add(KindConstant, Changed, n, ca, cb, b.Position())
			}
		})
}

// WriteTable prints the releases and the counts of changes, the include
// roots compared (old:, new:), and a table, a row per change, lines about
// MaxWidth columns wide at most: a declaration longer than the OLD or NEW
// column is marked there with "↓" and printed whole on the lines under
// its row, wrapped between words; a name or file longer than its column
// keeps its start and end around an ellipsis.
func (r *Report) WriteTable(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "rdma-core %s -> %s: %d added, %d removed, %d changed\nold: %s\nnew: %s\n",
		orUnknown(r.Old.Version), orUnknown(r.New.Version),
		r.Count("", Added), r.Count("", Removed), r.Count("", Changed), r.Old.IncludeRoot, r.New.IncludeRoot); err != nil {
		return err
	}
	if len(r.Changes) == 0 {
		return nil
	}
	return r.writeRows(w)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orUnknown(v string) string {
	if v == "" {
		return "(version unknown)"
	}
	return v
}
