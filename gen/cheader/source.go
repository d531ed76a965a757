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
// through an fs.FS that adds, before each line that holds anything, a
// marker pragma naming the line, followed by a #line directive that keeps
// every position as it is in the file:
//
//	#pragma mlx5gen begin
//	#line 1
//	#pragma mlx5gen 1
//	#line 1
//	<line 1>
//	#pragma mlx5gen 2
//	#line 2
//	<line 2>
//	...
//	#pragma mlx5gen end
//
// The markers of lines in groups the preprocessor skips never run, so the
// callback sees, in translation order, every line that is processed, every
// file entered and left and every pragma between them.

// markerPragma is the pragma name of the model's markers.
const markerPragma = "mlx5gen"

// maxSourceBytes bounds what the model lets cc/v4 read in all, includes of
// the same file counted once (a variable for the test).
var maxSourceBytes int64 = 64 << 20

// sourceFS serves the files under their own (absolute) names with markers.
type sourceFS struct {
	p     *parser
	total int64
	costs costTable
}

func (s *sourceFS) Open(name string) (fs.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	s.total += fi.Size()
	if s.total > maxSourceBytes {
		s.p.refuse(name, 0, fmt.Sprintf("the headers exceed %d bytes in all", maxSourceBytes))
		stop := []byte("#pragma " + markerPragma + " begin\n")
		return &memFile{name: name, r: bytes.NewReader(stop), size: int64(len(stop))}, nil
	}
	src, err := io.ReadAll(io.LimitReader(f, maxSourceBytes+1))
	if err != nil {
		return nil, err
	}
	marked, line, why := markLines(src, &s.costs)
	if why != "" {
		s.p.refuse(name, line, why)
	}
	return &memFile{name: name, r: bytes.NewReader(marked), size: int64(len(marked))}, nil
}

// maxNesting bounds how deeply parentheses, brackets and braces nest in a
// header (rdma-core's nest less than 10): cc/v4 parses them recursively,
// so deeper nesting costs stack without bound.
const maxNesting = 256

// markLines inserts the markers. A line gets one when it is not blank and
// does not start inside a comment or continue the previous line. It also
// returns the first line where nesting exceeds maxNesting, or 0.
func markLines(src []byte, costs *costTable) ([]byte, int, string) {
	out := make([]byte, 0, len(src)+len(src)/2+64)
	out = append(out, "#pragma "+markerPragma+" begin\n#line 1\n"...)
	var sc lineScanner
	badLine, why := 0, ""
	line := 1
	for len(src) > 0 {
		n := bytes.IndexByte(src, '\n')
		var text []byte
		if n < 0 {
			text, src = src, nil
		} else {
			text, src = src[:n+1], src[n+1:]
		}
		if !sc.inComment && len(bytes.TrimSpace(text)) > 0 {
			out = append(out, "#pragma "+markerPragma+" "+strconv.Itoa(line)+"\n#line "+strconv.Itoa(line)+"\n"...)
		}
		out = append(out, text...)
		if n < 0 {
			out = append(out, '\n')
		}
		directive := !sc.inComment && bytes.HasPrefix(bytes.TrimLeft(text, " \t"), []byte("#"))
		sc.scan(text, directive)
		// A line continued with a backslash joins the next one: no
		// marker may go between them.
		t := bytes.TrimRight(text, "\r\n")
		for len(t) > 0 && t[len(t)-1] == '\\' && len(src) > 0 {
			n := bytes.IndexByte(src, '\n')
			if n < 0 {
				n = len(src) - 1
			}
			out = append(out, src[:n+1]...)
			sc.scan(src[:n+1], directive)
			t = bytes.TrimRight(src[:n+1], "\r\n")
			src = src[n+1:]
			line++
		}
		if directive {
			sc.directiveDepth = 0
		}
		if sc.max > maxNesting && why == "" {
			badLine, why = line, fmt.Sprintf("brackets nest more than %d deep", maxNesting)
		}
		if r := costs.line(sc.clean, directive); r != "" && why == "" {
			badLine, why = line, r
		}
		sc.clean = sc.clean[:0]
		line++
	}
	return append(out, "\n#pragma "+markerPragma+" end\n"...), badLine, why
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
	if n := len(line); n >= 2 && line[n-2] == '\\' && line[n-1] == '\n' {
		line = line[:n-2] // a continued line
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
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
