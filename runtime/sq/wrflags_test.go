package sq_test

import (
	"errors"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// TestSetWRFlagsUnknownBits: a bit outside enum ibv_send_flags is refused
// with the rule's RuleError; inside a batch it also fails the batch, so
// dropping the error does not post work requests with flags never set.
func TestSetWRFlagsUnknownBits(t *testing.T) {
	q, _ := newSQ(t, 16, 0)
	if err := q.SetWRFlags(mlx.IBV_SEND_SIGNALED | mlx.IBV_SEND_FENCE | mlx.IBV_SEND_SOLICITED | mlx.IBV_SEND_INLINE | mlx.IBV_SEND_IP_CSUM); err != nil {
		t.Fatalf("known bits: %v", err)
	}
	err := q.SetWRFlags(0x80000)
	var re *mlx.RuleError
	if !errors.As(err, &re) || re.Rule != "ibv_wr.flags" || re.Field != "wr_flags" || re.Value != 0x80000 || !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("outside a batch: %v, want rule ibv_wr.flags on wr_flags 0x80000", err)
	}
	q.Start()
	_ = q.SetWRFlags(mlx.IBV_SEND_SIGNALED | 0x80000) // dropped on purpose
	q.Send()
	q.SetSGE(0x100, 0x10000, 8)
	if err := q.Complete(); !errors.As(err, &re) || re.Rule != "ibv_wr.flags" {
		t.Fatalf("Complete after refused flags: %v, want rule ibv_wr.flags", err)
	}
}
