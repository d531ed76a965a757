package cdiff

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
)

// Kinds of changes beyond the declarations' own.
const (
	// KindOffsets is the fields of one struct that keep their type and
	// move together (a member inserted or grown before them): one change
	// per struct instead of one per field.
	KindOffsets = "offsets"
	// KindMacro is a macro that is not an integer constant (function-like
	// ones above all: ibv_reg_mr picks a symbol by its arguments) whose
	// replacement tokens changed, or that was added or removed.
	KindMacro = "macro"
)

// memberType is a member without its position.
func memberType(m cheader.Member) string {
	t := spell(m.Field.Type)
	if m.Field.Bitfield {
		return fmt.Sprintf("%s:%d", t, m.Field.BitWidth)
	}
	return t
}

// fieldChanges reports the fields of record n that changed. Those that
// only moved (the same type at another offset) are one KindOffsets change
// when there are two or more, else a field change.
func (r *Report) fieldChanges(n string, pairs [][2]cheader.Member) {
	var moved [][2]cheader.Member
	for _, p := range pairs {
		x, y := p[0], p[1]
		if member(x) == member(y) {
			continue
		}
		if memberType(x) == memberType(y) {
			moved = append(moved, p)
			continue
		}
		r.add(KindField, Changed, n+"."+y.Path, member(x), member(y), y.Field.Pos)
	}
	if len(moved) == 1 {
		x, y := moved[0][0], moved[0][1]
		r.add(KindField, Changed, n+"."+y.Path, member(x), member(y), y.Field.Pos)
		return
	}
	if len(moved) == 0 {
		return
	}
	slices.SortStableFunc(moved, func(a, b [2]cheader.Member) int { return int(a[0].BitOffset - b[0].BitOffset) })
	first, last := moved[0], moved[len(moved)-1]
	lo, hi := first[1].BitOffset-first[0].BitOffset, first[1].BitOffset-first[0].BitOffset
	for _, p := range moved {
		d := p[1].BitOffset - p[0].BitOffset
		lo, hi = min(lo, d), max(hi, d)
	}
	r.add(KindOffsets, Changed, n,
		fmt.Sprintf("%d fields, .%s to .%s", len(moved), first[0].Path, last[0].Path),
		"moved "+shift(lo, hi), first[1].Field.Pos)
}

// shift says how far fields moved: "+16 bytes", "-4 to +8 bytes", in bits
// when a shift is not whole bytes.
func shift(lo, hi int64) string {
	unit, div := "bytes", int64(8)
	if lo%8 != 0 || hi%8 != 0 {
		unit, div = "bits", 1
	}
	if lo == hi {
		return fmt.Sprintf("%+d %s", lo/div, unit)
	}
	return fmt.Sprintf("%+d to %+d %s", lo/div, hi/div, unit)
}

// cToken matches one C token of a macro's replacement: whitespace between
// tokens does not change a macro.
var cToken = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*|\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.])*|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|##|->|<<=|>>=|\.\.\.|[-+*/%&|^<>!=]=|<<|>>|&&|\|\||\+\+|--|\S`)

// tokens is a replacement's tokens joined by single spaces.
func tokens(s string) string { return strings.Join(cToken.FindAllString(s, -1), " ") }

// macroText is how a skipped macro reads in the report (its whitespace
// collapsed).
func macroText(m *cheader.Skipped) string {
	body := strings.Join(strings.Fields(m.Replacement), " ")
	if m.Reason == cheader.SkipFunctionLike {
		return "#define " + m.Name + "(...) " + body
	}
	return "#define " + m.Name + " " + body
}

// macros compares the macros that are not integer constants (those are
// compared by value): by their replacement tokens. A macro added or removed
// under the name of a function (a function that became a macro, a wrapper
// macro over a function) is left to the function's comparison; a wrapper
// macro whose body changed (ibv_reg_mr, 44.0 to 44.12) is a macro change.
func (r *Report) macros(old, new *cheader.Model) {
	funcs := map[string]bool{}
	for _, m := range []*cheader.Model{old, new} {
		for _, f := range m.Funcs {
			funcs[f.Name] = true
		}
	}
	index := func(m *cheader.Model) map[string]*cheader.Skipped {
		out := map[string]*cheader.Skipped{}
		for _, s := range m.Skipped {
			if s.Reason != cheader.SkipGuard && rdmaFile(s.Pos.File) {
				out[s.Name] = s
			}
		}
		return out
	}
	diffMaps(index(old), index(new),
		func(n string, m *cheader.Skipped) {
			if !funcs[n] {
				r.add(KindMacro, Removed, n, macroText(m), "", m.Pos)
			}
		},
		func(n string, m *cheader.Skipped) {
			if !funcs[n] {
				r.add(KindMacro, Added, n, "", macroText(m), m.Pos)
			}
		},
		func(n string, a, b *cheader.Skipped) {
			if a.Reason != b.Reason || tokens(a.Replacement) != tokens(b.Replacement) {
				r.add(KindMacro, Changed, n, macroText(a), macroText(b), b.Pos)
			}
		})
}

