package replay

import (
	"fmt"
	"slices"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/internal/vectors"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// Divergence is a documented difference from libmlx5 that decided a
// case. It comes from a rule of the spec, never from the case's id:
//
//   - a rule with libmlx5_accepts: libmlx5 accepted a batch that breaks
//     it; mlx5gen rejected the batch with that rule and posted nothing,
//     and the replay stopped there (later batches build on what libmlx5
//     posted);
//   - a rule that follows a newer rdma-core release: the case calls one of
//     its functions and was compared with result_at_newest_commit;
//   - a libmlx5_accepts rule about how the QP was created (kind qp): the
//     case was replayed again on a QP created as the rule asks, where it
//     must match libmlx5 byte for byte (QP says how).
type Divergence struct {
	Rule   mlx5rules.RuleInfo
	Batch  int    // the batch rejected with Rule, or -1
	Newest bool   // compared with result_at_newest_commit
	QP     string // the QP of the second replay, if any
}

func (d Divergence) String() string {
	switch {
	case d.Newest:
		return fmt.Sprintf("rule %s (we follow rdma-core %s): compared with result_at_newest_commit. %s", d.Rule.ID, d.Rule.Follows, d.Rule.Libmlx5)
	case d.QP != "":
		return fmt.Sprintf("rule %s: batch %d rejected; on %s the case matches libmlx5. %s", d.Rule.ID, d.Batch, d.QP, d.Rule.Libmlx5)
	}
	return fmt.Sprintf("rule %s: batch %d rejected, libmlx5 accepts it. %s", d.Rule.ID, d.Batch, d.Rule.Libmlx5)
}

// rule finds a rule by id.
func (p *Replayer) rule(id string) *mlx5rules.RuleInfo {
	for i := range p.rules() {
		if p.rules()[i].ID == id {
			return &p.rules()[i]
		}
	}
	return nil
}

func (p *Replayer) rules() []mlx5rules.RuleInfo {
	if p.Rules != nil {
		return p.Rules
	}
	return mlx5rules.Rules
}

// newest returns the rule by which the case is compared with its
// result_at_newest_commit: one that follows a release no later than the
// one that result was recorded with, for a function the case calls.
func (p *Replayer) newest(c *vectors.Case) *mlx5rules.RuleInfo {
	if c.AtNewest == nil || c.NewestRelease == "" {
		return nil
	}
	for i := range p.rules() {
		r := &p.rules()[i]
		if r.Follows == "" || !vectors.ReleaseAtMost(r.Follows, c.NewestRelease) {
			continue
		}
		for _, call := range c.Calls {
			if slices.Contains(r.Funcs, call.Fn) {
				return r
			}
		}
	}
	return nil
}

// qpFix is how to create a QP that keeps a rule about QP creation.
type qpFix struct {
	what string
	fix  func(*sq.QP)
}

// qpFixes are the QP-creation checks a second replay can satisfy: the
// QP is created with what the rule asks for, so the calls libmlx5
// accepted are legal there.
var qpFixes = map[mlx5rules.ChainCheck]qpFix{
	// A stream id is 16 bits: 2^16 streams hold every one.
	mlx5rules.ChainDCStreams:  {"a DCI created with 2^16 streams", func(qp *sq.QP) { qp.Streams, qp.LogNumConcurent = true, 16 }},
	mlx5rules.ChainDCStreamID: {"a DCI created with 2^16 streams", func(qp *sq.QP) { qp.Streams, qp.LogNumConcurent = true, 16 }},
	mlx5rules.ChainSendOp: {"a QP created with every send-op bit", func(qp *sq.QP) {
		qp.SendOps, qp.MlxSendOps = ^mlx.IBVQPCreateSendOpsFlags(0), ^mlx.QPCreateSendOpsFlags(0)
	}},
}
