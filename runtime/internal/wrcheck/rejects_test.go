package wrcheck_test

import (
	"syscall"
	"testing"

	"github.com/mlx5gen/mlx5gen/internal/replay"
	"github.com/mlx5gen/mlx5gen/internal/vectors"
)

// TestRejects holds every case of testdata/vectors/rejects.json to the
// state machine's verdict, through the send-queue writer (internal/replay):
// the batch libmlx5 rejects fails with the same errno, as a *RuleError,
// and posts nothing; the misuses libmlx5 accepts fail with the rule that
// forbids them, whose descriptor says libmlx5 accepts it.
func TestRejects(t *testing.T) {
	f, err := vectors.Load("../../../testdata/vectors/rejects.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 38 {
		t.Errorf("%d cases, want 38", len(f.Cases))
	}
	held := map[string]bool{}
	for _, o := range replay.File(f) {
		if o.Err != nil {
			t.Errorf("%s: %v", o.ID, o.Err)
		}
		for _, d := range o.Divergences {
			held[o.ID] = d.Batch >= 0 && d.Rule.Libmlx5Accepts && d.Rule.Errno == syscall.EINVAL
		}
	}
	for _, id := range []string{"misuse_dci_missing_dc_addr", "misuse_mkey_fewer_setters"} {
		if !held[id] {
			t.Errorf("%s: libmlx5 accepts this misuse; replay must hold it to a libmlx5_accepts rule (EINVAL)", id)
		}
	}
}
