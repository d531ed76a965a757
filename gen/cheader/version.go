package cheader

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// detectVersion finds the rdma-core release that installed the headers under
// root, from libibverbs.pc next to them (<prefix>/lib/<triplet>/pkgconfig).
// Its Version field is "<ABI>.<ABI minor>.<release>" (1.14.44.0).
func detectVersion(root string) (version, source string) {
	prefix := filepath.Dir(root)
	matches, _ := filepath.Glob(filepath.Join(prefix, "lib", "*", "pkgconfig", "libibverbs.pc"))
	more, _ := filepath.Glob(filepath.Join(prefix, "lib", "pkgconfig", "libibverbs.pc"))
	matches = append(matches, more...)
	sort.Strings(matches)
	for _, pc := range matches {
		if v := pcVersion(pc); v != "" {
			return v, "pkg-config libibverbs.pc"
		}
	}
	return "", "unknown (no libibverbs.pc next to the include root)"
}

func pcVersion(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "Version:")
		if !ok {
			continue
		}
		parts := strings.Split(strings.TrimSpace(v), ".")
		if len(parts) < 4 {
			return ""
		}
		return strings.Join(parts[2:], ".")
	}
	return ""
}
