package spec

import (
	"strings"
	"testing"
)

// TestDivergenceKeys: libmlx5_accepts and follows, which mlx5gen replay
// decides vectors by, need what makes them meaningful.
func TestDivergenceKeys(t *testing.T) {
	fn := "functions:\n  - {name: f, kind: helper, returns: void}\n"
	cases := []struct{ name, rule, want string }{
		{"accepts on info", "{id: a.b, section: S, says: x, kind: info, libmlx5: y, libmlx5_accepts: true}",
			"rule a.b: libmlx5_accepts is for an enforced rule"},
		{"accepts without libmlx5", "{id: a.b, section: S, says: x, kind: info, funcs: [f], libmlx5_accepts: true}",
			"rule a.b: libmlx5_accepts is for an enforced rule"},
		{"follows not a release", "{id: a.b, section: S, says: x, kind: info, libmlx5: y, funcs: [f], follows: sixty}",
			"rule a.b: follows takes a release"},
		{"follows without funcs", "{id: a.b, section: S, says: x, kind: info, libmlx5: y, follows: \"61.0\"}",
			"rule a.b: follows takes a release"},
		{"follows without libmlx5", "{id: a.b, section: S, says: x, kind: info, funcs: [f], follows: \"61.0\"}",
			"rule a.b: follows takes a release"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := load(t, map[string]string{"a.yaml": "man: a(3)\n" + fn + "rules:\n  - " + c.rule + "\n"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant an error containing %q", err, c.want)
			}
		})
	}
	ok := "{id: a.b, section: S, says: x, kind: info, libmlx5: y, funcs: [f], follows: \"61.0\"}"
	if err := load(t, map[string]string{"a.yaml": "man: a(3)\n" + fn + "rules:\n  - " + ok + "\n"}); err != nil {
		t.Errorf("a rule that follows 61.0: %v", err)
	}
}

// TestDeviceAPIKey: device_api is one non-empty line, on an argument rule.
func TestDeviceAPIKey(t *testing.T) {
	fn := "functions:\n  - {name: f, kind: helper, returns: errno, params: [{name: x, type: int}]}\n"
	arg := "{id: a.b, section: S, says: x, kind: argument, errno: EINVAL, funcs: [f], check: {func: f, param: x, max: 4}, tests: {good: {x: 1}, bad: {x: 5}}"
	cases := []struct{ name, rule, want string }{
		{"empty", arg + ", device_api: \" \"}", "rule a.b: device_api must be one non-empty line"},
		{"two lines", arg + ", device_api: \"a\\nb\"}", "rule a.b: device_api must be one non-empty line"},
		{"not argument", "{id: a.b, section: S, says: x, kind: info, device_api: y}", "rule a.b: device_api says why the device API cannot break an argument rule; this rule is kind info"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := load(t, map[string]string{"a.yaml": "man: a(3)\n" + fn + "rules:\n  - " + c.rule + "\n"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant an error containing %q", err, c.want)
			}
		})
	}
	if err := load(t, map[string]string{"a.yaml": "man: a(3)\n" + fn + "rules:\n  - " + arg + ", device_api: \" CQConfig has no x. \"}\n"}); err != nil {
		t.Errorf("an argument rule with a note: %v", err)
	}
}
