package sq_test

import (
	"bytes"
	"errors"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/queue"
)

// device is a copy of every byte a call could store to: the ring, the
// doorbell record and the BlueFlame register.
type device struct{ sq, dbr, bf []byte }

func snapshot(mem *queue.Memory) device {
	return device{bytes.Clone(mem.SQ), bytes.Clone(mem.DBR), bytes.Clone(mem.BF)}
}

// changed names the first part of mem that differs from the snapshot, or
// returns "".
func (d device) changed(mem *queue.Memory) string {
	switch {
	case !bytes.Equal(d.sq, mem.SQ):
		return "the ring"
	case !bytes.Equal(d.dbr, mem.DBR):
		return "the doorbell record"
	case !bytes.Equal(d.bf, mem.BF):
		return "the BlueFlame register"
	}
	return ""
}

// rejects runs call, which must fail with rule (wrapping errno) and store
// nothing to mem: a rejected call writes nothing.
func rejects(t testing.TB, mem *queue.Memory, rule string, errno syscall.Errno, call func() error) {
	t.Helper()
	before := snapshot(mem)
	err := call()
	var re *mlx.RuleError
	if !errors.As(err, &re) || re.Rule != rule || !errors.Is(err, errno) {
		t.Fatalf("got %v, want rule %s (%v)", err, rule, errno)
	}
	if what := before.changed(mem); what != "" {
		t.Fatalf("rejected with %s, but %s changed", rule, what)
	}
}
