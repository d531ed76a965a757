package cheader

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// pcDirs are where an rdma-core install puts libibverbs.pc, relative to the
// prefix above the include root: lib/pkgconfig (upstream default),
// lib64/pkgconfig (RPM distributions) and lib/<triplet>/pkgconfig (Debian).
var pcDirs = []string{"lib/pkgconfig", "lib64/pkgconfig", "lib/*/pkgconfig"}

// NoPC is the VersionSource of a header tree without libibverbs.pc: the
// release is unknown and availability follows what the header declares.
const NoPC = "no libibverbs.pc in lib/pkgconfig, lib64/pkgconfig or lib/*/pkgconfig beside the include root"

// detectVersion finds the rdma-core release that installed the headers under
// root, from libibverbs.pc next to them. Its Version field is
// "<ABI>.<ABI minor>.<release>" (1.14.44.0). Without one the release is
// unknown ("") and source says why.
func detectVersion(root string) (version, source string) {
	prefix := filepath.Dir(filepath.Clean(root))
	for _, d := range pcDirs {
		matches, _ := filepath.Glob(filepath.Join(prefix, filepath.FromSlash(d), "libibverbs.pc"))
		sort.Strings(matches)
		for _, pc := range matches {
			if v := pcVersion(pc); v != "" {
				rel, err := filepath.Rel(prefix, pc)
				if err != nil {
					rel = pc
				}
				return v, "pkg-config " + filepath.ToSlash(rel)
			}
		}
	}
	return "", NoPC
}

// pcVersion reads the release from a libibverbs.pc, or "" when the file
// is unreadable or its Version is not "<ABI>.<minor>.<major>.<minor>".
// Only the first 64 KiB are read: a .pc file is a few hundred bytes.
func pcVersion(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "Version:")
		if !ok {
			continue
		}
		parts := strings.Split(strings.TrimSpace(v), ".")
		if len(parts) != 4 || !digits(parts[2]) || !digits(parts[3]) {
			return ""
		}
		return parts[2] + "." + parts[3]
	}
	return ""
}

func digits(s string) bool {
	if s == "" || len(s) > 6 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
