package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The libmlx5 rows need libmlx5's own builders, built from an rdma-core
// source tree the user supplies (the Debian archive the project installs
// from has no upstream tarball, and the project copies no rdma-core file).
const (
	srcEnv    = "MLX5GEN_RDMA_CORE_SRC"
	libPkg    = "./internal/benchlibmlx5/"
	noTreeWhy = "needs an rdma-core source tree: git clone --branch v44.0 https://github.com/linux-rdma/rdma-core DIR, " +
		"then scripts/bench.sh -rdma-core-src DIR (or " + srcEnv + "=DIR)"
	// recipe names this build's method; a change to it must miss old caches.
	recipe = "mlx5bench libmlx5 qp.c recipe 1"
)

// libCFlags are rdma-core's own for a RelWithDebInfo build of a provider
// (CMakeLists.txt: gnu11, _GNU_SOURCE, 64-bit off_t; -O2 -g; -fPIC for the
// shared provider), so the builders are compiled as a distribution ships
// them.
var libCFlags = []string{"-std=gnu11", "-O2", "-g", "-fPIC", "-D_GNU_SOURCE=", "-D_FILE_OFFSET_BITS=64"}

// libBuild is libmlx5's qp.c built for the harness: the archive and the
// flags the cgo build of internal/benchlibmlx5 needs.
type libBuild struct {
	Src, Dir, Version string
	Traps             []string // rdma-core functions qp.c names but the posting path never calls
}

// cgoEnv is the environment of `go test -c -tags libmlx5`.
func (b *libBuild) cgoEnv() []string {
	var cf []string
	for _, f := range libCFlags {
		if f != "-fPIC" { // the harness goes into an executable
			cf = append(cf, f)
		}
	}
	cf = append(cf, "-I"+filepath.Join(b.Dir, "include"), "-I"+filepath.Join(b.Src, "providers", "mlx5"))
	return append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS="+strings.Join(cf, " "),
		"CGO_LDFLAGS="+filepath.Join(b.Dir, "libmlx5-qp.a")+" -lpthread")
}

// treeSource is -rdma-core-src, else the environment's, else "".
func treeSource(flagVal string) string {
	if flagVal != "" {
		return flagVal
	}
	return os.Getenv(srcEnv)
}

var versionRE = regexp.MustCompile(`set\(PACKAGE_VERSION "([^"]+)"\)`)

// checkTree says whether src looks like an rdma-core tree and returns its
// version (CMakeLists.txt's PACKAGE_VERSION).
func checkTree(src string) (string, error) {
	for _, f := range []string{"providers/mlx5/qp.c", "providers/mlx5/mlx5.h", "libibverbs/verbs.h", "buildlib/make_abi_structs.py", "CMakeLists.txt"} {
		if _, err := os.Stat(filepath.Join(src, f)); err != nil {
			return "", fmt.Errorf("-rdma-core-src %s: not an rdma-core source tree (%v); %s", src, err, noTreeWhy)
		}
	}
	cm, err := os.ReadFile(filepath.Join(src, "CMakeLists.txt"))
	if err != nil {
		return "", err
	}
	m := versionRE.FindSubmatch(cm)
	if m == nil {
		return "", fmt.Errorf("-rdma-core-src %s: no PACKAGE_VERSION in CMakeLists.txt", src)
	}
	return string(m[1]), nil
}

