package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mlx5gen/mlx5gen/internal/cachefile"
)

// The block of a file -update rewrites: everything between the two marker
// lines is the table of the last run, so a document cannot show figures
// the command did not print.
const (
	beginMarker = "<!-- bench:begin -->\n"
	endMarker   = "<!-- bench:end -->\n"
)

// replaceBlock returns doc with the text between its markers replaced by
// table. The markers must each occur exactly once, in order.
func replaceBlock(name string, doc, table []byte) ([]byte, error) {
	b, e := bytes.Count(doc, []byte(beginMarker)), bytes.Count(doc, []byte(endMarker))
	if b != 1 || e != 1 {
		return nil, fmt.Errorf("%s: want one %q line and one %q line, found %d and %d",
			name, bytes.TrimSpace([]byte(beginMarker)), bytes.TrimSpace([]byte(endMarker)), b, e)
	}
	i := bytes.Index(doc, []byte(beginMarker)) + len(beginMarker)
	j := bytes.Index(doc, []byte(endMarker))
	if j < i {
		return nil, fmt.Errorf("%s: %q comes before %q", name, bytes.TrimSpace([]byte(endMarker)), bytes.TrimSpace([]byte(beginMarker)))
	}
	out := make([]byte, 0, len(doc)-(j-i)+len(table)+2)
	out = append(out, doc[:i]...)
	out = append(out, '\n')
	out = append(out, table...)
	out = append(out, '\n')
	return append(out, doc[j:]...), nil
}

// updateFiles rewrites the marked block of every file, checking them all
// before writing any, each through a temporary file renamed into place.
func updateFiles(names []string, table []byte) error {
	outs := make([][]byte, len(names))
	for k, n := range names {
		doc, err := os.ReadFile(n)
		if err != nil {
			return err
		}
		if outs[k], err = replaceBlock(n, doc, table); err != nil {
			return err
		}
	}
	for k, n := range names {
		if err := cachefile.WriteAtomic(filepath.Dir(n), n, outs[k], ".mlx5bench-*"); err != nil {
			return err
		}
	}
	return nil
}
