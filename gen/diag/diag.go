// Package diag holds the generator's positions and error lists: gen/spec
// reports the descriptors' problems and gen/resolve the header's and the
// cross-checks' with the same types, so that a caller (cmd/mlx5gen)
// prints every problem of a run one per line, as file:line:col: message.
package diag

import (
	"fmt"
	"strconv"
	"strings"
)

// Pos is a position in a header or a spec file.
type Pos struct {
	File      string
	Line, Col int
}

// String is file:line:col, or "-" for an unknown position.
func (p Pos) String() string {
	if p.File == "" {
		return "-"
	}
	return p.File + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col)
}

// Error is one problem at a position.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Errorf makes an Error.
func Errorf(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// List is every problem found, in the order found; as an error it reads
// one problem per line.
type List []*Error

func (l List) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Add appends a problem.
func (l *List) Add(pos Pos, format string, args ...any) {
	*l = append(*l, Errorf(pos, format, args...))
}
