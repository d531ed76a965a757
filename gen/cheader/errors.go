package cheader

import (
	"fmt"
	"path/filepath"
	"strings"
)

// MissingError reports a header or include directory that does not exist,
// with the Debian package that provides it.
type MissingError struct {
	Path    string // what was looked for
	What    string // "include root", "header", "include file"
	Package string // Debian package that ships it
	Where   string // for an include file: the #include position
}

func (e *MissingError) Error() string {
	s := ""
	if e.Where != "" {
		s = e.Where + ": "
	}
	s += fmt.Sprintf("%s %s not found", e.What, e.Path)
	if e.Package != "" {
		s += fmt.Sprintf(" (Debian package %s provides it: apt-get install %s)", e.Package, e.Package)
	}
	return s
}

// packageFor names the Debian package that ships an include file.
func packageFor(rel string) string {
	rel = filepath.ToSlash(rel)
	switch {
	case strings.HasPrefix(rel, "infiniband/"):
		return "libibverbs-dev"
	case strings.HasPrefix(rel, "linux/"), strings.HasPrefix(rel, "rdma/"), strings.HasPrefix(rel, "asm/"),
		strings.HasPrefix(rel, "asm-generic/"):
		return "linux-libc-dev"
	case strings.HasSuffix(rel, "intrin.h"):
		return "gcc"
	}
	return "libc6-dev"
}

// ParseError is a header the C front end rejected. Each message reads
// file:line:col: message.
type ParseError struct {
	Messages []string
}

func (e *ParseError) Error() string {
	const max = 10
	if len(e.Messages) > max {
		return strings.Join(e.Messages[:max], "\n") + fmt.Sprintf("\n(and %d more errors)", len(e.Messages)-max)
	}
	return strings.Join(e.Messages, "\n")
}

// LayoutError is a declaration whose layout the model cannot compute exactly
// (#pragma pack, packed on a single member, mode attributes, ...). The model
// refuses it instead of guessing.
type LayoutError struct {
	Pos    Pos
	Decl   string // "struct foo" or "struct foo.member"
	Reason string
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("%s: %s: cannot lay out exactly: %s", e.Pos, e.Decl, e.Reason)
}
