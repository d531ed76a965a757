// Package cachefile keeps the entries of mlx5gen's caches (the C model of
// gen/cheader, the output of gen/outcache): each entry is one file in the
// cache directory, framed as a magic line, the payload's length and its
// SHA-256, then the payload: the entry's key (length-prefixed) and the
// body. The key inside the checksummed payload binds the entry to the key
// it was stored under: an entry copied or renamed to another key's file is
// a miss, never the other key's result. Entries are written through a
// temporary file renamed into place, read with a bound and only when they
// are regular files (a named pipe, a device or a symbolic link at an
// entry's path is a miss, never followed, opened for long or read),
// verified before any use (a bad entry is a miss with the reason, never an
// error or a wrong result), and removed once unused for longer than the
// cache's age.
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
	"syscall"
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

// Write stores body under key atomically, with key inside the checksummed
// payload.
func (d Dir) Write(key string, body []byte) error {
	if len(body)+len(key) > d.Max-1024 {
		return fmt.Errorf("entry of %d bytes is too large", len(body))
	}
	payload := binary.LittleEndian.AppendUint64(nil, uint64(len(key)))
	payload = append(append(payload, key...), body...)
	sum := sha256.Sum256(payload)
	out := append([]byte(d.Magic), binary.LittleEndian.AppendUint64(nil, uint64(len(payload)))...)
	out = append(append(out, sum[:]...), payload...)
	if err := os.MkdirAll(d.Path, 0o777); err != nil {
		return err
	}
	return WriteAtomic(d.Path, d.File(key), out, tmpPrefix+"*")
}

// Read returns the verified body of the entry under key and its checksum,
// or why not ("no entry", "not a regular file (…)", the open or read
// error, "corrupt entry (…)" or "entry of another key (…)"). An entry of
// another key is removed. A hit marks the entry used, for Trim.
func (d Dir) Read(key string) (body, sum []byte, why string) {
	f, why := openRegular(d.File(key))
	if f == nil {
		return nil, nil, why
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(d.Max)+1))
	if err != nil {
		return nil, nil, err.Error()
	}
	var stored string
	if stored, body, sum, why = d.unframe(b); why != "" {
		return nil, nil, "corrupt entry (" + why + ")"
	}
	if stored != key {
		d.removeIfSame(f)
		return nil, nil, fmt.Sprintf("entry of another key (%.16s…, not %.16s…): removed", stored, key)
	}
	if fi, err := f.Stat(); err == nil && time.Since(fi.ModTime()) > time.Hour {
		now := time.Now() // it does not matter if this fails
		_ = os.Chtimes(f.Name(), now, now)
	}
	return body, sum, ""
}

// openRegular opens name for reading only if it is a regular file: it
// never follows a symbolic link (O_NOFOLLOW) and never blocks opening a
// named pipe (O_NONBLOCK); what it opened is checked again with fstat.
func openRegular(name string) (*os.File, string) {
	fi, err := os.Lstat(name)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, "no entry"
	case err != nil:
		return nil, err.Error()
	case !fi.Mode().IsRegular():
		return nil, "not a regular file (" + kind(fi.Mode()) + "): " + name
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "no entry"
	}
	if err != nil {
		return nil, err.Error()
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err.Error()
		}
		return nil, "not a regular file (" + kind(fi.Mode()) + "): " + name
	}
	return f, ""
}

// kind names a file mode's type for a miss's reason.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}

// removeIfSame removes the entry file f was opened from, if the file at
// its path is still that one (a concurrent run may have replaced it).
func (d Dir) removeIfSame(f *os.File) {
	open, err1 := f.Stat()
	now, err2 := os.Lstat(f.Name())
	if err1 == nil && err2 == nil && os.SameFile(open, now) {
		os.Remove(f.Name())
	}
}

// unframe checks b's magic, length and checksum, and splits the payload
// into the key it was stored under and the body.
func (d Dir) unframe(b []byte) (key string, body, sum []byte, why string) {
	head := len(d.Magic) + 8 + sha256.Size
	if len(b) > d.Max {
		return "", nil, nil, "too large"
	}
	if len(b) < head || string(b[:len(d.Magic)]) != d.Magic {
		return "", nil, nil, "bad header"
	}
	payload, sum := b[head:], b[len(d.Magic)+8:head]
	if n := binary.LittleEndian.Uint64(b[len(d.Magic):]); uint64(len(payload)) != n {
		return "", nil, nil, fmt.Sprintf("%d bytes, header says %d", len(payload), n)
	}
	if s := sha256.Sum256(payload); !bytes.Equal(s[:], sum) {
		return "", nil, nil, "checksum"
	}
	if len(payload) < 8 {
		return "", nil, nil, "no key"
	}
	n := binary.LittleEndian.Uint64(payload)
	if n > uint64(len(payload)-8) {
		return "", nil, nil, "key length"
	}
	return string(payload[8 : 8+n]), payload[8+n:], sum, ""
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
// name is a regular file; over anything else (a named pipe, a device, a
// symbolic link, whose target's mode Stat would give: /dev/null's 0666)
// it has CreateTemp's 0600. The temporary file is removed on failure.
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
		if st, serr := os.Lstat(name); serr == nil && st.Mode().IsRegular() {
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
