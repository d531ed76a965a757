package gen_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// undescribed is what each supported release's header declares that no
// descriptor in spec/api covers: nothing, since issue 27. A descriptor file
// lost, or a struct or function a new descriptor leaves out, fails
// TestUndescribed with the item's name; were an item ever let in here, it
// would fail again once described, until taken off, so the list is never
// stale.
var undescribed = map[string][]string{
	"44.0": nil,
	"56.1": nil,
	"65.0": nil,
}

// TestUndescribed holds each release's undescribed items to the list above.
func TestUndescribed(t *testing.T) {
	for _, v := range rdmacore.Versions {
		t.Run(v, func(t *testing.T) {
			want, ok := undescribed[v]
			if !ok {
				t.Fatalf("rdma-core %s: no entry in undescribed", v)
			}
			got := generate(t, v).Package.API.Uncovered
			var added, gone []string
			for _, n := range got {
				if !slices.Contains(want, n) {
					added = append(added, n)
				}
			}
			for _, n := range want {
				if !slices.Contains(got, n) {
					gone = append(gone, n)
				}
			}
			if len(added) > 0 {
				t.Errorf("rdma-core %s: %d items of the header have no descriptor: %s (describe them in spec/api; a struct Go cannot mirror takes opaque: with the reason)",
					v, len(added), strings.Join(added, ", "))
			}
			if len(gone) > 0 {
				t.Errorf("rdma-core %s: described now, take them off undescribed in gen/undescribed_test.go: %s", v, strings.Join(gone, ", "))
			}
		})
	}
}
