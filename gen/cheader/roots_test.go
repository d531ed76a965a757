package cheader_test

import (
	"os"
	"path/filepath"
	"testing"
)

// RootsEnv names more include roots for the gcc comparison, separated like
// PATH: any rdma-core release's headers (an upstream tag assembled as
// rdma-core installs them, a vendor tree) are checked like the cached ones:
//
//	MLX5GEN_INCLUDE_ROOTS=/tmp/tree-v45.0/include:/tmp/tree-v64.0/include go test ./gen/cheader -run TestLayoutMatchesGCC
const RootsEnv = "MLX5GEN_INCLUDE_ROOTS"

// extraRoots returns the roots of RootsEnv by subtest name "env:<root>".
// A root without infiniband/mlx5dv.h fails the test: a typo must not pass
// as a check of nothing.
func extraRoots(t *testing.T) map[string]string {
	roots := map[string]string{}
	for _, r := range filepath.SplitList(os.Getenv(RootsEnv)) {
		if r == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(r, "infiniband", "mlx5dv.h")); err != nil {
			t.Fatalf("%s: %v", RootsEnv, err)
		}
		roots["env:"+r] = r
	}
	return roots
}
