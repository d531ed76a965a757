package cheader

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// cacheTree writes a small header tree: mlx5dv.h includes x.h and
// <stdint.h>, which is found in the system directories (the include root
// is searched first, and does not have it).
func cacheTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "infiniband", "mlx5dv.h"),
		"#include <stdint.h>\n#include <infiniband/x.h>\nstruct s { struct x a; uint32_t b; };\n")
	writeFile(t, filepath.Join(root, "infiniband", "x.h"), "struct x { int a; };\n")
	return root
}

func writeFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// logCache returns a cache in a fresh directory and the lines it logs.
func logCache(t *testing.T) (*Cache, *[]string) {
	var lines []string
	c := &Cache{Dir: filepath.Join(t.TempDir(), "cache")}
	c.Log = func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	return c, &lines
}

// loadLogged loads root through c and returns the model and what c logged.
func loadLogged(t *testing.T, c *Cache, lines *[]string, root string) (*Model, string) {
	t.Helper()
	*lines = (*lines)[:0]
	m, err := Load(Config{IncludeRoot: root, Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	return m, strings.Join(*lines, "\n")
}

func wantLog(t *testing.T, log, want string) {
	t.Helper()
	if !strings.Contains(log, want) {
		t.Errorf("log %q does not say %q", log, want)
	}
}

// sameModel fails unless a and b encode to the same bytes: the codec
// carries every field (TestCodecCoversEveryField), so this compares them
// whole.
func sameModel(t *testing.T, a, b *Model) {
	t.Helper()
	ea, err := encodeModel(a)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := encodeModel(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ea, eb) {
		t.Fatal("the models differ")
	}
	if a.IncludeRoot != b.IncludeRoot || a.Header != b.Header || a.Version != b.Version || a.VersionSource != b.VersionSource {
		t.Fatalf("model fields differ: %q %q %q %q vs %q %q %q %q", a.IncludeRoot, a.Header, a.Version, a.VersionSource,
			b.IncludeRoot, b.Header, b.Version, b.VersionSource)
	}
}

// TestCacheHit: the second load of an unchanged tree is a hit, and gives
// the model the parse gives, for every release of the header cache.
func TestCacheHit(t *testing.T) {
	for _, v := range rdmacore.Versions {
		t.Run(v, func(t *testing.T) {
			root, err := rdmacore.IncludeRoot("../..", v)
			if err != nil {
				t.Fatal(err)
			}
			c, lines := logCache(t)
			parsed, log := loadLogged(t, c, lines, root)
			wantLog(t, log, "model cache: miss (no entry)")
			wantLog(t, log, "model cache: stored")
			cached, log := loadLogged(t, c, lines, root)
			wantLog(t, log, "model cache: hit")
			sameModel(t, parsed, cached)
			if cached.Struct("mlx5_wqe_ctrl_seg") == nil || cached.Constant("MLX5_OPCODE_RDMA_WRITE") == nil {
				t.Fatal("the cached model's indexes are empty")
			}
		})
	}
}

// TestCacheHeaderChanged: a changed header, or a file appearing where
// the search found none before, is a miss and the new model.
func TestCacheHeaderChanged(t *testing.T) {
	root := cacheTree(t)
	c, lines := logCache(t)
	loadLogged(t, c, lines, root)
	writeFile(t, filepath.Join(root, "infiniband", "x.h"), "struct x { long a; };\n")
	m, log := loadLogged(t, c, lines, root)
	wantLog(t, log, "x.h changed")
	if got := m.Struct("x").Size; got != 8 {
		t.Fatalf("struct x: size %d from the cache, want 8 (the changed header)", got)
	}
	if _, log = loadLogged(t, c, lines, root); !strings.Contains(log, "hit") {
		t.Fatalf("the changed tree was not stored: %s", log)
	}
	// stdint.h in the include root now shadows the system's.
	writeFile(t, filepath.Join(root, "stdint.h"), "typedef unsigned long long uint32_t;\n")
	m, log = loadLogged(t, c, lines, root)
	wantLog(t, log, filepath.Join(root, "stdint.h")+" changed")
	if got := m.Struct("s").Size; got != 16 {
		t.Fatalf("struct s: size %d, want 16 (uint32_t of the shadowing stdint.h)", got)
	}
}

// TestCacheBuildKey: another mlx5gen build (or compiler) has other
// entries; a model stored by one is never read by the other.
func TestCacheBuildKey(t *testing.T) {
	root := cacheTree(t)
	c, lines := logCache(t)
	loadLogged(t, c, lines, root)
	other := &Cache{Dir: c.Dir, Log: c.Log, build: "go:another-build"}
	_, log := loadLogged(t, other, lines, root)
	wantLog(t, log, "miss (no entry)")
	k1, _ := c.key(root, DefaultHeader)
	k2, _ := other.key(root, DefaultHeader)
	if k1 == k2 {
		t.Fatal("two builds share a key")
	}
	t.Setenv("CPATH", "/nonexistent")
	if k3, _ := c.key(root, DefaultHeader); k3 == k1 {
		t.Fatal("CPATH, which changes the compiler's include directories, is not in the key")
	}
}

// TestCacheCorrupt: a truncated entry, a flipped byte, garbage, and an
// entry whose checksum holds but whose model does not decode are misses,
// and the parse gives the model.
func TestCacheCorrupt(t *testing.T) {
	root := cacheTree(t)
	c, lines := logCache(t)
	want, _ := loadLogged(t, c, lines, root)
	key, _ := c.key(root, DefaultHeader)
	good, err := os.ReadFile(c.path(key))
	if err != nil {
		t.Fatal(err)
	}
	flip := bytes.Clone(good)
	flip[len(flip)-10] ^= 0x40
	badRef := flatModel{Types: []fType{{Elem: 7}}, Typedefs: []fTypedef{{Name: "t", Type: 1}}}
	for name, write := range map[string]func() error{
		"truncated": func() error { return os.WriteFile(c.path(key), good[:len(good)/2], 0o644) },
		"flipped":   func() error { return os.WriteFile(c.path(key), flip, 0o644) },
		"garbage":   func() error { return os.WriteFile(c.path(key), []byte("not a cache entry"), 0o644) },
		"empty":     func() error { return os.WriteFile(c.path(key), nil, 0o644) },
		"gob":       func() error { return c.write(key, nil, []byte("checksummed but not gob")) },
		"reference": func() error { return c.write(key, nil, gobOf(t, &badRef)) },
	} {
		t.Run(name, func(t *testing.T) {
			if err := write(); err != nil {
				t.Fatal(err)
			}
			m, log := loadLogged(t, c, lines, root)
			wantLog(t, log, "corrupt entry")
			sameModel(t, want, m)
		})
	}
}

// TestCacheUnwritable: a cache directory that cannot be created is
// logged and the model is still right.
func TestCacheUnwritable(t *testing.T) {
	root := cacheTree(t)
	file := filepath.Join(t.TempDir(), "file")
	writeFile(t, file, "")
	c, lines := logCache(t)
	c.Dir = filepath.Join(file, "cache")
	m, log := loadLogged(t, c, lines, root)
	wantLog(t, log, "model cache: not stored")
	want, err := Load(Config{IncludeRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	sameModel(t, want, m)
}

// TestCacheFromEnv: the variable's settings.
func TestCacheFromEnv(t *testing.T) {
	for val, want := range map[string]string{"off": "", "relative/dir": "", "/abs/dir": "/abs/dir"} {
		t.Setenv(CacheEnv, val)
		c, why := CacheFromEnv()
		switch {
		case want == "" && (c != nil || why == ""):
			t.Errorf("%s=%s: cache %v, want off with a reason", CacheEnv, val, c)
		case want != "" && (c == nil || c.Dir != want):
			t.Errorf("%s=%s: cache %v (%s), want %s", CacheEnv, val, c, why, want)
		}
	}
	t.Setenv(CacheEnv, "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if c, _ := CacheFromEnv(); c == nil || c.Dir != "/xdg/mlx5gen" {
		t.Errorf("default: %v, want /xdg/mlx5gen", c)
	}
}

// TestCodecCoversEveryField fails when a model type gains a field: add it
// to codec.go (and here).
func TestCodecCoversEveryField(t *testing.T) {
	want := map[reflect.Type]string{
		reflect.TypeFor[Model]():      "ExternEnums External Enums Files Funcs Header IncludeRoot Macros Records Skipped Typedefs Version VersionSource consts enums funcs records tdefs",
		reflect.TypeFor[Type]():       "Align Const Elem Endian Enum Func Kind Len Name Record Size Typedefs Volatile",
		reflect.TypeFor[Record]():     "Align Aligned Fields Incomplete Kind Pack PackPos Packed Parent Path Pos Size Tag Typedef External ccDiffers",
		reflect.TypeFor[Field]():      "Aligned BitOffset BitWidth Bitfield Name Pos Record Type",
		reflect.TypeFor[Enum]():       "Enumerators External Pos Tag Typedef Underlying",
		reflect.TypeFor[Enumerator](): "Enum Name Pos Type Value",
		reflect.TypeFor[Macro]():      "Name Pos Replacement Type Value",
		reflect.TypeFor[Skipped]():    "Detail Name Pos Reason Replacement",
		reflect.TypeFor[FuncType]():   "Params Result Variadic",
		reflect.TypeFor[Param]():      "Name Type",
		reflect.TypeFor[Func]():       "Body Inline Name Pos Static Type",
		reflect.TypeFor[Typedef]():    "Name Pos Type",
	}
	for rt, names := range want {
		var got []string
		for i := range rt.NumField() {
			got = append(got, rt.Field(i).Name)
		}
		w := strings.Fields(names)
		sort.Strings(got)
		sort.Strings(w)
		if strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("%s has fields %v; codec.go carries %v", rt.Name(), got, w)
		}
	}
}

func gobOf(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCacheSwappedEntries: the entry of every header copied over every
// other header's key is a miss saying so, never the other model; the
// header is parsed again and its own model stored. A named pipe or a
// symbolic link at the entry's path is a miss too, without hanging.
func TestCacheSwappedEntries(t *testing.T) {
	c, lines := logCache(t)
	var roots, keys []string
	models := map[string]*Model{}
	raw := map[string][]byte{}
	for i, field := range []string{"uint32_t b;", "uint64_t b;", "uint8_t b[3];"} {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "infiniband", "mlx5dv.h"), fmt.Sprintf("#include <stdint.h>\nstruct s%d { %s };\n", i, field))
		models[root], _ = loadLogged(t, c, lines, root)
		key, _ := c.key(root, DefaultHeader)
		raw[key], _ = os.ReadFile(c.path(key))
		roots, keys = append(roots, root), append(keys, key)
	}
	for i, to := range keys {
		for j, from := range keys {
			if i == j {
				continue
			}
			if err := os.WriteFile(c.path(to), raw[from], 0o644); err != nil {
				t.Fatal(err)
			}
			m, log := loadLogged(t, c, lines, roots[i])
			wantLog(t, log, "model cache: miss (entry of another key")
			wantLog(t, log, "model cache: stored")
			sameModel(t, models[roots[i]], m)
			if _, log = loadLogged(t, c, lines, roots[i]); !strings.Contains(log, "model cache: hit") {
				t.Errorf("not stored again: %s", log)
			}
		}
	}
	for name, mk := range map[string]func(string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"link":      func(p string) error { return os.Symlink(c.path(keys[1]), p) },
		"/dev/null": func(p string) error { return os.Symlink("/dev/null", p) },
	} {
		os.Remove(c.path(keys[0]))
		if err := mk(c.path(keys[0])); err != nil {
			t.Fatal(err)
		}
		done := make(chan string, 1)
		*lines = (*lines)[:0]
		go func() {
			_, err := Load(Config{IncludeRoot: roots[0], Cache: c})
			done <- fmt.Sprint(strings.Join(*lines, "\n"), err)
		}()
		select {
		case log := <-done:
			wantLog(t, log, "model cache: miss (not a regular file (")
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still loading after 10 s", name)
		}
	}
}
