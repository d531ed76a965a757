// Package replay runs reference vectors (testdata/vectors, recorded from
// rdma-core's libmlx5) through mlx5gen's send-queue writer, runtime/sq, on
// plain memory, and compares what it writes with what libmlx5 wrote: every
// WQE byte the vector does not mark unwritten, the producer index, the
// bookkeeping, the doorbell record, the BlueFlame writes, the fence cache
// and the mkey state. mlx5gen replay prints its verdicts.
//
// Where mlx5gen deliberately differs from libmlx5, the spec's rules say so
// (libmlx5_accepts, follows: spec/README.md), and a case is held to what
// the rule says (Divergence); nothing here depends on a case's id.
package replay

import (
	"bytes"
	"errors"
	"fmt"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/internal/vectors"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// Outcome is the verdict on one case.
type Outcome struct {
	ID          string
	Err         error        // nil: the case passed
	Divergences []Divergence // the documented divergences the case was held to
}

// Replayer replays cases, deciding divergences by Rules.
type Replayer struct {
	Rules []mlx5rules.RuleInfo // nil: the generated mlx5dv.Rules
}

// File replays every case of a vector file with the generated rules.
func File(f *vectors.File) []Outcome { return (&Replayer{}).File(f) }

// Case replays one case with the generated rules.
func Case(c *vectors.Case) Outcome { return (&Replayer{}).Case(c) }

// File replays every case of a vector file.
func (p *Replayer) File(f *vectors.File) []Outcome {
	out := make([]Outcome, 0, len(f.Cases))
	for i := range f.Cases {
		out = append(out, p.Case(&f.Cases[i]))
	}
	return out
}

// Case replays one case. A case that breaks the bounds of
// vectors.Case.Check fails without being run.
func (p *Replayer) Case(c *vectors.Case) Outcome {
	o := Outcome{ID: c.ID}
	if o.Err = c.Check(); o.Err != nil {
		return o
	}
	setup, res := &c.Setup, &c.Result
	if r := p.newest(c); r != nil {
		o.Divergences = append(o.Divergences, Divergence{Rule: *r, Batch: -1, Newest: true})
		res = c.AtNewest
		if c.SetupNewest != nil {
			setup = c.SetupNewest
		}
	}
	var fixes []mlx5rules.ChainCheck
	for {
		d, err := p.replay(c, setup, res, fixes)
		if err != nil {
			if len(fixes) > 0 {
				err = fmt.Errorf("on %s: %w", qpFixes[fixes[len(fixes)-1]].what, err)
			}
			o.Err = err
			return o
		}
		if d == nil {
			return o
		}
		// A rule about how the QP was created: replay again on a QP
		// that keeps it, where libmlx5's result must be matched.
		fix, ok := qpFixes[d.Rule.Chain]
		if d.Rule.Kind != "qp" || !ok || contains(fixes, d.Rule.Chain) {
			o.Divergences = append(o.Divergences, *d)
			return o
		}
		d.QP = fix.what
		o.Divergences = append(o.Divergences, *d)
		fixes = append(fixes, d.Rule.Chain)
	}
}

func contains(l []mlx5rules.ChainCheck, c mlx5rules.ChainCheck) bool {
	for _, x := range l {
		if x == c {
			return true
		}
	}
	return false
}

// replay runs a case once against res, on a QP with the given fixes; it
// returns the divergence that ended it early, if any.
func (p *Replayer) replay(c *vectors.Case, s *vectors.Setup, res *vectors.Result, fixes []mlx5rules.ChainCheck) (*Divergence, error) {
	r, err := newRun(c, s, res, func(qp *sq.QP) {
		for _, f := range fixes {
			qpFixes[f].fix(qp)
		}
	})
	if err != nil {
		return nil, err
	}
	defer r.mem.Close()
	r.p = p
	if err := r.run(); err != nil {
		return nil, err
	}
	return r.div, nil
}

// run is the replay of one case.
type run struct {
	p     *Replayer
	c     *vectors.Case
	res   *vectors.Result
	mem   *qmem.Memory
	q     *sq.SQ
	mkeys map[string]*sq.Mkey
	ahs   map[string]*sq.AH
	deks  map[string]*sq.DEK
	mws   map[string]*sq.MW
	mrs   map[string]uint32 // lkeys
	dci   bool

	// div is the divergence that stopped the replay after a batch
	// mlx5gen rejects on purpose.
	div *Divergence
	// What the last ibv_wr_complete returned.
	completeErr error
	// The first producer index that differed from libmlx5's inside the
	// batch: an error unless the batch is a documented divergence.
	pending error
}

// snapshot is the memory before a batch.
type snapshot struct {
	ring, dbr, bf []byte
	fmCache       uint8
	bfOff         int
}

func (r *run) snap() snapshot {
	return snapshot{bytes.Clone(r.mem.SQ), bytes.Clone(r.mem.DBR), bytes.Clone(r.mem.BF), r.q.FmCache(), r.q.BFOffset()}
}

func (r *run) run() error {
	calls := r.c.Calls
	batches := r.res.Batches
	bi := 0
	var before snapshot
	for i := range calls {
		call := &calls[i]
		if bi < len(batches) && i == batches[bi].Calls[0] {
			before = r.snap()
			r.pending = nil
		}
		if err := r.call(call); err != nil {
			return fmt.Errorf("call %d %s: %w", i, call.Fn, err)
		}
		if bi < len(batches) && i == batches[bi].Calls[1] {
			if err := r.batch(bi, &batches[bi], before); err != nil {
				return err
			}
			if r.div != nil {
				return nil
			}
			bi++
			continue
		}
		// Calls leave the producer index where libmlx5's did: outside a
		// batch at once; inside a batch libmlx5 posts, unless the batch
		// turns out to be a documented divergence.
		if want := call.Trace.CurPostAfter; want != nil && *want != r.q.CurPost() {
			err := fmt.Errorf("call %d %s: producer index %d, want %d", i, call.Fn, r.q.CurPost(), *want)
			switch {
			case bi >= len(batches) || i < batches[bi].Calls[0]:
				return err
			case batches[bi].Return == 0 && r.pending == nil:
				r.pending = err
			}
		}
	}
	if bi != len(batches) {
		return fmt.Errorf("the calls end %d batches early", len(batches)-bi)
	}
	return r.final()
}

// diverges decides a batch libmlx5 accepted and mlx5gen rejected: it is
// a documented divergence if the rule mlx5gen rejects it with says
// libmlx5 accepts what it forbids.
func (r *run) diverges(bi int, where string, ret error) (*Divergence, error) {
	var re *mlx.RuleError
	if !errors.As(ret, &re) {
		return nil, fmt.Errorf("%s: libmlx5 accepts it, mlx5gen fails with %v, not a rule error", where, ret)
	}
	rule := r.p.rule(re.Rule)
	if rule == nil || !rule.Libmlx5Accepts {
		return nil, fmt.Errorf("%s: libmlx5 accepts it; mlx5gen rejects it with rule %s, which does not document that libmlx5 accepts it (libmlx5_accepts): %v", where, re.Rule, ret)
	}
	return &Divergence{Rule: *rule, Batch: bi}, nil
}