// rdmaFile says whether a header is rdma-core's (or the kernel's RDMA
// uapi), not libc's.
func rdmaFile(f string) bool {
	f = strings.TrimPrefix(f, "/")
	return strings.HasPrefix(f, "infiniband/") || strings.HasPrefix(f, "rdma/") ||
		strings.Contains(f, "/infiniband/") || strings.Contains(f, "/rdma/")
}

// MaxWidth is the width WriteTable's lines aim at: the OLD and NEW columns
// share what the others leave, minDeclWidth each at least; a name or file
// is elided only past maxNameWidth or maxFileWidth (names are what one
// greps for), so with long ones a line reaches about 160 columns.
const (
	MaxWidth     = 120
	minDeclWidth = 18
	maxNameWidth = 56
	maxFileWidth = 40
	gap          = "  "
	below        = "↓"
	indent       = "    "
)

// writeRows prints the header and a row per change (see WriteTable).
func (r *Report) writeRows(w io.Writer) error {
	rows := [][6]string{{"KIND", "CHANGE", "NAME", "OLD", "NEW", "FILE"}}
	var widths [6]int
	for _, c := range r.Changes {
		rows = append(rows, [6]string{c.Kind, c.Change, elide(c.Name, maxNameWidth), dash(c.Old), dash(c.New), elide(c.File, maxFileWidth)})
	}
	for _, row := range rows {
		for i, cell := range row {
			if i != 3 && i != 4 {
				widths[i] = max(widths[i], utf8.RuneCountInString(cell))
			}
		}
	}
	decl := max(minDeclWidth, (MaxWidth-widths[0]-widths[1]-widths[2]-widths[5]-5*len(gap))/2)
	for _, row := range rows {
		for _, i := range []int{3, 4} {
			if n := utf8.RuneCountInString(row[i]); n <= decl {
				widths[i] = max(widths[i], n)
			}
		}
	}
	var b strings.Builder
	for k, row := range rows {
		var under []string
		for i, cell := range row {
			if (i == 3 || i == 4) && utf8.RuneCountInString(cell) > widths[i] {
				under = append(under, strings.ToLower(rows[0][i])+": "+cell)
				cell = below
			}
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)) + gap)
			}
		}
		b.WriteString("\n")
		for _, u := range under {
			for j, l := range wrap(u, MaxWidth-2*len(indent)) {
				if j == 0 {
					b.WriteString(indent + l + "\n")
				} else {
					b.WriteString(indent + indent + l + "\n")
				}
			}
		}
		if k%256 == 0 || k == len(rows)-1 {
			if _, err := io.WriteString(w, b.String()); err != nil {
				return err
			}
			b.Reset()
		}
	}
	return nil
}

// elide shortens s to w runes, keeping its start and its end around "…".
func elide(s string, w int) string {
	rs := []rune(s)
	if len(rs) <= w {
		return s
	}
	tail := (w - 1) / 3
	head := w - 1 - tail
	return string(rs[:head]) + "…" + string(rs[len(rs)-tail:])
}

// wrap splits s into lines of at most w runes, between words where it can.
func wrap(s string, w int) []string {
	var out []string
	cur := ""
	for _, word := range strings.Fields(s) {
		for utf8.RuneCountInString(word) > w { // a word longer than a line
			if cur != "" {
				out, cur = append(out, cur), ""
			}
			rs := []rune(word)
			out, word = append(out, string(rs[:w])), string(rs[w:])
		}
		switch {
		case cur == "":
			cur = word
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) <= w:
			cur += " " + word
		default:
			out, cur = append(out, cur), word
		}
	}
	if cur != "" || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}

// line is lines[i], or "" past the end.
func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}
