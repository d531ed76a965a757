package sim_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
	"strings"
)

// The fidelity ledger checker. docs/simulator.md's "## Fidelity ledger"
// section holds tables of | id | behaviour | source | confidence |, one row
// per behaviour the simulator chose where the man pages leave room; the
// comments of runtime/sim's non-test code that state such a choice carry
// [ledger: id] (or [ledger: a, b]). checkLedger ties the two together so
// neither can drift: every tag names a row, every row is well formed and
// tagged somewhere (or is a doc-only row, id "doc-..."), and a comment
// using the vocabulary of a choice carries a tag. The checker works on
// names and texts, not on the file system, so that its own test can feed
// it small broken inputs.

// ledgerHeading starts the ledger section; it runs to the next "## ".
const ledgerHeading = "## Fidelity ledger"

// docOnlyPrefix marks rows no code comment states (behaviour the code
// shows only by what it lacks, such as a transport it does not offer).
const docOnlyPrefix = "doc-"

// confidences are the words the confidence column may hold.
var confidences = []string{"documented", "observed on hardware", "inferred", "guessed"}

var (
	slugRE = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
	// tagStartRE finds anything that looks like a tag, so that a
	// malformed one is reported instead of ignored.
	tagStartRE = regexp.MustCompile(`(?i)\[\s*ledger\b`)
	tagRE      = regexp.MustCompile(`^\[ledger: ([^\]]*)\]`)
	sepCellRE  = regexp.MustCompile(`^:?-+:?$`)
)

// choiceVocabulary is the wording of a comment that states a choice, an
// inference, a guess or something not modelled: such a paragraph must
// carry a tag. Matched case-insensitively on the paragraph with its lines
// joined, so a phrase broken across lines is still found.
var choiceVocabulary = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bcho(se|sen|ice|ices)\b`),
	regexp.MustCompile(`(?i)\bguess(ed|es|ing)?\b`),
	regexp.MustCompile(`(?i)\bassum(e|ed|ption|ptions)\b`),
	regexp.MustCompile(`(?i)\bnot (modell?ed|simulated)\b`),
	regexp.MustCompile(`(?i)\bdoes not model\b`),
	regexp.MustCompile(`(?i)\bwe model\b`),
	regexp.MustCompile(`(?i)\bman pages? (leaves?|say nothing|do(es)? not say)\b`),
	regexp.MustCompile(`(?i)\bleaves? (room|open)\b`),
	regexp.MustCompile(`(?i)\bsimplif(y|ied|ies|ication)\b`),
	regexp.MustCompile(`(?i)\b(we pick|picked)\b`),
	regexp.MustCompile(`(?i)\binferr?(ed|ence)\b`),
	regexp.MustCompile(`(?i)\b(unspecified|undocumented|arbitrar(y|ily))\b`),
}

// ledgerRow is one row of the ledger.
type ledgerRow struct {
	id, behaviour, source, confidence string
	line                              int
}

// ledgerTag is one id of a [ledger: ...] tag in a comment.
type ledgerTag struct {
	id  string
	pos string // file:line
}

// ledgerFile is a file the checker reads: name is how problems name it.
type ledgerFile struct {
	name string
	text string
}

// checkLedger returns the problems of the ledger in doc against the Go
// sources srcs, each "file:line: ..." naming the row or tag, sorted.
func checkLedger(doc ledgerFile, srcs []ledgerFile) []string {
	rows, problems := parseLedger(doc)
	var tags []ledgerTag
	for _, f := range srcs {
		t, p := scanComments(f)
		tags, problems = append(tags, t...), append(problems, p...)
	}
	used := map[string]string{}
	for _, t := range tags {
		r, ok := rows[t.id]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: [ledger: %s] names no row of the ledger in %s", t.pos, t.id, doc.name))
		case strings.HasPrefix(t.id, docOnlyPrefix):
			problems = append(problems, fmt.Sprintf("%s: [ledger: %s] names a doc-only row (%s:%d): drop the %q prefix from its id",
				t.pos, t.id, doc.name, r.line, docOnlyPrefix))
		}
		if _, seen := used[t.id]; !seen {
			used[t.id] = t.pos
		}
	}
	for id, r := range rows {
		if _, ok := used[id]; !ok && !strings.HasPrefix(id, docOnlyPrefix) {
			problems = append(problems, fmt.Sprintf("%s:%d: [%s] is named by no [ledger: %s] tag in the code: tag the comment that states it, or make it doc-only (id %s...)",
				doc.name, r.line, id, id, docOnlyPrefix))
		}
	}
	sort.Strings(problems)
	return problems
}

// parseLedger reads the rows of every table of the ledger section.
func parseLedger(doc ledgerFile) (map[string]ledgerRow, []string) {
	rows := map[string]ledgerRow{}
	var problems []string
	bad := func(line int, format string, a ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: ", doc.name, line)+fmt.Sprintf(format, a...))
	}
	lines := strings.Split(doc.text, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == ledgerHeading {
			start = i
			break
		}
	}
	if start < 0 {
		return rows, []string{fmt.Sprintf("%s: no %q section", doc.name, ledgerHeading)}
	}
	for i := start + 1; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "## ") {
			break
		}
		if !strings.HasPrefix(l, "|") {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "|"), "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if isHeaderOrRule(cells) {
			continue
		}
		if len(cells) != 4 {
			bad(i+1, "a ledger row has %d cells, not 4 (| id | behaviour | source | confidence |)", len(cells))
			continue
		}
		r := ledgerRow{id: strings.Trim(cells[0], "`"), behaviour: cells[1], source: cells[2], confidence: cells[3], line: i + 1}
		checkRow(r, bad)
		if prev, dup := rows[r.id]; dup {
			bad(r.line, "[%s] is a second row of that id (the first is line %d)", r.id, prev.line)
			continue
		}
		rows[r.id] = r
	}
	if len(rows) == 0 && len(problems) == 0 {
		bad(start+1, "the ledger section has no rows")
	}
	return rows, problems
}

