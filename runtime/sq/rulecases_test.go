package sq_test

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mlx5gen/mlx5gen/gen/spec"
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/ruletest"
)

// contexts puts an argument rule's example in a work request: for each C
// function with argument rules the writer implements, a QP and the calls
// around the function's call, whose arguments are ARGS.
var contexts = map[string]string{
	"ibv_wr_bind_mw": `
qp: {type: RC}
calls: [ibv_wr_start, {ibv_wr_bind_mw: ARGS}, ibv_wr_complete]`,
	"mlx5dv_wr_mkey_configure": `
qp: {type: RC, mkeys: {m: {flags: [MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT]}}}
calls: [ibv_wr_start, {ibv_qp_ex.wr_flags: [IBV_SEND_INLINE]}, {mlx5dv_wr_mkey_configure: ARGS}, ibv_wr_complete]`,
	"mlx5dv_wr_set_mkey_access_flags": `
qp: {type: RC, mkeys: {m: {flags: [MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT]}}}
calls: [ibv_wr_start, {ibv_qp_ex.wr_flags: [IBV_SEND_INLINE]}, {mlx5dv_wr_mkey_configure: {mkey: m, num_setters: 2}},
  {mlx5dv_wr_set_mkey_access_flags: ARGS}, {mlx5dv_wr_set_mkey_layout_list: {num_sges: 1}}, ibv_wr_complete]`,
	"mlx5dv_wr_mr_list": `
qp: {type: RC}
calls: [ibv_wr_start, {ibv_qp_ex.wr_flags: [IBV_SEND_INLINE]}, {mlx5dv_wr_mr_list: ARGS}, ibv_wr_complete]`,
	"mlx5dv_wr_mr_interleaved": `
qp: {type: RC}
calls: [ibv_wr_start, {ibv_qp_ex.wr_flags: [IBV_SEND_INLINE]}, {mlx5dv_wr_mr_interleaved: ARGS}, ibv_wr_complete]`,
	"mlx5dv_wr_set_mkey_sig_block": `
qp: {type: RC, mkeys: {s: {flags: [MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE]}}}
calls: [ibv_wr_start, {ibv_qp_ex.wr_flags: [IBV_SEND_INLINE]}, {mlx5dv_wr_mkey_configure: {mkey: s, num_setters: 3}},
  {mlx5dv_wr_set_mkey_access_flags: {access_flags: [IBV_ACCESS_LOCAL_WRITE]}},
  {mlx5dv_wr_set_mkey_layout_list: {sge: [{addr: 0x10000, length: 512, lkey: 0x100}]}},
  {mlx5dv_wr_set_mkey_sig_block: ARGS}, ibv_wr_complete]`,
	"mlx5dv_wr_set_mkey_crypto": `
qp: {type: RC, mkeys: {c: {flags: [MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO]}}}
calls: [ibv_wr_start, {ibv_qp_ex.wr_flags: [IBV_SEND_INLINE]}, {mlx5dv_wr_mkey_configure: {mkey: c, num_setters: 2}},
  {mlx5dv_wr_set_mkey_layout_list: {sge: [{addr: 0x10000, length: 512, lkey: 0x100}]}},
  {mlx5dv_wr_set_mkey_crypto: ARGS}, ibv_wr_complete]`,
	"mlx5dv_wr_set_dc_addr": `
qp: {type: DCI}
calls: [ibv_wr_start, {ibv_wr_rdma_write: {rkey: 0x200, remote_addr: 0x20000}},
  {ibv_wr_set_sge: {lkey: 0x100, addr: 0x10000, length: 64}}, {mlx5dv_wr_set_dc_addr: ARGS}, ibv_wr_complete]`,
	"mlx5dv_wr_set_dc_addr_stream": `
qp: {type: DCI, log_num_concurent: 2}
calls: [ibv_wr_start, {ibv_wr_rdma_write: {rkey: 0x200, remote_addr: 0x20000}},
  {ibv_wr_set_sge: {lkey: 0x100, addr: 0x10000, length: 64}}, {mlx5dv_wr_set_dc_addr_stream: ARGS}, ibv_wr_complete]`,
}

// structArgs passes a struct rule's example (EX) to a function: its
// arguments, keyed by "struct function".
var structArgs = map[string]string{
	"ibv_mw_bind_info ibv_wr_bind_mw":                      `{mw: {}, rkey: 0x200, bind_info: EX}`,
	"mlx5dv_mkey_conf_attr mlx5dv_wr_mkey_configure":       `{mkey: m, num_setters: 0, attr: EX}`,
	"mlx5dv_sig_block_attr mlx5dv_wr_set_mkey_sig_block":   `{attr: EX}`,
	"mlx5dv_sig_block_domain mlx5dv_wr_set_mkey_sig_block": `{attr: {mem: null, wire: EX, check_mask: 0xff}}`,
	"mlx5dv_sig_crc mlx5dv_wr_set_mkey_sig_block": `{attr: {mem: null, check_mask: 0xff,
  wire: {sig_type: MLX5DV_SIG_TYPE_CRC, sig.crc: EX, block_size: MLX5DV_BLOCK_SIZE_512}}}`,
	"mlx5dv_sig_t10dif mlx5dv_wr_set_mkey_sig_block": `{attr: {mem: null, check_mask: 0xff,
  wire: {sig_type: MLX5DV_SIG_TYPE_T10DIF, sig.dif: EX, block_size: MLX5DV_BLOCK_SIZE_512}}}`,
	"mlx5dv_crypto_attr mlx5dv_wr_set_mkey_crypto": `{attr: EX}`,
}

