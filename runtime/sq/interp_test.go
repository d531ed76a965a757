package sq_test

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/ruletest"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// step is one call of a rule example: a C function (or an ibv_qp_ex
// attribute) and its arguments; a burst or template step stands for the
// calls in parts.
type step struct {
	name  string
	args  map[string]*yaml.Node
	line  int
	parts []step
}

// parseCalls reads an example's list of calls.
func parseCalls(v ruletest.Values, list *yaml.Node) []step {
	if list.Kind != yaml.SequenceNode {
		v.T.Fatalf("line %d: a chain example is a list of calls", list.Line)
	}
	var steps []step
	for _, n := range list.Content {
		s := step{name: n.Value, args: map[string]*yaml.Node{}, line: n.Line}
		if n.Kind == yaml.MappingNode {
			s.name = n.Content[0].Value
			if a := n.Content[1]; a.Kind == yaml.MappingNode {
				s.args = v.Mapping(a)
			} else {
				s.args["value"] = a
			}
		}
		steps = append(steps, s)
	}
	return steps
}

// runner runs steps on a writer through the entry points of one form.
type runner struct {
	t     *testing.T
	v     ruletest.Values
	q     *sq.SQ
	mem   *qmem.Memory
	mkeys map[string]*sq.Mkey
	last  string          // the entry point of the last step run
	used  map[string]bool // the entry points the steps ran through
}

// newRunner makes a writer for an example's QP; it fails (with sq.New's
// error) for QP types the writer does not drive.
func newRunner(t *testing.T, v ruletest.Values, qpNode *yaml.Node) (*runner, error) {
	qp, mkeys := v.QP(qpNode)
	mem, err := qmem.Plain(64, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	q, err := sq.New(sq.Config{Mem: mem, QPN: qpn, QP: *qp, BF: sq.BlueFlame{UUARN: 1, Size: 256}})
	if err != nil {
		return nil, err
	}
	return &runner{t: t, v: v, q: q, mem: mem, mkeys: mkeys, used: map[string]bool{}}, nil
}

// run runs the steps and returns the first error; the call that returns
// it must not have stored anything to the device.
func (r *runner) run(steps []step) error {
	for _, s := range steps {
		before := snapshot(r.mem)
		err := r.call(s)
		r.used[r.last] = true
		if err != nil {
			if what := before.changed(r.mem); what != "" {
				r.t.Fatalf("line %d: %s (through %s) was rejected (%v) but %s changed", s.line, s.name, r.last, err, what)
			}
			return err
		}
	}
	return nil // a call that breaks a rule returns the error itself
}

// arg reads a number argument, def when absent.
func (r *runner) arg(s step, k string, def uint64) uint64 {
	if n := s.args[k]; n != nil {
		return r.v.Value(n)
	}
	return def
}

// list returns the elements of a list argument, or nil and the count
// given by the count argument (or by a number in place of the list).
func (r *runner) list(s step, list, num string) (int, []*yaml.Node) {
	if n := s.args[list]; n != nil {
		if n.Kind == yaml.SequenceNode {
			return len(n.Content), n.Content
		}
		return int(r.v.Value(n)), nil
	}
	return int(r.arg(s, num, 0)), nil
}

// mkey resolves an mkey argument: a name of the QP's mkeys, a mapping
// (an mkey of its own), or null.
func (r *runner) mkey(s step) *sq.Mkey {
	n := s.args["mkey"]
	switch {
	case n == nil:
		r.t.Fatalf("line %d: %s needs mkey", s.line, s.name)
	case ruletest.IsNull(n):
		return nil
	case n.Kind == yaml.MappingNode:
		return r.v.Mkey(n)
	case r.mkeys[n.Value] == nil:
		r.t.Fatalf("line %d: no mkey %s in qp.mkeys", s.line, n.Value)
	}
	return r.mkeys[n.Value]
}

// lkey resolves an lkey: a number, or <mkey>.lkey.
func (r *runner) lkey(s step, k string) uint32 {
	n := s.args[k]
	if n != nil && strings.HasSuffix(n.Value, ".lkey") {
		if m := r.mkeys[strings.TrimSuffix(n.Value, ".lkey")]; m != nil {
			return m.LKey
		}
	}
	return uint32(r.arg(s, k, 0x100))
}

// fill makes a mirror of type T from a mapping argument; nil for null.
func fill[T any](r *runner, s step, k string) *T {
	n := s.args[k]
	if n == nil {
		r.t.Fatalf("line %d: %s needs %s", s.line, s.name, k)
	}
	if ruletest.IsNull(n) {
		return nil
	}
	p := new(T)
	r.v.Fill(reflect.ValueOf(p).Elem(), k, n)
	return p
}

// sges reads a list layout or SGE list (each entry 4096 bytes when only
// counted).
func (r *runner) sges(s step, list, num string, def uint32) []mlx.SGE {
	k, nodes := r.list(s, list, num)
	out := make([]mlx.SGE, k)
	for i := range out {
		if nodes == nil {
			out[i] = mlx.SGE{Addr: 0x10000, Length: def, LKey: 0x100}
			continue
		}
		r.v.Fill(reflect.ValueOf(&out[i]).Elem(), "sge", nodes[i])
	}
	return out
}

// interleaved reads an interleaved layout (each entry 512 bytes when
// only counted).
func (r *runner) interleaved(s step) []mlx.MRInterleaved {
	k, nodes := r.list(s, "data", "num_interleaved")
	out := make([]mlx.MRInterleaved, k)
	for i := range out {
		if nodes == nil {
			out[i] = mlx.MRInterleaved{Addr: 0x10000, BytesCount: 512, LKey: 0x100}
			continue
		}
		r.v.Fill(reflect.ValueOf(&out[i]).Elem(), "data", nodes[i])
	}
	return out
}

// bindInfo reads ibv_wr_bind_mw's bind_info into the writer's form.
func (r *runner) bindInfo(s step) *sq.MWBindInfo {
	c := fill[mlx.MWBindInfo](r, s, "bind_info")
	if c == nil {
		return nil
	}
	return &sq.MWBindInfo{LKey: 0x100, Addr: c.Addr, Length: c.Length, AccessFlags: c.MWAccessFlags}
}
