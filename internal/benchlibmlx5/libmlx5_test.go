//go:build libmlx5

package benchlibmlx5

import (
	"fmt"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// libSide does the same with libmlx5's builders.
func libSide(t testing.TB, lock bool, post func(l *Lib) error) Side {
	l, err := NewLib(lock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	if err := post(l); err != nil {
		t.Fatal(err)
	}
	return l.Side()
}

// TestBytesAgree checks every benchmarked libmlx5 path against its Go
// twins: the same ring, doorbell record, doorbell register, producer index
// and next register half, past the ring's wrap. mlx5bench runs it before
// it takes any figure of the libmlx5 rows.
func TestBytesAgree(t *testing.T) {
	const n = 2*WQEBBs + 67 // wraps twice, ends inside a batch
	var burst Burst
	gos := map[string]func(q *sq.SQ) error{
		"per-call":  func(q *sq.SQ) error { return PostWrites(q, n, Batch) },
		"one-call":  func(q *sq.SQ) error { return PostWritesOneCall(q, n, Batch) },
		"burst":     func(q *sq.SQ) error { return burst.PostBursts(q, n, Batch) },
		"each-1":    func(q *sq.SQ) error { return PostWrites(q, 1, 1) },
		"each-wrap": func(q *sq.SQ) error { return PostWrites(q, WQEBBs+3, 1) },
	}
	libs := map[string]func(l *Lib) error{
		"wr":       func(l *Lib) error { return l.PostWrites(n, Batch) },
		"postsend": func(l *Lib) error { return l.PostSendChain(n, Batch) },
	}
	pairs := []struct{ lib, twin string }{
		{"wr", "per-call"}, {"wr", "one-call"}, {"wr", "burst"}, {"postsend", "burst"},
	}
	for _, lock := range []bool{true, false} {
		for _, p := range pairs {
			name := fmt.Sprintf("%s/%s/lock=%v", p.lib, p.twin, lock)
			lib := libSide(t, lock, libs[p.lib])
			if lib.CurPost != n { // each write is one WQEBB: libmlx5 really posted them
				t.Errorf("%s: libmlx5 posted %d WQEBBs, want %d", name, lib.CurPost, n)
			}
			if err := Same(name, lib, goSide(t, gos[p.twin])); err != nil {
				t.Error(err)
			}
		}
		for _, k := range []int{1, 2, WQEBBs + 3} {
			name := fmt.Sprintf("doorbell-each/%d/lock=%v", k, lock)
			lib := libSide(t, lock, func(l *Lib) error { return l.PostWrites(k, 1) })
			if err := Same(name, lib, goSide(t, func(q *sq.SQ) error { return PostWrites(q, k, 1) })); err != nil {
				t.Error(err)
			}
			if err := Same(name+"/post", lib, goSide(t, func(q *sq.SQ) error { return PostEach(q, k) })); err != nil {
				t.Error(err)
			}
		}
	}
	for _, per := range []int{1, 8} {
		lib := libSide(t, true, func(l *Lib) error { return libMkeys(l, per) })
		if lib.CurPost < uint32(WQEBBs) { // a UMR with its BSF and a SET_PSV take several WQEBBs
			t.Errorf("mkey/batch%d: libmlx5 posted only %d WQEBBs; the check should wrap the ring", per, lib.CurPost)
		}
		if err := Same(fmt.Sprintf("mkey/batch%d", per), lib, goSide(t, func(q *sq.SQ) error { return goMkeys(q, per, false) })); err != nil {
			t.Error(err)
		}
		if err := Same(fmt.Sprintf("mkey-template/batch%d", per), lib, goSide(t, func(q *sq.SQ) error { return goMkeys(q, per, true) })); err != nil {
			t.Error(err)
		}
		if per == 1 {
			if err := Same("mkey-template/post", lib, goSide(t, goMkeysPost)); err != nil {
				t.Error(err)
			}
		}
	}
}

// goMkeysPost is goMkeys with a template, each configuration posted by
// PostConfigureMkey.
func goMkeysPost(q *sq.SQ) error {
	m, err := NewMkeyConf()
	if err != nil {
		return err
	}
	if err := m.Configure(q, 1, 1); err != nil {
		return err
	}
	return m.ConfigurePost(q, mkeyBatches)
}

// mkeyBatches is how many batches the mkey check posts after the first
// configuration: enough to wrap the ring in both batch sizes.
const mkeyBatches = 60

func libMkeys(l *Lib, per int) error {
	m, err := NewLibMkey()
	if err != nil {
		return err
	}
	defer m.Free()
	if err := l.Configure(m, 1, 1); err != nil {
		return err
	}
	return l.Configure(m, mkeyBatches, per)
}

func goMkeys(q *sq.SQ, per int, template bool) error {
	m, err := NewMkeyConf()
	if err != nil {
		return err
	}
	if err := m.Configure(q, 1, 1); err != nil { // a template needs a configured mkey
		return err
	}
	if template {
		return m.ConfigureTemplate(q, mkeyBatches, per)
	}
	return m.Configure(q, mkeyBatches, per)
}