// unexercised are the entry points no rule example runs through, with the
// reason; every other entry point must run in a bad example.
var unexercised = map[string]string{
	"LocalInv": "no example builds a local invalidate, and no builder has its setter tables",
	"SetWRID":  "no rule constrains wr_id",
	"RDMAReadSGE": "no example has an RDMA read and ibv_wr_set_sge that break a rule (no write example has a read variant: the read takes no inline data); " +
		"TestOneCallMatchesCalls compares its rejections with RDMARead + SetSGE",
	"PostRDMAReadSGE": "as RDMAReadSGE; TestPostMatchesCalls compares its rejections with Start, RDMARead, SetSGE and Complete",
}

// ruleCase is an example of a rule as a QP and calls.
type ruleCase struct {
	name      string // the function an argument rule's example is passed to; "" for a chain rule
	qp        *yaml.Node
	good, bad []step
}

// parseYAML parses text, replacing the scalar placeholder with sub.
func parseYAML(t *testing.T, text, placeholder string, sub *yaml.Node) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("%v in %s", err, text)
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for i, c := range n.Content {
			if c.Kind == yaml.ScalarNode && c.Value == placeholder && c.Tag == "!!str" {
				n.Content[i] = sub
				continue
			}
			walk(c)
		}
	}
	walk(&doc)
	return doc.Content[0]
}

// casesOf returns a rule's examples as QPs and calls: a chain rule's as
// they are, an argument rule's in the context of each function it names
// that the writer implements.
func casesOf(t *testing.T, v ruletest.Values, r *spec.Rule) []ruleCase {
	c := r.Check
	if c.Struct == "" && c.Func == "" {
		qp := &r.Tests.QP
		return []ruleCase{{qp: qp, good: parseCalls(v, &r.Tests.Good), bad: parseCalls(v, &r.Tests.Bad)}}
	}
	var cases []ruleCase
	for _, fn := range r.Funcs {
		if len(implementing(fn)) == 0 {
			continue // a verb, or a builder of a QP type the writer does not drive
		}
		ctx, ok := contexts[fn]
		if !ok {
			t.Errorf("rule %s: no context to call %s with its example (contexts in rulecases_test.go)", r.ID, fn)
			continue
		}
		args := func(ex *yaml.Node) *yaml.Node {
			if c.Func != "" {
				return ex
			}
			wrap, ok := structArgs[c.Struct+" "+fn]
			if !ok {
				t.Errorf("rule %s: no way to pass struct %s to %s (structArgs in rulecases_test.go)", r.ID, c.Struct, fn)
				return nil
			}
			return parseYAML(t, wrap, "EX", ex)
		}
		good, bad := args(&r.Tests.Good), args(&r.Tests.Bad)
		if good == nil || bad == nil {
			continue
		}
		g, b := parseYAML(t, ctx, "ARGS", good), parseYAML(t, ctx, "ARGS", bad)
		gm, bm := v.Mapping(g), v.Mapping(b)
		cases = append(cases, ruleCase{name: fn, qp: gm["qp"], good: parseCalls(v, gm["calls"]), bad: parseCalls(v, bm["calls"])})
	}
	return cases
}

// TestRulesEveryEntryPoint runs every enforced rule's good and bad
// examples (spec/api) through every entry point that can express them:
// each call through its method, RDMA write + SGE pairs through
// RDMAWriteBurst, mkey configurations through NewMkeyTemplate +
// ConfigureMkey, a builder and its SGE through the one-call forms; an argument rule's examples in a work request of each
// function it names. The good example must be accepted; the bad one
// rejected with a *mlx5dv.RuleError of that rule and its errno, by a call
// that stored nothing to the ring, the doorbell record or the BlueFlame
// register.
func TestRulesEveryEntryPoint(t *testing.T) {
	res := ruletest.Load(t)
	cov := coverage{rejected: map[string]int{}, accepted: map[string]int{}, inBad: map[string]int{}}
	for _, r := range ruletest.Enforced(res) {
		t.Run(r.ID, func(t *testing.T) {
			v := ruletest.Values{T: t, Res: res}
			for _, c := range casesOf(t, v, r) {
				for _, form := range forms {
					runForm(t, v, r, c, form, &cov)
				}
				runVariants(t, v, r, c, &cov)
			}
		})
	}
	cov.check(t)
}

