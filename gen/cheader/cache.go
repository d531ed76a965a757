package cheader

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mlx5gen/mlx5gen/internal/cachefile"
)

// A Cache keeps the models of headers already parsed, as the go command's
// build cache keeps compiled packages: parsing mlx5dv.h with cc/v4 is most
// of a generator run, and the header set rarely changes between two runs
// of go generate.
//
// An entry is found by a key that hashes everything the parse depends on
// besides the headers: the mlx5gen build (its Go build ID, else the hash
// of the executable), the host C compiler cc/v4 asks for its predefined
// macros and include directories (its resolved path, size and time, and
// the environment variables that change them), GOOS/GOARCH, the include
// root and the header. The entry lists every file the parse opened, or
// looked for and did not find, with the SHA-256 of its content; it is used
// only when every one of them is still the same. It is written to a
// temporary file and renamed into place, and it carries a checksum, so a
// crashed or concurrent run, a truncated or a corrupt entry is a miss,
// never a wrong model. Any miss parses the header again.
type Cache struct {
	Dir string
	// Log, when set, is told how each lookup and store went (generate -v).
	Log func(format string, args ...any)
	// build identifies the executable; "" until computed.
	build string
}

// CacheEnv names the environment variable that sets the cache directory;
// "off" disables the cache.
const CacheEnv = "MLX5GENCACHE"

// CacheFromEnv returns the cache the environment asks for: $MLX5GENCACHE,
// else mlx5gen under the user's cache directory. It returns nil and why
// when the cache is off or has no directory.
func CacheFromEnv() (*Cache, string) {
	dir := os.Getenv(CacheEnv)
	switch {
	case dir == "off":
		return nil, CacheEnv + "=off"
	case dir == "":
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Sprintf("no user cache directory (%v); set %s", err, CacheEnv)
		}
		dir = filepath.Join(base, "mlx5gen")
	case !filepath.IsAbs(dir):
		return nil, fmt.Sprintf("%s=%s is not an absolute path", CacheEnv, dir)
	}
	return &Cache{Dir: dir}, ""
}

func (c *Cache) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(format, args...)
	}
}

// The limits of an entry: what a model of rdma-core's headers needs is
// about a megabyte.
const (
	cacheMagic    = "mlx5gen model cache 2\n"
	maxEntryBytes = 64 << 20
	maxObserved   = 10000 // files an entry may list
	cacheTrimAge  = 14 * 24 * time.Hour
)

// observed is a file the parse opened (Sum of its content) or looked for
// and did not find as a regular file (Missing).
type observed struct {
	Name    string
	Missing bool
	Sum     [sha256.Size]byte
}

// entry is what a cache file holds after its header.
type entry struct {
	Files []observed
	Model []byte // encodeModel
}

// observe says what name is now, as sourceFS would serve it.
func observe(name string) observed {
	fi, err := os.Stat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return observed{Name: name, Missing: true}
	}
	f, err := os.Open(name)
	if err != nil {
		return observed{Name: name, Missing: true}
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxSourceBytes+1)); err != nil {
		return observed{Name: name, Missing: true}
	}
	o := observed{Name: name}
	h.Sum(o.Sum[:0])
	return o
}

