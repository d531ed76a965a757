package sq_test

import (
	"slices"

	"go.yaml.in/yaml/v3"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/runtime/internal/ruletest"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// The builders whose checks are all the state machine's tables (which QP
// types and send ops offer them, which setters may follow, what they
// need), so that two with the same table entries on a QP are checked
// alike, and an example of one is an example of the other.
var tableBuilders = []string{
	"ibv_wr_send", "ibv_wr_send_imm", "ibv_wr_send_inv", "ibv_wr_rdma_write", "ibv_wr_rdma_write_imm",
	"ibv_wr_rdma_read", "ibv_wr_atomic_cmp_swp", "ibv_wr_atomic_fetch_add",
}

// A variant is an example with every call of one function replaced by an
// equivalent one: a builder the checks treat alike on the example's QP,
// or a data setter by its list form of one element (ibv_wr_post(3):
// ibv_wr_set_sge is ibv_wr_set_sge_list with one element, and the same
// for inline data).
type variant struct {
	from, to string
	steps    []step
}

// variants returns the example's variants; each reaches the rule through
// other entry points with the same outcome.
func variants(v ruletest.Values, qpNode *yaml.Node, steps []step) []variant {
	qp, _ := v.QP(qpNode)
	var out []variant
	for _, from := range tableBuilders {
		if !calls(steps, from) {
			continue
		}
		for _, to := range tableBuilders {
			if to != from && sameTables(qp, fn(from), fn(to)) {
				out = append(out, variant{from, to, replaced(steps, from, to, nil)})
			}
		}
	}
	lists := map[string][2]string{ // the list form, and the list argument
		"ibv_wr_set_sge":         {"ibv_wr_set_sge_list", "sg_list"},
		"ibv_wr_set_inline_data": {"ibv_wr_set_inline_data_list", "buf_list"},
	}
	for from, l := range lists {
		if calls(steps, from) {
			out = append(out, variant{from, l[0], replaced(steps, from, l[0], func(args map[string]*yaml.Node) map[string]*yaml.Node {
				return oneElementList(l[1], args)
			})})
		}
	}
	return out
}

func fn(name string) mlx.Func {
	f, _ := ruletest.Fn(name)
	return f
}

func calls(steps []step, name string) bool {
	return slices.ContainsFunc(steps, func(s step) bool { return s.name == name })
}

// replaced returns steps with every call of from made a call of to, its
// arguments converted by conv (nil: kept).
func replaced(steps []step, from, to string, conv func(map[string]*yaml.Node) map[string]*yaml.Node) []step {
	out := slices.Clone(steps)
	for i := range out {
		if out[i].name == from {
			out[i].name = to
			if conv != nil {
				out[i].args = conv(out[i].args)
			}
		}
	}
	return out
}

// oneElementList turns a setter's arguments into its list form's: a list
// of one element holding them.
func oneElementList(list string, args map[string]*yaml.Node) map[string]*yaml.Node {
	elem := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, k := range []string{"addr", "length", "lkey"} {
		if a := args[k]; a != nil {
			elem.Content = append(elem.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, a)
		}
	}
	return map[string]*yaml.Node{list: {Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{elem}}}
}

// sameTables reports whether the state machine's tables treat builders a
// and b alike on qp: offered or not alike, the same setters may follow,
// the same ones are required, the same wr_flags needed.
func sameTables(qp *sq.QP, a, b mlx.Func) bool {
	fa, fb := &mlx5rules.Funcs[a], &mlx5rules.Funcs[b]
	if offered(qp, fa) != offered(qp, fb) || fa.QPTypes&qp.Type != fb.QPTypes&qp.Type ||
		fa.Takes != fb.Takes || fa.Requires != fb.Requires || fa.WRFlags != fb.WRFlags {
		return false
	}
	for i := range mlx5rules.Funcs {
		if of := mlx5rules.Funcs[i].Of; len(of) > 0 && slices.Contains(of, a) != slices.Contains(of, b) {
			return false
		}
	}
	return true
}

func offered(qp *sq.QP, f *mlx5rules.FuncInfo) bool {
	return f.QPTypes&qp.Type != 0 && (f.SendOp == 0 || uint64(qp.SendOps)&f.SendOp != 0) &&
		(f.MlxSendOp == 0 || uint64(qp.MlxSendOps)&f.MlxSendOp != 0)
}
