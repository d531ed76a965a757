package spec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/diag"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// ParseVersion splits an rdma-core release such as "56.1" into its numbers.
func ParseVersion(v string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(v, ".")
	if !found {
		return 0, 0, false
	}
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	return x, y, err1 == nil && err2 == nil && x >= 0 && y >= 0
}

// CompareVersions orders two rdma-core releases: -1, 0 or +1. Malformed
// versions sort first.
func CompareVersions(a, b string) int {
	am, an, _ := ParseVersion(a)
	bm, bn, _ := ParseVersion(b)
	switch {
	case am != bm:
		return cmp(am, bm)
	default:
		return cmp(an, bn)
	}
}

func cmp(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Includes reports whether release v is within the gate. An empty v (the
// release could not be detected) is within every gate.
func (g Gate) Includes(v string) bool {
	if v == "" {
		return true
	}
	if g.Since != "" && CompareVersions(v, g.Since) < 0 {
		return false
	}
	if g.Until != "" && CompareVersions(v, g.Until) >= 0 {
		return false
	}
	return true
}

func checkGate(p Pos, g Gate) diag.List {
	var errs diag.List
	for _, v := range []string{g.Since, g.Until} {
		if v == "" {
			continue
		}
		if _, _, ok := ParseVersion(v); !ok {
			errs = append(errs, &diag.Error{Pos: p, Msg: fmt.Sprintf("version %q is not an rdma-core release like 56.1", v)})
		}
	}
	if g.Since != "" && g.Until != "" && CompareVersions(g.Since, g.Until) >= 0 {
		errs = append(errs, &diag.Error{Pos: p, Msg: fmt.Sprintf("since %s is not before until %s", g.Since, g.Until)})
	}
	return errs
}

// NormalizeVersion checks an rdma-core release given by a user ("45.0",
// or "45" for "45.0") and returns it as the gates write it.
func NormalizeVersion(v string) (string, error) {
	s := strings.TrimPrefix(strings.TrimSpace(v), "v")
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	major, minor, ok := ParseVersion(s)
	if !ok || major > 9999 || minor > 9999 {
		return "", fmt.Errorf("rdma-core release %q is not a release like 56.1", v)
	}
	return fmt.Sprintf("%d.%d", major, minor), nil
}
