package cheader

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// cc/v4 hands #pragma directives (and _Pragma operators) to a callback but
// says nothing about where in the token stream they fall, and it follows
// #include without a depth limit. So the model serves every header to cc
// through an fs.FS that adds marker pragmas, each followed by a #line
// directive that keeps every position as it is in the file:
//
//	#pragma mlx5gen begin
//	#line 1
//	...
//	#pragma mlx5gen 12
//	#line 12
//	struct s {          <- line 12
//	...
//	#pragma mlx5gen end
//
// The markers of lines in groups the preprocessor skips never run, so the
// callback sees, in translation order, the files entered and left, the
// lines marked and every pragma between them (markLines says which lines).

// markerPragma is the pragma name of the model's markers.
const markerPragma = "mlx5gen"

// maxSourceBytes bounds what the model lets cc/v4 read in all, includes of
// the same file counted once (a variable for the test): rdma-core's
// headers with the libc headers they include are 0.54 to 0.56 MB
// (44.0 to 65.0), a thirtieth of it. A header set over it is refused
// before it is read; under it, the text limits (limits.go) bound what
// cc/v4 is given.
var maxSourceBytes int64 = 16 << 20

// sourceFS serves the files under their own (absolute) names with markers.
// One sourceFS serves both of the model's translations: a file the first
// read and marked is served again as it was, so that the second neither
// reads nor scans it again (nor sees it changed in between); its budgets
// (bytes, text cost, markers) go on from where the first left them.
type sourceFS struct {
	p       *parser
	total   int64
	costs   costTable
	markers int // how many more line markers may be inserted
	served  map[string]servedFile
	last    bool // the last translation: a file served again is then forgotten
	reads   int  // files read from disk
	hits    int  // files served again
}

// servedFile is a file as sourceFS served it: its marked text and the
// line it was refused at, and why ("" when it was not).
type servedFile struct {
	marked []byte
	line   int
	why    string
}

func (s *sourceFS) Open(name string) (fs.File, error) {
	if f, ok := s.served[name]; ok {
		s.hits++
		if s.last {
			// cc keeps its own copy of what it reads.
			delete(s.served, name)
		}
		if f.why != "" {
			s.p.refuse(name, f.line, f.why)
		}
		return &memFile{name: name, r: bytes.NewReader(f.marked), size: int64(len(f.marked))}, nil
	}
	// Stat first: opening a FIFO would block, and a device such as
	// /dev/zero never ends.
	fi, err := os.Stat(name)
	if err != nil {
		s.p.observeMissing(name)
		return nil, err
	}
	if fi.IsDir() {
		s.p.observeMissing(name)
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if !fi.Mode().IsRegular() {
		s.p.refuse(name, 0, "not a regular file")
		return stopFile(name), nil
	}
	if s.total+fi.Size() > maxSourceBytes {
		s.p.refuse(name, 0, fmt.Sprintf("the headers exceed %d bytes in all", maxSourceBytes))
		return stopFile(name), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxSourceBytes-s.total+1))
	if err != nil {
		return nil, err
	}
	s.reads++
	s.total += int64(len(src))
	s.p.observeRead(name, src)
	if s.total > maxSourceBytes { // it grew while read
		s.p.refuse(name, 0, fmt.Sprintf("the headers exceed %d bytes in all", maxSourceBytes))
		return stopFile(name), nil
	}
	marked, line, why := markLines(src, &s.costs, &s.markers)
	if why != "" {
		s.p.refuse(name, line, why)
		marked = []byte("#pragma " + markerPragma + " begin\n")
	}
	if s.served == nil {
		s.served = map[string]servedFile{}
	}
	s.served[name] = servedFile{marked: marked, line: line, why: why}
	return &memFile{name: name, r: bytes.NewReader(marked), size: int64(len(marked))}, nil
}

// stopFile is served in place of a refused file: its marker stops the
// translation.
func stopFile(name string) fs.File {
	stop := []byte("#pragma " + markerPragma + " begin\n")
	return &memFile{name: name, r: bytes.NewReader(stop), size: int64(len(stop))}
}

// maxNesting bounds how deeply parentheses, brackets and braces nest in a
// header (rdma-core's nest less than 10): cc/v4 parses them recursively,
// so deeper nesting costs stack without bound.
const maxNesting = 256

// maxMarkers bounds the markers in one translation (mlx5dv.h and what it
// includes need about 3,000): each costs cc/v4 two directives. Past it,
// lines go unmarked, and a record there under a #pragma pack that changed
// since the last marker is refused rather than guessed.
const maxMarkers = 50000

