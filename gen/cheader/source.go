package cheader

import (
	"bytes"
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
// the same file counted once.
const maxSourceBytes = 64 << 20

// sourceFS serves the files under their own (absolute) names with markers.
type sourceFS struct {
	p     *parser
	total int64
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
		s.p.tooMuch = name
		return &memFile{name: name, r: bytes.NewReader(nil), size: 0}, nil
	}
	src, err := io.ReadAll(io.LimitReader(f, maxSourceBytes+1))
	if err != nil {
		return nil, err
	}
	marked := markLines(src)
	return &memFile{name: name, r: bytes.NewReader(marked), size: int64(len(marked))}, nil
}

// markLines inserts the markers. A line gets one when it is not blank and
// does not start inside a comment or continue the previous line.
func markLines(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(src)/2+64)
	out = append(out, "#pragma "+markerPragma+" begin\n#line 1\n"...)
	inComment := false
	line := 1
	for len(src) > 0 {
		n := bytes.IndexByte(src, '\n')
		var text []byte
		if n < 0 {
			text, src = src, nil
		} else {
			text, src = src[:n+1], src[n+1:]
		}
		if !inComment && len(bytes.TrimSpace(text)) > 0 {
			out = append(out, "#pragma "+markerPragma+" "+strconv.Itoa(line)+"\n#line "+strconv.Itoa(line)+"\n"...)
		}
		out = append(out, text...)
		if n < 0 {
			out = append(out, '\n')
		}
		inComment = endsInComment(text, inComment)
		// A line continued with a backslash joins the next one: no
		// marker may go between them.
		t := bytes.TrimRight(text, "\r\n")
		for len(t) > 0 && t[len(t)-1] == '\\' && len(src) > 0 {
			n := bytes.IndexByte(src, '\n')
			if n < 0 {
				n = len(src) - 1
			}
			out = append(out, src[:n+1]...)
			inComment = endsInComment(src[:n+1], inComment)
			t = bytes.TrimRight(src[:n+1], "\r\n")
			src = src[n+1:]
			line++
		}
		line++
	}
	return append(out, "\n#pragma "+markerPragma+" end\n"...)
}

// endsInComment reports whether a /* comment is open at the end of a line
// that starts inside one when in is set. String and character literals end
// at the end of their line.
func endsInComment(line []byte, in bool) bool {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case in:
			if c == '*' && i+1 < len(line) && line[i+1] == '/' {
				in = false
				i++
			}
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			in = true
			i++
		case c == '/' && i+1 < len(line) && line[i+1] == '/':
			return false
		}
	}
	return in
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
