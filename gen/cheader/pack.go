package cheader

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"modernc.org/cc/v4"
)

// Limits on includes, as gcc's (200 nested levels).
const (
	maxIncludeDepth = 200
	maxFileEntries  = 20000 // files entered in all, re-includes counted (mlx5dv.h: about 200)
)

// packUnknown is a pack value the model cannot know (a pragma it does
// not understand); a record laid out under it is refused.
const packUnknown = -1

// frame is a file being preprocessed.
type frame struct {
	file string
	line int
}

// lineMark is what the pragma callback saw when a line of a header was
// about to be processed: the #pragma pack value in force and how many
// changes of it had happened.
type lineMark struct {
	value   int64
	pos     Pos // the pragma that set value
	changes int
	twice   bool // processed again (an include without a guard)
}

type lineKey struct {
	file string
	line int
}

// endLine keys a file's end marker.
const endLine = 1 << 30

// packSaved is an entry of gcc's #pragma pack stack.
type packSaved struct {
	id    string
	value int64
	pos   Pos
}

// packTracker follows the preprocessor through the markers sourceFS adds:
// the include stack and gcc's #pragma pack state.
type packTracker struct {
	frames  []frame
	entries int
	abort   error // the include depth or file count was exceeded

	value   int64 // 0: no #pragma pack in force
	pos     Pos   // the pragma that set value
	saved   []packSaved
	changes int
	seen    bool        // any #pragma pack at all
	unknown Pos         // where the value became packUnknown
	idents  []packIdent // identifiers in pack pragmas: gcc expands macros there
	lines   map[lineKey]lineMark
	sorted  map[string][]int // markedLines
}

// pragma is cc/v4's PragmaHandler: the model's markers, #pragma once and
// #pragma pack.
func (p *parser) pragma(toks []cc.Token) error {
	if len(toks) == 0 {
		return nil
	}
	t := &p.track
	pos := toks[0].Position()
	switch toks[0].SrcStr() {
	case markerPragma:
		if len(toks) < 2 {
			return nil
		}
		return p.marker(pos.Filename, toks[1].SrcStr())
	case "once":
		if t.abort != nil {
			return p.skip()
		}
		if p.once == nil {
			p.once = map[string]bool{}
		}
		if p.once[pos.Filename] {
			return p.skip()
		}
		p.once[pos.Filename] = true
	case "pack":
		t.seen = true
		p.packPragma(toks[1:], p.tokPos(pos))
	}
	return nil
}

// skip stops the current file: its end marker will not run.
func (p *parser) skip() error {
	if n := len(p.track.frames); n > 0 {
		p.track.frames = p.track.frames[:n-1]
	}
	return cc.SkipSource
}

// marker handles the model's own pragmas.
func (p *parser) marker(file, what string) error {
	t := &p.track
	if t.abort != nil {
		// Stop every file as soon as it runs a marker.
		if what == "begin" {
			t.frames = append(t.frames, frame{file: file})
		}
		return p.skip()
	}
	switch what {
	case "begin":
		t.frames = append(t.frames, frame{file: file})
		t.entries++
		switch {
		case len(t.frames) > maxIncludeDepth:
			t.abort = &IncludeError{Chain: p.chain(), Reason: fmt.Sprintf("#include nested more than %d levels deep", maxIncludeDepth)}
			return p.skip()
		case t.entries > maxFileEntries:
			t.abort = &IncludeError{Chain: p.chain(), Reason: fmt.Sprintf("more than %d files entered (includes without guards that multiply)", maxFileEntries)}
			return p.skip()
		case p.srcErr != nil:
			t.abort = &IncludeError{Where: p.srcErr.where, Chain: p.chain(), Reason: p.srcErr.reason}
			return p.skip()
		}
		return nil
	case "end":
		if n := len(t.frames); n > 0 && t.frames[n-1].file == file {
			t.frames = t.frames[:n-1]
		}
		p.mark(file, endLine)
		return nil
	}
	line, err := strconv.Atoi(what)
	if err != nil {
		return nil
	}
	if n := len(t.frames); n > 0 {
		t.frames[n-1].line = line
	}
	p.mark(file, line)
	return nil
}

func (p *parser) mark(file string, line int) {
	t := &p.track
	if t.lines == nil {
		t.lines = map[lineKey]lineMark{}
	}
	k := lineKey{file, line}
	m, ok := t.lines[k]
	if ok {
		m.twice = true
		t.lines[k] = m
		return
	}
	t.lines[k] = lineMark{value: t.value, pos: t.pos, changes: t.changes}
}