// runForm runs a case's examples through the entry points of one form.
func runForm(t *testing.T, v ruletest.Values, r *spec.Rule, c ruleCase, form string, cov *coverage) {
	name := form
	if c.name != "" {
		name = c.name + "/" + form
	}
	for _, which := range []string{"good", "bad"} {
		steps := c.good
		if which == "bad" {
			steps = c.bad
		}
		if steps, ok := rewrite(v, form, steps); ok {
			runSteps(t, v, r, c.qp, name+"/"+which, form, steps, cov)
		}
	}
}

// runVariants runs the variants of a case's examples through each call's
// method, and through the one-call forms: the same outcome through other
// builders and setters.
func runVariants(t *testing.T, v ruletest.Values, r *spec.Rule, c ruleCase, cov *coverage) {
	for _, which := range []string{"good", "bad"} {
		steps := c.good
		if which == "bad" {
			steps = c.bad
		}
		for _, vr := range variants(v, c.qp, steps) {
			runSteps(t, v, r, c.qp, vr.from+"~"+vr.to+"/"+which, formCalls, vr.steps, cov)
			if one, ok := asOneCall(vr.steps); ok {
				runSteps(t, v, r, c.qp, vr.from+"~"+vr.to+"/"+formOneCall+"/"+which, formOneCall, one, cov)
			}
		}
	}
}

// runSteps runs one example (which is in name's last element).
func runSteps(t *testing.T, v ruletest.Values, r *spec.Rule, qpNode *yaml.Node, name, form string, steps []step, cov *coverage) {
	which := name[strings.LastIndexByte(name, '/')+1:]
	t.Run(name, func(t *testing.T) {
		v := ruletest.Values{T: t, Res: v.Res}
		run, err := newRunner(t, v, qpNode)
		if err != nil {
			// The writer refuses the QP: no call can break the rule.
			cov.refusedQP++
			return
		}
		err = run.run(steps)
		if errors.Is(err, errNoMethod) && which == "bad" {
			// The writer cannot make the call that breaks the rule.
			cov.noMethod++
			return
		}
		if which == "good" {
			if err != nil {
				t.Fatalf("the good example fails (through %s): %v", run.last, err)
			}
			cov.accepted[form]++
			return
		}
		checkBad(t, r, err, run.last)
		cov.rejected[run.last]++
		for name := range run.used {
			cov.inBad[name]++
		}
	})
}

// checkBad checks a bad example's error.
func checkBad(t *testing.T, r *spec.Rule, err error, via string) {
	var re *mlx.RuleError
	if !errors.As(err, &re) {
		t.Fatalf("the bad example gives %v (through %s), want a *RuleError", err, via)
	}
	if re.Rule != r.ID {
		t.Fatalf("the bad example breaks rule %s (%v) through %s, not %s", re.Rule, err, via, r.ID)
	}
	if want := ruletest.Errno(r.Errno); !errors.Is(err, want) {
		t.Fatalf("errno %v, want %v", re.Errno, want)
	}
}

// coverage counts what the examples exercised.
type coverage struct {
	rejected  map[string]int // entry point → bad examples it rejected
	inBad     map[string]int // entry point → bad examples that ran through it
	accepted  map[string]int // form → good examples accepted
	refusedQP int
	noMethod  int // bad examples calling a builder the writer's QP types lack
}

// check fails when a form or an entry point of an argument rule's
// function rejected nothing: then its rules are not tested through it.
func (c *coverage) check(t *testing.T) {
	for _, form := range forms {
		if c.accepted[form] == 0 {
			t.Errorf("no good example ran through the %s form", form)
		}
	}
	var never []string
	for name, e := range entryPoints {
		why, listed := unexercised[name]
		switch {
		case c.inBad[name] == 0 && !listed:
			t.Errorf("no bad example runs through %s (%s): add examples to spec/, or list it in unexercised", name, strings.Join(e.funcs, ", "))
		case c.inBad[name] > 0 && listed:
			t.Errorf("%s runs in bad examples now: remove it from unexercised", name)
		case listed:
			never = append(never, name+": "+why)
		}
	}
	sort.Strings(never)
	for _, must := range []string{"RDMAWriteBurst", "ConfigureMkey", "NewMkeyTemplate", "RDMAWriteSGE", "PostRDMAWriteSGE", "PostConfigureMkey"} {
		if c.rejected[must] == 0 {
			t.Errorf("no bad example was rejected by %s", must)
		}
	}
	t.Logf("rejections by entry point: %v; QPs the writer refuses: %d; calls it has no method for: %d", c.rejected, c.refusedQP, c.noMethod)
	t.Logf("entry points no bad example runs through: %v", strings.Join(never, "; "))
}