// markLines inserts the markers: before a line that may start a record
// (it says struct or union), before the line after each line of text or
// #pragma, and before each #include,
// so that the pack value of every record and the line of every #include
// are known. A line that
// starts inside a comment or continues another gets none. markLines also
// returns the first line the model refuses, and why, and then no text:
// it stops there, and sourceFS serves stopFile in place of the file.
func markLines(src []byte, costs *costTable, budget *int) ([]byte, int, string) {
	out := make([]byte, 0, len(src)+len(src)/8+64)
	out = append(out, "#pragma "+markerPragma+" begin\n#line 1\n"...)
	var sc lineScanner
	var toks []string
	afterText := false
	open := "" // the construct whose braces the text is in (enclosing)
	for line := 1; len(src) > 0; {
		// A logical line: a physical one and those its backslashes join.
		first, end := line, 0
		for {
			n := bytes.IndexByte(src[end:], '\n')
			if n < 0 {
				end = len(src)
				break
			}
			end += n + 1
			if t := bytes.TrimRight(src[:end], "\r\n"); len(t) == 0 || t[len(t)-1] != '\\' || end == len(src) {
				break
			}
			line++
		}
		text := src[:end]
		src = src[end:]
		startInComment := sc.inComment
		directive := !startInComment && bytes.HasPrefix(bytes.TrimLeft(text, " \t"), []byte("#"))
		outside := sc.depth == 0
		sc.scan(text, directive)
		if directive {
			sc.directiveDepth = 0
		}
		limit := costs.lineTokenLimit()
		toks = costs.tokens(sc.clean, toks[:0], limit)
		if !directive && outside {
			open = enclosing(toks, first)
		}
		if r := costs.count(toks, limit, directive); r != "" {
			if !directive {
				r += open // name the enum, record or initializer too large
			}
			// Refused before cc/v4 or the estimate sees the line: the
			// file is not served (sourceFS serves stopFile).
			return nil, first, r
		}
		// An #include is always marked, for the include chain; it
		// enters a file, and those are bounded (maxFileEntries).
		include := directive && len(toks) > 1 && (toks[1] == "include" || toks[1] == "include_next")
		want := afterText || hasToken(toks, "struct") || hasToken(toks, "union")
		if include || want && !startInComment && *budget > 0 {
			if !include {
				*budget--
			}
			out = append(out, "#pragma "+markerPragma+" "+strconv.Itoa(first)+"\n#line "+strconv.Itoa(first)+"\n"...)
		}
		out = append(out, text...)
		if text[len(text)-1] != '\n' {
			out = append(out, '\n')
		}
		// Any line of text may end a record ("}" can come from a macro),
		// and any #pragma may change the pack value.
		afterText = !directive && len(toks) > 0 || directive && len(toks) > 1 && toks[1] == "pragma"
		if sc.max > maxNesting {
			return nil, first, fmt.Sprintf("brackets nest more than %d deep", maxNesting)
		}
		if r := costs.line(toks, sc.clean, directive); r != "" {
			return nil, first, r
		}
		sc.clean = sc.clean[:0]
		line++
	}
	return append(out, "\n#pragma "+markerPragma+" end\n"...), 0, ""
}

func hasToken(toks []string, s string) bool {
	for _, t := range toks {
		if t == s {
			return true
		}
	}
	return false
}

// lineScanner follows comments and bracket nesting from line to line.
// String and character literals end at the end of their line. A directive
// counts its nesting on its own, so that "#define BEGIN {" does not open
// a brace for the text that follows.
type lineScanner struct {
	clean          []byte // the logical line without comments, strings as ""
	inComment      bool
	depth          int // in text lines
	directiveDepth int
	max            int
}

func (s *lineScanner) scan(line []byte, directive bool) {
	depth := &s.depth
	if directive {
		depth = &s.directiveDepth
	}
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' && i+1 < len(line) && line[i+1] == '\n' {
			i++ // a continued line
			continue
		}
		switch {
		case s.inComment:
			if c == '*' && i+1 < len(line) && line[i+1] == '/' {
				s.inComment = false
				s.clean = append(s.clean, ' ')
				i++
			}
			continue
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
				s.clean = append(s.clean, '"', '"', ' ')
			}
			continue
		case c == '"' || c == '\'':
			quote = c
			continue
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			s.inComment = true
			i++
			continue
		case c == '/' && i+1 < len(line) && line[i+1] == '/':
			return
		case c == '(' || c == '[' || c == '{':
			*depth++
			if *depth > s.max {
				s.max = *depth
			}
		case c == ')' || c == ']' || c == '}':
			if *depth > 0 {
				*depth--
			}
		}
		s.clean = append(s.clean, c)
	}
}

// sourceRefusal is header text the model will not hand to cc/v4.
type sourceRefusal struct{ where, reason string }

// refuse notes the first refusal; the next file marker stops translation.
func (p *parser) refuse(file string, line int, reason string) {
	if p.srcErr != nil {
		return
	}
	where := p.rel(file)
	if line > 0 {
		where += ":" + strconv.Itoa(line)
	}
	p.srcErr = &sourceRefusal{where: where, reason: reason}
}

// memFile is a served file.
type memFile struct {
	name string
	r    *bytes.Reader
	size int64
}

func (f *memFile) Read(b []byte) (int, error) { return f.r.Read(b) }
func (f *memFile) Close() error               { return nil }
func (f *memFile) Stat() (fs.FileInfo, error) { return memInfo{f}, nil }

type memInfo struct{ f *memFile }

func (i memInfo) Name() string       { return i.f.name }
func (i memInfo) Size() int64        { return i.f.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
