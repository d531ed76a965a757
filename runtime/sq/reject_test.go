package sq_test

import (
	"bytes"
	"errors"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// device is a copy of every byte a call could store to: the ring, the
// doorbell record and the BlueFlame register.
type device struct{ sq, dbr, bf []byte }

func snapshot(mem *qmem.Memory) device {
	return device{bytes.Clone(mem.SQ), bytes.Clone(mem.DBR), bytes.Clone(mem.BF)}
}

// changed names the first part of mem that differs from the snapshot, or
// returns "".
func (d device) changed(mem *qmem.Memory) string {
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
func rejects(t testing.TB, mem *qmem.Memory, rule string, errno syscall.Errno, call func() error) {
	t.Helper()
	re, err := rejected(t, mem, call)
	if re.Rule != rule || !errors.Is(err, errno) {
		t.Fatalf("got %v, want rule %s (%v)", err, rule, errno)
	}
}

// rejected runs call, which must fail with a *RuleError and store nothing
// to mem, and returns the error.
func rejected(t testing.TB, mem *qmem.Memory, call func() error) (*mlx.RuleError, error) {
	t.Helper()
	before := snapshot(mem)
	err := call()
	var re *mlx.RuleError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want a *RuleError", err)
	}
	if what := before.changed(mem); what != "" {
		t.Fatalf("rejected with %s, but %s changed", re.Rule, what)
	}
	return re, err
}
