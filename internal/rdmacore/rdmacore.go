// Package rdmacore locates the rdma-core releases mlx5gen supports in the
// project's header cache, fetching them with scripts/rdma-headers.sh
// (apt-get download + dpkg -x, never installed) when they are missing.
package rdmacore

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Versions are the rdma-core releases mlx5gen is tested against: Debian
// bookworm, trixie and sid.
var Versions = []string{"44.0", "56.1", "65.0"}

// Supported reports whether v is one of Versions.
func Supported(v string) bool { return slices.Contains(Versions, v) }

// ModuleRoot finds the directory holding mlx5gen's go.mod, starting at dir
// and walking up.
func ModuleRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/mlx5gen/mlx5gen\n")) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no mlx5gen checkout (go.mod of github.com/mlx5gen/mlx5gen) at or above %s", dir)
		}
		d = parent
	}
}

var (
	mu    sync.Mutex
	known = map[string]string{}
)

// IncludeRoot returns the include directory (…/usr/include) of rdma-core
// release v in the header cache of the mlx5gen checkout at or above dir,
// running scripts/rdma-headers.sh to fetch it if needed.
func IncludeRoot(dir, v string) (string, error) {
	if !Supported(v) {
		return "", fmt.Errorf("rdma-core %s is not supported (supported: %s)", v, strings.Join(Versions, ", "))
	}
	mu.Lock()
	defer mu.Unlock()
	if r, ok := known[v]; ok {
		return r, nil
	}
	top, err := ModuleRoot(dir)
	if err != nil {
		return "", err
	}
	script := filepath.Join(top, "scripts", "rdma-headers.sh")
	var stderr bytes.Buffer
	cmd := exec.Command("bash", script, v)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", script, v, err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == v {
			r := filepath.Join(f[1], "usr", "include")
			known[v] = r
			return r, nil
		}
	}
	return "", fmt.Errorf("%s %s printed no directory for %s: %q", script, v, v, out)
}