// key hashes what the model depends on besides the files it read; ok is
// false when the build or the compiler cannot be identified.
func (c *Cache) key(root, header string) (string, bool) {
	if c.build == "" {
		c.build = buildID()
	}
	comp := compilerID()
	if c.build == "" || comp == "" {
		return "", false
	}
	h := sha256.New()
	for _, s := range []string{cacheMagic, c.build, comp, runtime.GOOS, runtime.GOARCH, root, header,
		fmt.Sprint(maxSourceBytes, maxMarkers, maxNesting)} {
		fmt.Fprintf(h, "%d:%s;", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// buildID identifies the running mlx5gen: the Go build ID of the
// executable (it changes with its content), else the SHA-256 of the file.
func buildID() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if f, err := elf.Open(exe); err == nil {
		defer f.Close()
		if s := f.Section(".note.go.buildid"); s != nil {
			if b, err := s.Data(); err == nil && len(b) > 16 {
				// A note: namesz, descsz, type, "Go\0\0", the ID.
				n := binary.LittleEndian.Uint32(b[4:8])
				if id := b[16:]; int(n) <= len(id) && n > 0 {
					return "go:" + string(id[:n])
				}
			}
		}
	}
	o := observe(exe)
	if o.Missing {
		return ""
	}
	return "sha256:" + hex.EncodeToString(o.Sum[:])
}

// compilerID identifies the C compiler cc/v4 asks for its configuration
// ($CC, else cc, else gcc), and the variables that change its answer.
func compilerID() string {
	for _, cand := range []string{os.Getenv("CC"), "cc", "gcc"} {
		if cand == "" {
			continue
		}
		p, err := exec.LookPath(cand)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s|%s|%s|%d|%d", cand, p, real, fi.Size(), fi.ModTime().UnixNano())
		for _, v := range []string{"CPATH", "C_INCLUDE_PATH", "GCC_EXEC_PREFIX", "COMPILER_PATH"} {
			fmt.Fprintf(&b, "|%s=%s", v, os.Getenv(v))
		}
		return b.String()
	}
	return ""
}

func (c *Cache) path(key string) string { return c.entries().File(key) }

// entries is the cache's directory of entry files.
func (c *Cache) entries() cachefile.Dir {
	return cachefile.Dir{Path: c.Dir, Magic: cacheMagic, Suffix: ".model", Max: maxEntryBytes, Age: cacheTrimAge}
}

// valid reads the entry under key and checks that every file it lists is
// still the same; it returns the entry and its checksum (a hash of all of
// it), or why not.
func (c *Cache) valid(key string) (*entry, []byte, string) {
	body, sum, why := c.entries().Read(key)
	if why != "" {
		return nil, nil, why
	}
	e, why := parseEntry(body)
	if why != "" {
		return nil, nil, "corrupt entry (" + why + ")"
	}
	for _, o := range e.Files {
		if observe(o.Name) != o {
			return nil, nil, o.Name + " changed"
		}
	}
	return e, sum, ""
}

// Current identifies the model of the header under includeRoot as the
// cache holds it, without decoding it: the entry's key and checksum, and
// the release detected (libibverbs.pc), when the entry exists and every
// file it lists is unchanged; else "" and why not. A cache of what is made
// from the model (generate's output cache) keys on it.
func (c *Cache) Current(includeRoot, header string) (id, why string) {
	if includeRoot == "" {
		includeRoot = DefaultIncludeRoot
	}
	if header == "" {
		header = DefaultHeader
	}
	root, err := filepath.Abs(includeRoot)
	if err != nil {
		return "", err.Error()
	}
	key, ok := c.key(root, header)
	if !ok {
		return "", "cannot identify the mlx5gen build or the C compiler"
	}
	_, sum, why := c.valid(key)
	if why != "" {
		return "", "model " + why
	}
	v, src := detectVersion(root)
	return key + ":" + hex.EncodeToString(sum) + ":" + v + ":" + src, ""
}

// lookup returns the cached model of the header, or nil and why not.
func (c *Cache) lookup(key string) (*Model, string) {
	e, _, why := c.valid(key)
	if why != "" {
		return nil, why
	}
	m, err := decodeModel(e.Model)
	if err != nil {
		return nil, "corrupt entry (" + err.Error() + ")"
	}
	return m, ""
}

// parseEntry reads the entry from a cache file's verified body.
func parseEntry(body []byte) (*entry, string) {
	r := bytes.NewReader(body)
	var e entry
	count, err := binary.ReadUvarint(r)
	if err != nil || count > maxObserved {
		return nil, "file list"
	}
	for range count {
		var o observed
		l, err := binary.ReadUvarint(r)
		if err != nil || l > 4096 || l > uint64(r.Len()) {
			return nil, "file list"
		}
		name := make([]byte, l)
		if _, err := io.ReadFull(r, name); err != nil {
			return nil, "file list"
		}
		o.Name = string(name)
		flag, err := r.ReadByte()
		if err != nil || flag > 1 {
			return nil, "file list"
		}
		o.Missing = flag == 1
		if _, err := io.ReadFull(r, o.Sum[:]); err != nil {
			return nil, "file list"
		}
		e.Files = append(e.Files, o)
	}
	e.Model = body[len(body)-r.Len():]
	return &e, ""
}

// store writes the model and the files it was read from under key,
// atomically; a failure is only logged.
func (c *Cache) store(key string, files []observed, m *Model) {
	b, err := encodeModel(m)
	if err == nil {
		err = c.write(key, files, b)
	}
	if err != nil {
		c.logf("model cache: not stored: %v", err)
		return
	}
	c.logf("model cache: stored %s", c.path(key))
	c.entries().Trim()
}

func (c *Cache) write(key string, files []observed, model []byte) error {
	var body bytes.Buffer
	body.Write(binary.AppendUvarint(nil, uint64(len(files))))
	for _, o := range files {
		body.Write(binary.AppendUvarint(nil, uint64(len(o.Name))))
		body.WriteString(o.Name)
		if o.Missing {
			body.WriteByte(1)
		} else {
			body.WriteByte(0)
		}
		body.Write(o.Sum[:])
	}
	body.Write(model)
	return c.entries().Write(key, body.Bytes())
}

// observeMissing and observeRead note, when the cache is on, a file
// sourceFS did not find or served.
func (p *parser) observeMissing(name string) {
	if p.seen != nil && !p.seen[name] {
		p.seen[name] = true
		p.observed = append(p.observed, observed{Name: name, Missing: true})
	}
}

func (p *parser) observeRead(name string, src []byte) {
	if p.seen != nil && !p.seen[name] {
		p.seen[name] = true
		p.observed = append(p.observed, observed{Name: name, Sum: sha256.Sum256(src)})
	}
}

// cached looks the header up in c's cache: the model on a hit, with the
// fields that are not stored filled in; else nil, and the key to store
// the parsed model under ("" when it cannot be cached).
func (c Config) cached(root string) (*Model, string) {
	key, ok := c.Cache.key(root, c.Header)
	if !ok {
		c.Cache.logf("model cache: off (cannot identify the mlx5gen build or the C compiler)")
		return nil, ""
	}
	m, why := c.Cache.lookup(key)
	if m == nil {
		c.Cache.logf("model cache: miss (%s): parsing %s", why, filepath.Join(c.IncludeRoot, c.Header))
		return nil, key
	}
	c.Cache.logf("model cache: hit %s", c.Cache.path(key))
	m.IncludeRoot, m.Header = c.IncludeRoot, filepath.ToSlash(c.Header)
	m.Version, m.VersionSource = detectVersion(root)
	m.index()
	return m, ""
}