// isHeaderOrRule reports a table's header row or its |---| rule.
func isHeaderOrRule(cells []string) bool {
	if len(cells) > 0 && strings.EqualFold(cells[0], "id") {
		return true
	}
	for _, c := range cells {
		if !sepCellRE.MatchString(c) {
			return false
		}
	}
	return true
}

// checkRow checks one row's cells.
func checkRow(r ledgerRow, bad func(int, string, ...any)) {
	if !slugRE.MatchString(r.id) {
		bad(r.line, "[%s]: an id is lowercase words joined by hyphens", r.id)
	}
	if r.behaviour == "" {
		bad(r.line, "[%s] has no behaviour", r.id)
	}
	if r.source == "" {
		bad(r.line, "[%s] has no source (write \"none\" when there is none)", r.id)
	}
	ok := false
	for _, c := range confidences {
		ok = ok || r.confidence == c
	}
	if !ok {
		bad(r.line, "[%s]: confidence %q is not one of %s", r.id, r.confidence, strings.Join(confidences, ", "))
	}
}

// paragraph is a run of comment lines with no blank comment line (and no
// list item start) inside: the unit a tag covers.
type paragraph struct {
	text  string
	at    []int // byte offset in text where each line starts
	lines []int // and its line number
}

func (p *paragraph) add(s string, line int) {
	if p.text != "" {
		p.text += " "
	}
	p.at, p.lines = append(p.at, len(p.text)), append(p.lines, line)
	p.text += s
}

// lineOf returns the line of byte offset i of the paragraph's text.
func (p *paragraph) lineOf(i int) int {
	k := sort.SearchInts(p.at, i+1) - 1
	return p.lines[max(k, 0)]
}

// scanComments returns the tags in f's comments, and the problems:
// malformed tags, and paragraphs in choice vocabulary without a tag.
func scanComments(f ledgerFile) ([]ledgerTag, []string) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, f.name, f.text, parser.ParseComments)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", f.name, err)}
	}
	var tags []ledgerTag
	var problems []string
	for _, g := range file.Comments {
		for _, p := range paragraphs(fset, g.List) {
			t, pr := scanParagraph(f.name, p)
			tags, problems = append(tags, t...), append(problems, pr...)
		}
	}
	return tags, problems
}

// paragraphs splits a comment group into paragraphs.
func paragraphs(fset *token.FileSet, list []*ast.Comment) []*paragraph {
	var out []*paragraph
	var cur *paragraph
	for _, c := range list {
		line := fset.Position(c.Slash).Line
		text := c.Text
		if strings.HasPrefix(text, "//") {
			text = text[2:]
		} else {
			text = strings.TrimSuffix(strings.TrimPrefix(text, "/*"), "*/")
		}
		for k, l := range strings.Split(text, "\n") {
			l = strings.TrimSpace(l)
			if l == "" {
				cur = nil
				continue
			}
			if cur == nil || strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* ") {
				cur = &paragraph{}
				out = append(out, cur)
			}
			cur.add(l, line+k)
		}
	}
	return out
}

// scanParagraph reads one paragraph's tags and checks its vocabulary.
func scanParagraph(name string, p *paragraph) ([]ledgerTag, []string) {
	var tags []ledgerTag
	var problems []string
	for _, m := range tagStartRE.FindAllStringIndex(p.text, -1) {
		pos := fmt.Sprintf("%s:%d", name, p.lineOf(m[0]))
		sub := tagRE.FindStringSubmatch(p.text[m[0]:])
		ids := []string(nil)
		if sub != nil {
			ids = strings.Split(sub[1], ", ")
		}
		okTag := len(ids) > 0
		for _, id := range ids {
			okTag = okTag && slugRE.MatchString(id)
		}
		if !okTag {
			end := min(len(p.text), m[0]+40)
			problems = append(problems, fmt.Sprintf("%s: malformed ledger tag %q: want [ledger: some-id] or [ledger: id-a, id-b] (lowercase, hyphens)",
				pos, p.text[m[0]:end]))
			continue
		}
		for _, id := range ids {
			tags = append(tags, ledgerTag{id: id, pos: pos})
		}
	}
	if len(tags) > 0 || len(problems) > 0 {
		return tags, problems
	}
	for _, re := range choiceVocabulary {
		if m := re.FindStringIndex(p.text); m != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: a comment states a choice (%q) without a [ledger: id] tag",
				name, p.lineOf(m[0]), p.text[m[0]:m[1]]))
			break
		}
	}
	return tags, problems
}
