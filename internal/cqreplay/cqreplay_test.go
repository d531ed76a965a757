package cqreplay

import (
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const dir = "../../testdata/cqe-vectors"

func loadAll(t *testing.T) map[string][]*Case {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no vector files: %v", err)
	}
	all := map[string][]*Case{}
	for _, p := range paths {
		f, cases, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range Replay(f, cases) {
			if o.Err != nil {
				t.Errorf("%s: FAIL %s: %v", filepath.Base(p), o.ID, o.Err)
			}
		}
		all[p] = cases
	}
	return all
}

// TestReplayAll: every shared case passes.
func TestReplayAll(t *testing.T) {
	n := 0
	for _, cases := range loadAll(t) {
		n += len(cases)
	}
	if n < 138 {
		t.Errorf("%d cases, the shared files hold 138", n)
	}
}

// TestRulesDecide: without the spec's rules the cases a later release
// changed fail, each naming what differs; so a divergence comes from a
// rule, never from the case.
func TestRulesDecide(t *testing.T) {
	saved := Rules
	defer func() { Rules = saved }()
	Rules = nil
	failed := map[string]string{}
	for _, name := range []string{"resp_success.json", "scatter.json", "signature.json"} {
		f, cases, err := Load(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range Replay(f, cases) {
			if o.Err != nil {
				failed[o.ID] = o.Err.Error()
			}
		}
	}
	for id, want := range map[string]string{
		"resp_rq_tail_not_wqe_counter": "wc[0].wr_id",
		"scat_req128_32":               "scatter_buffers[lbuf]: byte 0 differs",
		"sig_domain_upper_bits":        "err_info",
	} {
		if !strings.Contains(failed[id], want) {
			t.Errorf("%s without rules: %q, want a failure naming %q", id, failed[id], want)
		}
	}
	if len(failed) != 3 {
		t.Errorf("without rules %d cases fail, want 3: %v", len(failed), failed)
	}
	// Each rule follows a release and maps to paths.
	for id := range followed {
		found := false
		for _, r := range mlx5rules.Rules {
			if r.ID == id {
				found = r.Follows != "" && len(r.Funcs) > 0
			}
		}
		if !found {
			t.Errorf("rule %s: not in the spec with follows and funcs", id)
		}
	}
}

// TestChangedValueFails: a changed expectation fails its case with the
// field named.
func TestChangedValueFails(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(dir, "errors.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), `"vendor_err": 108,`, `"vendor_err": 107,`, 1)
	if s == string(data) {
		t.Fatal("no vendor_err 108 to change")
	}
	f, cases, err := Parse("x.json", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, o := range Replay(f, cases) {
		if o.Err != nil {
			bad++
			if !strings.Contains(o.Err.Error(), "vendor_err: 0x6c, want 0x6b") {
				t.Errorf("%s: %v", o.ID, o.Err)
			}
		}
	}
	if bad != 1 {
		t.Errorf("%d cases fail, want 1", bad)
	}
}

// TestHostile: malformed, empty, vacuous and oversized files are errors
// naming the file and the line:column or the case and field.
func TestHostile(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(dir, "flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ data, want string }{
		{`{"cases": [}`, "x.json:1:12: invalid character"},
		{"{\n\"cases\": 5}", "x.json:2:10: json: cannot unmarshal"},
		{`{"cases": []}`, "x.json: no cases"},
		{`{"cases": [{"id": "a", "calls": []}]}`, `case "a": calls: none`},
		{`{"cases": [{"id": "a", "calls": [{"fn": "ibv_poll_cq"}]}]} x`, "data after the JSON document"},
		{strings.Replace(string(good), `"ncqe": 8,`, `"ncqe": 16777216,`, 1), "setup.cq: 16777216 entries"},
		{strings.Replace(string(good), `"num_entries": 4,`, `"num_entries": 100000,`, 1), "num_entries 100000"},
		{strings.Replace(string(good), `"wqe_cnt": 16,`, `"wqe_cnt": 15,`, 1), "sq.wqe_cnt: 15"},
		{strings.Replace(string(good), `"fn": "ibv_poll_cq"`, `"fn": "ibv_poll_cqx"`, 1), `fn: "ibv_poll_cqx" is not a call`},
		{strings.Repeat(" ", MaxFileSize+1), "larger than"},
		{`{"cases": [{"id": "a", "setup": {"cq": {"ncqe": 2, "cqe_sz": 64, "initial_dbrec_hex": "0000000000000000"}, "cq_buffer_hex": "` +
			strings.Repeat("00", 128) + `"}, "calls": [{"fn": "(hardware) write CQE", "slot": 0, "hex": "` + strings.Repeat("00", 64) + `"}]}]}`,
			"only hardware writes"},
	} {
		_, _, err := Parse("x.json", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: %v, want %q", tc.data, err, tc.want)
		}
	}
}

func TestIsCQE(t *testing.T) {
	cqe, _ := os.ReadFile(filepath.Join(dir, "ex.json"))
	wqe, _ := os.ReadFile("../../testdata/vectors/rdma.json")
	if !IsCQE(cqe) || IsCQE(wqe) || IsCQE([]byte("nope")) {
		t.Error("kind detection")
	}
}

// TestSRQHeadOutside: an ODP repost whose SRQ free list leads outside the
// SRQ is an error naming it, not a panic.
func TestSRQHeadOutside(t *testing.T) {
	f := &fakeSRQ{max: 2, shift: 5, maxGS: 1, tail: 1, wrid: make([]uint64, 2), buf: make([]byte, 64)}
	f.buf[3] = 7 // WQE 0's next_wqe_index
	f.RepostODP(1)
	f.RepostODP(1)
	if f.err == nil || !strings.Contains(f.err.Error(), "SRQ head 7") {
		t.Fatalf("%v", f.err)
	}
}