// treeKey hashes what the build reads from the tree (every header and
// source of the directories it includes from, the ABI script), the recipe
// and the compiler's version: the cache entry's identity.
func treeKey(src string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", recipe, strings.Join(libCFlags, " "))
	if v, err := exec.Command("gcc", "-dumpfullversion").Output(); err == nil {
		h.Write(v)
	} else {
		return "", fmt.Errorf("gcc: %v (the libmlx5 rows need gcc)", err)
	}
	var files []string
	for _, d := range []string{"providers/mlx5", "libibverbs", "util", "ccan", "kernel-headers", "buildlib"} {
		err := filepath.WalkDir(filepath.Join(src, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.Type().IsRegular() && (strings.HasSuffix(p, ".h") || strings.HasSuffix(p, ".c") || strings.HasSuffix(p, ".py")) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(src, f)
		fmt.Fprintf(h, "%s %d\n", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// buildLib builds libmlx5's qp.c from src into the user's cache directory
// once per tree identity, and returns the build.
func buildLib(src string, log io.Writer) (*libBuild, error) {
	src, err := filepath.Abs(src)
	if err != nil {
		return nil, err
	}
	version, err := checkTree(src)
	if err != nil {
		return nil, err
	}
	key, err := treeKey(src)
	if err != nil {
		return nil, err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("no cache directory for libmlx5's objects: %v", err)
	}
	parent := filepath.Join(cache, "mlx5gen", "libmlx5")
	dir := filepath.Join(parent, version+"-"+key)
	b := &libBuild{Src: src, Dir: dir, Version: version}
	if stamp, err := os.ReadFile(filepath.Join(dir, "stamp")); err == nil && strings.HasPrefix(string(stamp), key+"\n") {
		b.Traps = strings.Fields(strings.TrimPrefix(string(stamp), key+"\n"))
		fmt.Fprintf(log, "mlx5bench: libmlx5 %s from %s (cached in %s)\n", version, src, dir)
		return b, nil
	}
	fmt.Fprintf(log, "mlx5bench: building libmlx5 %s's qp.c from %s into %s\n", version, src, dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, ".build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	traps, err := compileLib(src, tmp, version)
	if err != nil {
		return nil, err
	}
	b.Traps = traps
	stamp := key + "\n" + strings.Join(traps, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "stamp"), []byte(stamp), 0o644); err != nil {
		return nil, err
	}
	os.RemoveAll(dir) // a stale or half-written entry of the same key
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("storing libmlx5's build: %v", err)
	}
	return b, nil
}

// runIn runs a build command in dir, its output in the error.
func runIn(dir string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

var undefRE = regexp.MustCompile("undefined reference to `([A-Za-z_][A-Za-z0-9_]*)'")

// compileLib lays out the headers as rdma-core's cmake publishes them
// (include.go), compiles qp.c, finds the functions of the rest of
// rdma-core that qp.o names (a trial link), defines each as a trap that
// aborts with its name (the benchmarked paths call none: the byte check
// would abort), and archives both.
func compileLib(src, dir, version string) ([]string, error) {
	inc := filepath.Join(dir, "include")
	if err := layoutHeaders(src, inc, version); err != nil {
		return nil, err
	}
	args := append(append([]string{}, libCFlags...), "-I"+inc, "-I"+filepath.Join(src, "providers", "mlx5"),
		"-c", filepath.Join(src, "providers", "mlx5", "qp.c"), "-o", "qp.o")
	if err := runIn(dir, "gcc", args...); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "probe.c"), []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		return nil, err
	}
	out, _ := exec.Command("gcc", "-o", filepath.Join(dir, "probe"), filepath.Join(dir, "probe.c"), filepath.Join(dir, "qp.o"), "-lpthread").CombinedOutput()
	seen := map[string]bool{}
	var traps []string
	for _, m := range undefRE.FindAllSubmatch(out, -1) {
		if s := string(m[1]); !seen[s] {
			seen[s] = true
			traps = append(traps, s)
		}
	}
	sort.Strings(traps)
	var t bytes.Buffer
	t.WriteString("/* Generated by mlx5bench: functions of rdma-core outside qp.c that qp.o names.\n" +
		" * The harness's paths call none of them; each aborts with its name if one is reached. */\n" +
		"#include <stdio.h>\n#include <stdlib.h>\n" +
		"static void lm5_trap(const char *name) { fprintf(stderr, \"libmlx5 harness: %s reached: not built\\n\", name); abort(); }\n")
	for _, s := range traps {
		fmt.Fprintf(&t, "void %s(void);\nvoid %s(void) { lm5_trap(\"%s\"); }\n", s, s, s)
	}
	if err := os.WriteFile(filepath.Join(dir, "traps.c"), t.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if err := runIn(dir, "gcc", "-O2", "-c", "traps.c", "-o", "traps.o"); err != nil {
		return nil, err
	}
	if err := runIn(dir, "ar", "rcs", "libmlx5-qp.a", "qp.o", "traps.o"); err != nil {
		return nil, err
	}
	// What is left must link: a symbol of the trial link that was not an
	// undefined reference (a missing library, say) fails here, not in go test.
	if err := runIn(dir, "gcc", "-o", "probe", "probe.c", "-Wl,--whole-archive", "libmlx5-qp.a", "-Wl,--no-whole-archive", "-lpthread"); err != nil {
		return nil, err
	}
	return traps, nil
}
