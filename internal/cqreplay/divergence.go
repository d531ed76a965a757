package cqreplay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/internal/vectors"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Rules is the spec's rule table the replay takes divergences from (tests
// replace it).
var Rules = mlx5rules.Rules

// followed says which leaf paths of a case a rule that follows a later
// rdma-core release may change: a case's differences_at entry at such a
// path, recorded with that release or a later one, is the expected value
// instead of the 44.0 one. The rules themselves (why, since when) are in
// the spec (spec/api/ibv_poll_cq.yaml); this only maps them to paths.
var followed = map[string][]string{
	// Receive wr_ids by the CQE's WQE counter (rdma-core 55.0).
	"cq.recv_wrid_by_counter": {`calls[*].wc[*].wr_id`, `calls[*].cq_ex.wr_id`},
	// Signature error type and domain masked to 3 bits (54.0).
	"cq.sigerr_type_domain_mask": {
		`calls[*].after.mkeys[*].err_info.domain`, `calls[*].after.mkeys[*].err_info.sig_type`, `calls[*].after.mkeys[*].err_exists`,
		`calls[*].returned.*`, `calls[*].err_info.*`,
	},
	// Requester inline scatter from the 64-byte CQE (64.0).
	"cq.req_scatter_source": {`calls[*].after.scatter_buffers[*].hex`},
}

// pathRE turns a path pattern into a regular expression: [*] any index,
// .* any rest.
func pathRE(p string) *regexp.Regexp {
	q := regexp.QuoteMeta(p)
	q = strings.ReplaceAll(q, `\[\*\]`, `\[[0-9]+\]`)
	q = strings.ReplaceAll(q, `\.\*`, `(\..+)?`)
	return regexp.MustCompile("^" + q + "$")
}

var callIndexRE = regexp.MustCompile(`^calls\[([0-9]+)\]`)

// ruleFor finds the rule that follows a release no later than rel and
// may change path, in a call to one of its functions.
func (c *Case) ruleFor(path, rel string) *mlx5rules.RuleInfo {
	m := callIndexRE.FindStringSubmatch(path)
	if m == nil {
		return nil
	}
	i, _ := strconv.Atoi(m[1])
	if i >= len(c.Calls) {
		return nil
	}
	fn := c.Calls[i].Fn
	for k := range Rules {
		r := &Rules[k]
		pats := followed[r.ID]
		if r.Follows == "" || len(pats) == 0 || !vectors.ReleaseAtMost(r.Follows, rel) || !slices.Contains(r.Funcs, fn) {
			continue
		}
		for _, p := range pats {
			if pathRE(p).MatchString(path) {
				return r
			}
		}
	}
	return nil
}

// following returns the case with every difference a followed rule
// explains set to the later release's value, and those rules. A
// difference no rule explains keeps the 44.0 value.
func (c *Case) following() (*Case, []string, error) {
	if len(c.DifferencesAt) == 0 {
		return c, nil, nil
	}
	tree := c.tree
	var used []string
	for _, label := range sortedKeys(c.DifferencesAt) {
		rel := c.file.release(label)
		if rel == "" {
			return nil, nil, fmt.Errorf("differences_at.%s: no rdma-core release for the label in cross_check", label)
		}
		for _, d := range c.DifferencesAt[label] {
			var path string
			if err := json.Unmarshal(d["path"], &path); err != nil {
				return nil, nil, fmt.Errorf("differences_at.%s: path: %w", label, err)
			}
			r := c.ruleFor(path, rel)
			if r == nil {
				continue
			}
			var v any
			dec := json.NewDecoder(bytes.NewReader(d[label]))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil {
				return nil, nil, fmt.Errorf("differences_at.%s %s: %w", label, path, err)
			}
			if err := setPath(tree, path, v); err != nil {
				return nil, nil, fmt.Errorf("differences_at.%s: %w", label, err)
			}
			s := fmt.Sprintf("rule %s (we follow rdma-core %s): %s compared with %s. %s", r.ID, r.Follows, path, label, r.Libmlx5)
			if !slices.Contains(used, s) {
				used = append(used, s)
			}
		}
	}
	raw, err := json.Marshal(tree)
	if err != nil {
		return nil, nil, err
	}
	nc, err := decodeCase(c.file, raw)
	if err == nil {
		err = nc.Check()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("following a later release: %w", err)
	}
	return nc, used, nil
}

var stepRE = regexp.MustCompile(`^([a-z_0-9]+)(\[([0-9]+)\])?$`)

// setPath sets the leaf at a path like calls[0].wc[1].wr_id in a decoded
// JSON tree.
func setPath(tree any, path string, v any) error {
	cur := tree
	steps := strings.Split(path, ".")
	for i, s := range steps {
		m := stepRE.FindStringSubmatch(s)
		if m == nil {
			return fmt.Errorf("path %s: bad step %q", path, s)
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return fmt.Errorf("path %s: %s is not in an object", path, s)
		}
		last := i == len(steps)-1
		if m[2] == "" {
			if last {
				obj[m[1]] = v
				return nil
			}
			cur = obj[m[1]]
			continue
		}
		list, ok := obj[m[1]].([]any)
		n, _ := strconv.Atoi(m[3])
		if !ok || n >= len(list) {
			return fmt.Errorf("path %s: no element %s", path, s)
		}
		if last {
			list[n] = v
			return nil
		}
		cur = list[n]
	}
	return fmt.Errorf("path %s: empty", path)
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
