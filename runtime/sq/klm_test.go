package sq_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// klmForms are the entry points that take a list layout: open (nil for
// the one-call forms) opens an mkey configuration, post gives it the
// list sges.
var klmForms = []struct {
	name string
	open func(q *sq.SQ, m *sq.Mkey) error
	post func(q *sq.SQ, m *sq.Mkey, t *sq.MkeyTemplate, sges []mlx.SGE) error
}{
	{"MRList", nil, func(q *sq.SQ, m *sq.Mkey, _ *sq.MkeyTemplate, sges []mlx.SGE) error {
		return q.MRList(m, mlx.IBV_ACCESS_LOCAL_WRITE, sges)
	}},
	{"SetMkeyLayoutList", func(q *sq.SQ, m *sq.Mkey) error {
		if err := q.MkeyConfigure(m, 2, &mlx.MkeyConfAttr{}); err != nil {
			return err
		}
		return q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE)
	}, func(q *sq.SQ, _ *sq.Mkey, _ *sq.MkeyTemplate, sges []mlx.SGE) error {
		return q.SetMkeyLayoutList(sges)
	}},
	// The layout as the first of two setters: SetMkeyLayoutList's fast
	// path (a setter that does not finish the configuration).
	{"SetMkeyLayoutList first", func(q *sq.SQ, m *sq.Mkey) error {
		return q.MkeyConfigure(m, 2, &mlx.MkeyConfAttr{})
	}, func(q *sq.SQ, _ *sq.Mkey, _ *sq.MkeyTemplate, sges []mlx.SGE) error {
		if err := q.SetMkeyLayoutList(sges); err != nil {
			return err
		}
		return q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE)
	}},
	{"ConfigureMkey", nil, func(q *sq.SQ, m *sq.Mkey, t *sq.MkeyTemplate, sges []mlx.SGE) error {
		return q.ConfigureMkey(m, t, sges)
	}},
}

// postKLM opens the configuration if the form needs it, then posts sges.
func postKLM(t *testing.T, q *sq.SQ, m *sq.Mkey, tmpl *sq.MkeyTemplate, open func(*sq.SQ, *sq.Mkey) error,
	post func(*sq.SQ, *sq.Mkey, *sq.MkeyTemplate, []mlx.SGE) error, sges []mlx.SGE) error {
	t.Helper()
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	if open != nil {
		if err := open(q, m); err != nil {
			t.Fatal(err)
		}
	}
	return post(q, m, tmpl, sges)
}

// TestKLMLength (rule wr_post.mr_list.klm_length): a list entry of more
// than 2 GiB is refused at every entry point that takes a list, naming
// the entry, its length and the limit (errors.Is EINVAL), before anything
// is stored; Complete returns the same error and the queue goes on where
// it was. Entries of exactly 2 GiB, which a KLM holds, are posted.
func TestKLMLength(t *testing.T) {
	tmpl, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range klmForms {
		for _, bad := range []uint32{1<<31 + 1, 0xc0000000, 0xffffffff} {
			t.Run(fmt.Sprintf("%s/%#x", f.name, bad), func(t *testing.T) {
				q, mem := newLenSQ(t, 0)
				m := sq.NewMkey(0x4700, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 8)
				start := keep(q, mem)
				if err := q.SetWRFlags(mlx.IBV_SEND_INLINE); err != nil {
					t.Fatal(err)
				}
				sges := []mlx.SGE{{Addr: 0x10000, Length: 1 << 31, LKey: 0x100}, {Addr: 0x100000000, Length: bad, LKey: 0x101}}
				var atCall bookkeeping
				open := func(q *sq.SQ, m *sq.Mkey) error {
					if f.open != nil {
						if err := f.open(q, m); err != nil {
							return err
						}
					}
					atCall = keep(q, mem)
					return nil
				}
				err := postKLM(t, q, m, tmpl, open, f.post, sges)
				var re *mlx.RuleError
				if !errors.As(err, &re) || re.Rule != "wr_post.mr_list.klm_length" || !errors.Is(err, syscall.EINVAL) {
					t.Fatalf("got %v, want rule wr_post.mr_list.klm_length (EINVAL)", err)
				}
				if re.Field != "sge[1].length" || re.Value != uint64(bad) || re.Limit != 1<<31 || re.Test != mlx.TestMax || re.WR != 0 {
					t.Fatalf("%v: field %q value %#x limit %#x wr %d; want sge[1].length, %#x, 2^31, 0", err, re.Field, re.Value, re.Limit, re.WR, bad)
				}
				for _, s := range []string{"sge[1].length", fmt.Sprint(bad), "2147483648", "2 GiB"} {
					if !strings.Contains(err.Error(), s) {
						t.Fatalf("%q does not say %q", err, s)
					}
				}
				if what := atCall.changed(q, mem); what != "" {
					t.Fatalf("the rejected call changed %s", what)
				}
				completeFails(t, q, mem, start, err)
				// The same list with every entry at the limit is posted.
				sges[1].Length = 1 << 31
				if err := postKLM(t, q, m, tmpl, f.open, f.post, sges); err != nil {
					t.Fatalf("entries of 2 GiB: %v", err)
				}
				if err := q.Complete(); err != nil {
					t.Fatal(err)
				}
				if q.CurPost() == start.pi {
					t.Fatal("the accepted configuration posted nothing")
				}
			})
		}
	}
}
