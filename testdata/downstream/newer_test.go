//go:build newer

package downstream

import (
	"testing"

	"example.com/downstream/mlx5dv"
	base "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// TestNewerConstants runs on a package generated from a header newer than
// rdma-core 44.0 (go test -tags newer): a constant the committed package
// does not have is of the committed package's type.
func TestNewerConstants(t *testing.T) {
	var f base.AccessFlags = mlx5dv.IBV_ACCESS_FLUSH_GLOBAL
	var op base.WROpcode = mlx5dv.IBV_WR_FLUSH
	if f != 0x100 || op != 0xe {
		t.Fatalf("IBV_ACCESS_FLUSH_GLOBAL %#x, IBV_WR_FLUSH %#x", f, op)
	}
}
