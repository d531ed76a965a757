package sq_test

import (
	"slices"

	"github.com/mlx5gen/mlx5gen/runtime/internal/ruletest"
)

// rewrite expresses an example's calls through the entry points of form:
// as they are (formCalls), with each run of RDMA write + SGE pairs as one
// burst, or with each mkey configuration a template can hold as one
// template step. ok is false when the example has nothing the form can
// express.
func rewrite(v ruletest.Values, form string, steps []step) (out []step, ok bool) {
	switch form {
	case formCalls:
		return steps, true
	case formBurst:
		return asBurst(steps)
	case formTemplate:
		return asTemplate(v, steps)
	case formOneCall:
		return asOneCall(steps)
	case formPost:
		return asPost(steps)
	case formPostTemplate:
		return asPostTemplate(v, steps)
	}
	return nil, false
}

func asBurst(steps []step) ([]step, bool) {
	var out []step
	ok := false
	for i := 0; i < len(steps); {
		j := i
		for j+1 < len(steps) && steps[j].name == "ibv_wr_rdma_write" && steps[j+1].name == "ibv_wr_set_sge" {
			j += 2
		}
		if j == i {
			out = append(out, steps[i])
			i++
			continue
		}
		out = append(out, step{name: "@burst", line: steps[i].line, parts: steps[i:j]})
		ok, i = true, j
	}
	return out, ok
}

// oneCallOf maps the builders with a one-call form to its method.
var oneCallOf = map[string]string{"ibv_wr_rdma_write": "RDMAWriteSGE", "ibv_wr_rdma_read": "RDMAReadSGE", "ibv_wr_send": "SendSGE"}

// asOneCall makes each builder with a one-call form that ibv_wr_set_sge
// follows one step.
func asOneCall(steps []step) ([]step, bool) {
	var out []step
	ok := false
	for i := 0; i < len(steps); i++ {
		if oneCallOf[steps[i].name] != "" && i+1 < len(steps) && steps[i+1].name == "ibv_wr_set_sge" {
			out = append(out, step{name: "@onecall", line: steps[i].line, parts: steps[i : i+2]})
			ok, i = true, i+1
			continue
		}
		out = append(out, steps[i])
	}
	return out, ok
}

// postOf maps the builders with a Post form to its method: a batch of
// start, the builder, ibv_wr_set_sge and complete in one call.
var postOf = map[string]string{"ibv_wr_rdma_write": "PostRDMAWriteSGE", "ibv_wr_rdma_read": "PostRDMAReadSGE", "ibv_wr_send": "PostSendSGE"}

// asPost makes each batch of one builder with a Post form and its SGE
// one step.
func asPost(steps []step) ([]step, bool) {
	var out []step
	ok := false
	for i := 0; i < len(steps); i++ {
		if i+4 <= len(steps) && postOf[steps[i+1].name] != "" &&
			slices.Equal(names(steps[i:i+4]), []string{"ibv_wr_start", steps[i+1].name, "ibv_wr_set_sge", "ibv_wr_complete"}) {
			out = append(out, step{name: "@post", line: steps[i].line, parts: steps[i : i+4]})
			ok, i = true, i+3
			continue
		}
		out = append(out, steps[i])
	}
	return out, ok
}

// names lists the steps' C function names.
func names(steps []step) []string {
	n := make([]string, len(steps))
	for i, s := range steps {
		n[i] = s.name
	}
	return n
}

// The setters a template holds: access flags and a list layout, and a
// signature or not.
var templateSetters = map[string]bool{
	"mlx5dv_wr_set_mkey_access_flags": true, "mlx5dv_wr_set_mkey_layout_list": true, "mlx5dv_wr_set_mkey_sig_block": true,
}

func asTemplate(v ruletest.Values, steps []step) ([]step, bool) {
	var out []step
	ok := false
	for i := 0; i < len(steps); i++ {
		s := steps[i]
		if s.name != "mlx5dv_wr_mkey_configure" {
			out = append(out, s)
			continue
		}
		if ruletest.IsNull(s.args["mkey"]) || ruletest.IsNull(s.args["attr"]) {
			// ConfigureMkey takes the configuration's attributes as the
			// template: a NULL attr is a nil template.
			out = append(out, step{name: "@template", line: s.line, parts: []step{s}})
			ok = true
			continue
		}
		if n := templateLength(v, steps[i:]); n > 0 {
			out = append(out, step{name: "@template", line: s.line, parts: steps[i : i+n]})
			ok, i = true, i+n-1
			continue
		}
		out = append(out, s)
	}
	return out, ok
}

// templateLength returns how many steps, starting at an
// mlx5dv_wr_mkey_configure, form a configuration a template can hold, or
// 0: no attributes, and the setters announced are given, each once: a list
// layout, and access flags (0 when not given: the same rules hold) and a
// signature (not NULL) or not.
func templateLength(v ruletest.Values, steps []step) int {
	conf := steps[0]
	if a := conf.args["attr"]; a != nil {
		for _, k := range []string{"conf_flags", "comp_mask"} {
			if f := v.Mapping(a)[k]; f != nil && v.Value(f) != 0 {
				return 0
			}
		}
	}
	n := 0
	if a := conf.args["num_setters"]; a != nil {
		n = int(v.Value(a))
	}
	if n < 1 || n > 3 || len(steps) < n+1 {
		return 0
	}
	seen := map[string]bool{}
	for _, s := range steps[1 : n+1] {
		if !templateSetters[s.name] || seen[s.name] {
			return 0
		}
		if s.name == "mlx5dv_wr_set_mkey_sig_block" && ruletest.IsNull(s.args["attr"]) {
			return 0
		}
		seen[s.name] = true
	}
	if !seen["mlx5dv_wr_set_mkey_layout_list"] {
		return 0
	}
	return n + 1
}

// asPostTemplate makes each batch of one configuration a template holds
// (start, the configuration, complete) one step. The wr_id and wr_flags
// the batch sets before the configuration are set before the step (Start
// reads neither).
func asPostTemplate(v ruletest.Values, steps []step) ([]step, bool) {
	steps, ok := asTemplate(v, steps)
	if !ok {
		return nil, false
	}
	var out []step
	ok = false
	for i := 0; i < len(steps); i++ {
		j := i + 1
		for j < len(steps) && (steps[j].name == "ibv_qp_ex.wr_flags" || steps[j].name == "ibv_qp_ex.wr_id") {
			j++
		}
		if steps[i].name == "ibv_wr_start" && j+2 <= len(steps) && steps[j].name == "@template" && steps[j+1].name == "ibv_wr_complete" {
			out = append(out, steps[i+1:j]...)
			out = append(out, step{name: "@posttemplate", line: steps[i].line, parts: []step{steps[i], steps[j], steps[j+1]}})
			ok, i = true, j+1
			continue
		}
		out = append(out, steps[i])
	}
	return out, ok
}
