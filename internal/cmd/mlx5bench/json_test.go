package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONShape runs one tiny round of the encoder pair and two libmlx5
// rows without a tree, with -json: one object per row, in table order,
// with the stable keys, numbers where measured and the way to get a tree
// where not. No figure is checked beyond its presence and sign.
func TestJSONShape(t *testing.T) {
	t.Setenv(srcEnv, "")
	var out, errb bytes.Buffer
	st := run([]string{"-json", "-rounds", "2", "-benchtime", "100x", "-rows", "^(encoders|burst-libmlx5|mkey-template-libmlx5)$"}, &out, &errb)
	if st != 0 {
		t.Fatalf("status %d: %s", st, errb.String())
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out.String())
	}
	if len(rows) != 3 || rows[0]["key"] != "burst-libmlx5" || rows[1]["key"] != "encoders" || rows[2]["key"] != "mkey-template-libmlx5" {
		t.Fatalf("rows: %s", out.String())
	}
	for _, k := range []string{"key", "path", "reference", "ref_ns", "ns", "ratio", "range", "rounds", "unit", "target"} {
		for _, r := range rows {
			if _, ok := r[k]; !ok {
				t.Errorf("row %v has no %q", r["key"], k)
			}
		}
	}
	enc := rows[1]
	rng, _ := enc["range"].([]any)
	if len(rng) != 2 || enc["rounds"] != 2.0 || !strings.Contains(enc["reference"].(string), "BenchmarkRDMAWriteWQE/C") {
		t.Errorf("encoder row: %v", enc)
	}
	for _, k := range []string{"ref_ns", "ns", "ratio"} {
		if v, ok := enc[k].(float64); !ok || v <= 0 {
			t.Errorf("encoder row: %s = %v", k, enc[k])
		}
	}
	if lo, hi := rng[0].(float64), rng[1].(float64); lo > hi || lo > enc["ratio"].(float64) || hi < enc["ratio"].(float64) {
		t.Errorf("encoder row: range %v around ratio %v", rng, enc["ratio"])
	}
	for _, r := range []map[string]any{rows[0], rows[2]} {
		nm, _ := r["not_measured"].(string)
		if !strings.Contains(nm, "-rdma-core-src DIR") || r["ns"] != nil || r["ratio"] != nil || r["range"] != nil {
			t.Errorf("libmlx5 row without a tree: %v", r)
		}
	}
	if rows[0]["target"] != "≤ 0.35×" || rows[2]["target"] != "≤ 0.5×" {
		t.Errorf("targets: %v, %v", rows[0]["target"], rows[2]["target"])
	}
}

// TestLibKeys checks that the keys issue 26 names for the libmlx5 column
// stay: scripts and the targets refer to them.
func TestLibKeys(t *testing.T) {
	have := map[string]bool{}
	for _, w := range rows {
		have[w.Key] = w.Lib
	}
	for _, k := range []string{"percall-libmlx5", "onecall-libmlx5", "burst-libmlx5", "doorbell-each-libmlx5",
		"doorbell-each-libmlx5-unlocked", "mkey-libmlx5", "mkey-template-libmlx5"} {
		if !have[k] {
			t.Errorf("no libmlx5 row %q", k)
		}
	}
}

// TestBadTree: a directory that is not an rdma-core tree is refused before
// anything is measured, with the way to get one.
func TestBadTree(t *testing.T) {
	var out, errb bytes.Buffer
	st := run([]string{"-rows", "^percall-libmlx5$", "-rdma-core-src", t.TempDir()}, &out, &errb)
	if st != 1 || !strings.Contains(errb.String(), "not an rdma-core source tree") || !strings.Contains(errb.String(), "git clone --branch v44.0") {
		t.Fatalf("status %d: %s", st, errb.String())
	}
}
