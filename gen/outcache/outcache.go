// Package outcache keeps what `mlx5gen generate` made, so that a run whose
// inputs are all unchanged writes the same files and prints the same
// summary without reading the spec or emitting (formatting the Go source
// is most of a run once the C model comes from cheader's cache).
//
// An entry is found by a key hashing everything that decides the output:
// the C model as cheader.Cache.Current identifies it (the mlx5gen build,
// the C compiler, the include root and header, the SHA-256 of every header
// read or looked for, the release detected), the name and bytes of every
// spec file, and every option that changes the output. It is written to a
// temporary file and renamed into place, and it carries its length and a
// SHA-256 checksum: a truncated, corrupt or unreadable entry is a miss,
// never a wrong output.
package outcache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/mlx5gen/mlx5gen/gen/emit"
	"github.com/mlx5gen/mlx5gen/internal/cachefile"
)

const (
	magic        = "mlx5gen output cache 3\n"
	maxEntry     = 64 << 20 // bytes of an entry; the 44.0 output is about 1 MiB
	maxSpecFiles = 10000
	maxSpecBytes = 64 << 20 // of all spec files together
	trimAge      = 14 * 24 * time.Hour
	suffix       = ".out"
)

// Entry is what a run made: the generated packages' files, spec/RULES.md
// and what the command printed before writing.
type Entry struct {
	Files, Tables, Bindings, PRM []emit.File
	Rules                        []byte
	Stdout, Stderr               []byte
}

// Cache is a directory of entries (the model cache's directory).
type Cache struct {
	Dir string
	// Log, when set, is told how each lookup and store went (generate -v).
	Log func(format string, args ...any)
}

func (c *Cache) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(format, args...)
	}
}

// Key hashes the model's identity (cheader.Cache.Current), the spec files
// under dir in fsys (every *.yaml, as spec.Load reads them) and opts, the
// options that change the output. It fails when the spec cannot be read
// or is too large to hash, and the run then goes without the cache.
func Key(model string, fsys fs.FS, dir string, opts ...string) (string, error) {
	h := sha256.New()
	put := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	put(magic)
	put(model)
	for _, o := range opts {
		put(o)
	}
	files, total := 0, 0
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".yaml" {
			return err
		}
		if files++; files > maxSpecFiles {
			return errors.New("too many spec files")
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, int64(maxSpecBytes-total+1)))
		if err != nil {
			return err
		}
		if total += len(b); total > maxSpecBytes {
			return errors.New("spec files too large")
		}
		put(p)
		put(string(b))
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (c *Cache) path(key string) string { return c.entries().File(key) }

// entries is the cache's directory of entry files.
func (c *Cache) entries() cachefile.Dir {
	return cachefile.Dir{Path: c.Dir, Magic: magic, Suffix: suffix, Max: maxEntry, Age: trimAge}
}

// Lookup returns the entry under key, or nil and why not.
func (c *Cache) Lookup(key string) (*Entry, string) {
	body, _, why := c.entries().Read(key)
	if why != "" {
		return nil, why
	}
	e, why := decode(body)
	if why != "" {
		return nil, "corrupt entry (" + why + ")"
	}
	return e, ""
}

// Path is where the entry under key is kept (for -v).
func (c *Cache) Path(key string) string { return c.path(key) }

// Store writes e under key atomically; a failure is only logged.
func (c *Cache) Store(key string, e *Entry) {
	if err := c.write(key, encode(e)); err != nil {
		c.logf("output cache: not stored: %v", err)
		return
	}
	c.logf("output cache: stored %s", c.path(key))
	c.entries().Trim()
}

func (c *Cache) write(key string, body []byte) error { return c.entries().Write(key, body) }

// encode lays e out as length-prefixed byte strings: four file lists
// (a count, then name and content of each), the rules, stdout and stderr.
func encode(e *Entry) []byte {
	var b []byte
	str := func(s []byte) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, list := range [][]emit.File{e.Files, e.Tables, e.Bindings, e.PRM} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, f := range list {
			str([]byte(f.Name))
			str(f.Content)
		}
	}
	str(e.Rules)
	str(e.Stdout)
	str(e.Stderr)
	return b
}

// decode reads the entry from a verified entry body.
func decode(body []byte) (*Entry, string) {
	d := decoder{b: body}
	var e Entry
	for _, list := range []*[]emit.File{&e.Files, &e.Tables, &e.Bindings, &e.PRM} {
		n := d.uvarint()
		if n > uint64(len(d.b)) { // every file takes at least two bytes
			return nil, "file list"
		}
		for range n {
			name, content := d.str(), d.str()
			*list = append(*list, emit.File{Name: string(name), Content: content})
		}
	}
	e.Rules, e.Stdout, e.Stderr = d.str(), d.str(), d.str()
	if d.bad || len(d.b) != 0 {
		return nil, "layout"
	}
	return &e, ""
}

// decoder reads length-prefixed strings; bad records any overrun.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}
