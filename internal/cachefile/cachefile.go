// Package cachefile keeps the entries of mlx5gen's caches (the C model of
// gen/cheader, the output of gen/outcache): each entry is one file in the
// cache directory, framed as a magic line, the body's length and its
// SHA-256, then the body. Entries are written through a temporary file
// renamed into place, read with a bound, verified before any use (a bad
// entry is a miss with the reason, never an error or a wrong result), and
// removed once unused for longer than the cache's age.
package cachefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Dir is one cache's entries: files Name+Suffix under Path.
type Dir struct {
	Path   string
	Magic  string        // the first bytes of every entry: names the cache and its format
	Suffix string        // of the entry files
	Max    int           // bytes an entry may take
	Age    time.Duration // Trim removes entries unused for longer
}

// tmpPrefix starts the temporary files Write renames into place.
const tmpPrefix = "tmp-"

// File is where the entry under key is kept.
func (d Dir) File(key string) string { return filepath.Join(d.Path, key+d.Suffix) }

// Write stores body under key atomically.
func (d Dir) Write(key string, body []byte) error {
	if len(body) > d.Max-1024 {
		return fmt.Errorf("entry of %d bytes is too large", len(body))
	}
	sum := sha256.Sum256(body)
	out := append([]byte(d.Magic), binary.LittleEndian.AppendUint64(nil, uint64(len(body)))...)
	out = append(append(out, sum[:]...), body...)
	if err := os.MkdirAll(d.Path, 0o777); err != nil {
		return err
	}
	return WriteAtomic(d.Path, d.File(key), out, tmpPrefix+"*")
}

// Read returns the verified body of the entry under key and its checksum,
// or why not ("no entry", the open or read error, or "corrupt entry (…)").
// A hit marks the entry used, for Trim.
func (d Dir) Read(key string) (body, sum []byte, why string) {
	f, err := os.Open(d.File(key))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, "no entry"
	}
	if err != nil {
		return nil, nil, err.Error()
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(d.Max)+1))
	if err != nil {
		return nil, nil, err.Error()
	}
	if body, sum, why = d.unframe(b); why != "" {
		return nil, nil, "corrupt entry (" + why + ")"
	}
	if fi, err := f.Stat(); err == nil && time.Since(fi.ModTime()) > time.Hour {
		now := time.Now() // it does not matter if this fails
		_ = os.Chtimes(f.Name(), now, now)
	}
	return body, sum, ""
}

// unframe checks b's magic, length and checksum.
func (d Dir) unframe(b []byte) (body, sum []byte, why string) {
	head := len(d.Magic) + 8 + sha256.Size
	if len(b) > d.Max {
		return nil, nil, "too large"
	}
	if len(b) < head || string(b[:len(d.Magic)]) != d.Magic {
		return nil, nil, "bad header"
	}
	body, sum = b[head:], b[len(d.Magic)+8:head]
	if n := binary.LittleEndian.Uint64(b[len(d.Magic):]); uint64(len(body)) != n {
		return nil, nil, fmt.Sprintf("%d bytes, header says %d", len(body), n)
	}
	if s := sha256.Sum256(body); !bytes.Equal(s[:], sum) {
		return nil, nil, "checksum"
	}
	return body, sum, ""
}

// Trim removes the entries, and the temporary files, unused for longer
// than d.Age (a build that is gone leaves its entries behind).
func (d Dir) Trim() {
	des, err := os.ReadDir(d.Path)
	if err != nil {
		return
	}
	for _, e := range des {
		n := e.Name()
		if !strings.HasSuffix(n, d.Suffix) && !strings.HasPrefix(n, tmpPrefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > d.Age {
			os.Remove(filepath.Join(d.Path, n))
		}
	}
}

// WriteAtomic writes data to name through a temporary file in dir
// (created with pattern) renamed into place, so a reader sees the old
// file or the whole new one. The new file keeps name's permissions when
// name exists. The temporary file is removed on failure.
func WriteAtomic(dir, name string, data []byte, pattern string) error {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if st, serr := os.Stat(name); serr == nil {
			err = os.Chmod(f.Name(), st.Mode().Perm())
		}
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