// chain is the include stack for messages: the position of each #include,
// outermost first, then the file it entered.
func (p *parser) chain() []string {
	var out []string
	for i, f := range p.track.frames {
		if i == len(p.track.frames)-1 {
			out = append(out, p.rel(f.file))
			break
		}
		out = append(out, fmt.Sprintf("%s:%d", p.rel(f.file), f.line))
	}
	return out
}

// packPragma applies #pragma pack as gcc does: pack(n), pack(),
// pack(push[, id][, n]), pack(pop[, id]); forms gcc ignores with a warning
// (no parenthesis, a value that is not 1, 2, 4, 8 or 16, pop with a value,
// an unknown action) change nothing. Anything else makes the value unknown.
func (p *parser) packPragma(toks []cc.Token, pos Pos) {
	t := &p.track
	parts, ok := packArgs(toks)
	if !ok {
		if len(toks) > 0 && toks[0].SrcStr() == "(" {
			p.packUnknownAt(pos)
		}
		return // gcc: missing '(' after '#pragma pack' - ignored
	}
	for _, part := range parts {
		if len(part) > 1 {
			p.packUnknownAt(pos) // an expression: gcc may read it otherwise
			return
		}
	}
	word := func(i int) string { return packWord(parts, i) }
	value := packValue
	set := func(n int64) { p.packSet(n, pos) }
	switch first := word(0); {
	case len(parts) == 1 && first == "":
		set(0) // pack(): the default
	case len(parts) == 1 && (first == "push" || first == "pop"):
		if first == "push" {
			t.saved = append(t.saved, packSaved{value: t.value, pos: t.pos})
			return
		}
		p.packPop("")
	case len(parts) == 1:
		n, num, ok := value(first)
		switch {
		case ok:
			set(n)
		case !num && isIdent(first) && first != "show":
			// gcc expands macros in pack pragmas: an identifier may
			// stand for a value the model cannot see here.
			p.packUnknownAt(pos)
		}
		// gcc ignores other values and unknown actions with a warning.
	case first == "push" && len(parts) <= 3:
		p.packPush(parts, pos)
	case first == "pop" && len(parts) == 2:
		id := word(1)
		if _, num, _ := value(id); num {
			return // gcc: malformed '#pragma pack(pop[, id])' - ignored
		}
		if !isIdent(id) {
			p.packUnknownAt(pos)
			return
		}
		t.idents = append(t.idents, packIdent{id, pos})
		p.packPop(id)
	default:
		p.packUnknownAt(pos)
	}
}

// packPush is pack(push[, id][, n]).
func (p *parser) packPush(parts [][]string, pos Pos) {
	t := &p.track
	word := func(i int) string { return packWord(parts, i) }
	value := packValue
	id, nstr := "", ""
	switch len(parts) {
	case 2:
		if _, num, _ := value(word(1)); num {
			nstr = word(1)
		} else {
			id = word(1)
		}
	case 3:
		id, nstr = word(1), word(2)
	}
	if id != "" {
		if !isIdent(id) {
			p.packUnknownAt(pos)
			return
		}
		t.idents = append(t.idents, packIdent{id, pos})
	}
	n := t.value
	if nstr != "" {
		v, num, ok := value(nstr)
		if !num {
			p.packUnknownAt(pos)
			return
		}
		if !ok {
			return // gcc ignores the whole pragma
		}
		n = v
	}
	t.saved = append(t.saved, packSaved{id: id, value: t.value, pos: t.pos})
	if nstr != "" {
		p.packSet(n, pos)
	}
}

// packArgs splits "( a , b )" into its comma-separated parts; false when
// the pragma has no parenthesised list.
func packArgs(toks []cc.Token) ([][]string, bool) {
	var args []string
	for _, tok := range toks {
		args = append(args, tok.SrcStr())
	}
	if len(args) < 2 || args[0] != "(" || args[len(args)-1] != ")" {
		return nil, false
	}
	var parts [][]string
	var cur []string
	for _, a := range args[1 : len(args)-1] {
		if a == "," {
			parts = append(parts, cur)
			cur = nil
			continue
		}
		cur = append(cur, a)
	}
	return append(parts, cur), true
}

func packWord(parts [][]string, i int) string {
	if i < len(parts) && len(parts[i]) == 1 {
		return parts[i][0]
	}
	return ""
}

// packValue reads a pack value: its value, whether it is a number and
// whether gcc accepts it (0 for the default, or 1, 2, 4, 8, 16).
func packValue(s string) (int64, bool, bool) {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return 0, false, false
	}
	return n, true, n == 0 || n == 1 || n == 2 || n == 4 || n == 8 || n == 16
}

func (p *parser) packSet(n int64, pos Pos) {
	if n != p.track.value {
		p.track.changes++
	}
	p.track.value, p.track.pos = n, pos
}

