package cheader

import (
	"testing"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// TestRealHeadersUnderLimits measures what rdma-core's headers (with the
// libc headers they include) use of the text limits, and requires each
// to be at most a tenth of its limit: the limits refuse only what is far
// from a real header.
func TestRealHeadersUnderLimits(t *testing.T) {
	for _, v := range rdmacore.Versions {
		root, err := rdmacore.IncludeRoot(".", v)
		if err != nil {
			t.Fatalf("rdma-core %s headers: %v", v, err)
		}
		_, p, err := load(Config{IncludeRoot: root})
		if err != nil {
			t.Fatalf("rdma-core %s: %v", v, err)
		}
		c := &p.fs.costs
		t.Logf("rdma-core %s: %d bytes, %d tokens, longest line %d tokens, %d #defines",
			v, p.fs.total, c.ntokens, c.longest, c.defines)
		for _, u := range []struct {
			what      string
			used, lim int
		}{
			{"tokens", c.ntokens, maxHeaderTokens},
			{"tokens of a line", c.longest, maxLineTokens},
			{"#defines", c.defines, maxDefines},
		} {
			if u.used == 0 || u.used*10 > u.lim {
				t.Errorf("rdma-core %s: %d %s, not above 0 and at most a tenth of the limit %d", v, u.used, u.what, u.lim)
			}
		}
	}
}

// SourceCap is the size cap of a header set, for TestHostileHeaders.
var SourceCap = maxSourceBytes

// MaxDefines is the #define limit, for TestHostileHeaders' worst accepted
// case.
const MaxDefines = maxDefines