// packPop pops gcc's pack stack: down to the entry pushed with id when
// there is one, else the top entry; an empty stack changes nothing.
func (p *parser) packPop(id string) {
	t := &p.track
	if len(t.saved) == 0 {
		return
	}
	i := len(t.saved) - 1
	if id != "" {
		for j := len(t.saved) - 1; j >= 0; j-- {
			if t.saved[j].id == id {
				i = j
				break
			}
		}
	}
	v, pos := t.saved[i].value, t.saved[i].pos
	t.saved = t.saved[:i]
	if v != t.value {
		t.changes++
	}
	t.value, t.pos = v, pos
}

func (p *parser) packUnknownAt(pos Pos) {
	t := &p.track
	if t.value != packUnknown {
		t.changes++
	}
	t.value, t.pos = packUnknown, pos
	t.unknown = pos
}

// markedLines returns the lines of file that have a mark, sorted (the end
// marker last).
func (t *packTracker) markedLines(file string) []int {
	if t.sorted == nil {
		t.sorted = map[string][]int{}
		for k := range t.lines {
			t.sorted[k.file] = append(t.sorted[k.file], k.line)
		}
		for _, l := range t.sorted {
			sort.Ints(l)
		}
	}
	return t.sorted[file]
}

// packFor returns the #pragma pack value (0 for none) in force for a record
// definition and the pragma that set it, or a LayoutError when the model
// cannot tell it exactly.
func (p *parser) packFor(r *Record, spec *cc.StructOrUnionSpecifier) (int64, Pos, error) {
	t := &p.track
	if !t.seen {
		return 0, Pos{}, nil
	}
	refuse := func(why string) (int64, Pos, error) {
		return 0, Pos{}, &LayoutError{Pos: r.Pos, Decl: r.CName(), Reason: why}
	}
	for _, id := range t.idents {
		if m := p.ast.Macros[id.name]; m != nil {
			// The pragma is the cause, wherever the first record is.
			return 0, Pos{}, &LayoutError{Pos: id.pos, Decl: "#pragma pack", Reason: fmt.Sprintf(
				"it uses %s, which is a macro (gcc expands it; the model does not), so no record's pack is certain (the first refused: %s at %s)", id.name, r.CName(), r.Pos)}
		}
	}
	start := spec.Position()
	end := spec.Token3.Position()
	if end.Filename != start.Filename || end.Line < start.Line {
		end = start
	}
	// Most lines have no marker: the nearest marked line before stands
	// for the start and the nearest after for the end, since the change
	// count must then hold over the whole stretch.
	lines := t.markedLines(start.Filename)
	i := sort.SearchInts(lines, start.Line+1) - 1 // last marked line <= start
	if i < 0 {
		return refuse("#pragma pack is used and the model cannot tell where this definition falls among the pragmas")
	}
	first := t.lines[lineKey{start.Filename, lines[i]}]
	if end.Filename != start.Filename {
		lines = t.markedLines(end.Filename)
	}
	var after lineMark
	found := false
	if j := sort.SearchInts(lines, end.Line+1); j < len(lines) { // first marked line > end
		after, found = t.lines[lineKey{end.Filename, lines[j]}]
	}
	switch {
	case !found || first.twice || after.twice:
		return refuse("#pragma pack is used and this definition's lines are processed more than once (an include without a guard)")
	case first.changes != after.changes:
		return refuse("#pragma pack changes between the marked lines around this definition: inside it, through a _Pragma on its lines (cc/v4 does not order those with the declaration) or past the model's limit of marked lines")
	case first.value == packUnknown:
		return refuse(fmt.Sprintf("the #pragma pack at %s is a form the model does not know", t.unknown))
	}
	return first.value, first.pos, nil
}

// packIdent is an identifier of a pack pragma and the pragma's position.
type packIdent struct {
	name string
	pos  Pos
}

// IncludeError is a header set the model does not follow to the end: one
// that includes itself without a guard, includes that multiply, headers
// too big in all or nested too deeply.
type IncludeError struct {
	Where  string   // file:line of the problem, if not the last #include
	Chain  []string // file:line of each #include, outermost first, then the file entered
	Reason string
}

func (e *IncludeError) Error() string {
	chain := e.Chain
	if len(chain) > 12 {
		chain = append(append(append([]string(nil), chain[:6]...), fmt.Sprintf("... %d more ...", len(chain)-12)), chain[len(chain)-6:]...)
	}
	where := e.Where
	if where == "" && len(e.Chain) > 1 {
		where = e.Chain[len(e.Chain)-2]
	}
	if where == "" {
		where = "-"
	}
	if len(chain) == 0 {
		return fmt.Sprintf("%s: %s", where, e.Reason)
	}
	return fmt.Sprintf("%s: %s; include chain: %s", where, e.Reason, strings.Join(chain, " -> "))
}
