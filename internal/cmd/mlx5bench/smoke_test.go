package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSmoke runs one tiny round of the encoder pair and the rows without a
// benchmark, and checks the table's shape.
func TestSmoke(t *testing.T) {
	t.Setenv(srcEnv, "") // the libmlx5 row without a tree
	var out, errb bytes.Buffer
	st := run([]string{"-rounds", "1", "-benchtime", "100x", "-rows", "^(encoders|percall-libmlx5)$"}, &out, &errb)
	if st != 0 {
		t.Fatalf("status %d: %s", st, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var table []string
	for _, l := range lines {
		if strings.HasPrefix(l, "|") {
			table = append(table, l)
		}
	}
	if len(table) != 4 {
		t.Fatalf("want header, rule and 2 rows:\n%s", out.String())
	}
	for _, l := range table {
		if n := strings.Count(l, "|"); n != 9 {
			t.Errorf("%d separators (want 9): %s", n, l)
		}
	}
	enc := strings.Split(table[3], "|") // rows keep the table's order
	if !strings.Contains(enc[1], "encoders alone") || !strings.HasSuffix(strings.TrimSpace(enc[4]), "ns") ||
		!strings.HasSuffix(strings.TrimSpace(enc[5]), "×") {
		t.Errorf("encoder row: %s", table[3])
	}
	if !strings.Contains(table[2], "not measured: needs an rdma-core source tree: git clone --branch v44.0 ") ||
		!strings.Contains(table[2], "-rdma-core-src DIR") {
		t.Errorf("libmlx5 row: %s", table[2])
	}
	if !strings.HasPrefix(lines[0], "Measured ") || !strings.Contains(lines[0], "GOAMD64=") ||
		!strings.Contains(out.String(), "go run ./internal/cmd/mlx5bench -rounds 1") {
		t.Errorf("header:\n%s", out.String())
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-rows", "nosuchrow"}, {"-rows", "("}, {"-rounds", "0"}, {"-placements", "0"}, {"-placements", "17"}, {"-against", "HEAD", "-json"}, {"-samples", "0"}, {"extra"}} {
		var out, errb bytes.Buffer
		if st := run(args, &out, &errb); st != 2 || errb.Len() == 0 {
			t.Errorf("%v: status %d, %q", args, st, errb.String())
		}
	}
}

// TestSmokeGenerate runs one round of the whole-process rows: both are
// measured (the warm one hits the caches the cold one filled) and quoted
// in seconds or milliseconds.
func TestSmokeGenerate(t *testing.T) {
	var out, errb bytes.Buffer
	if st := run([]string{"-rounds", "1", "-rows", "^generate-(cold|warm)$"}, &out, &errb); st != 0 {
		t.Fatalf("status %d: %s", st, errb.String())
	}
	var rows []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "| mlx5gen generate") || strings.HasPrefix(l, "| the same, nothing changed") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2 {
		t.Fatalf("want the cold and the warm row:\n%s", out.String())
	}
	for _, r := range rows {
		// The warm run (an output cache hit over an unchanged tree) takes
		// milliseconds, the cold one tenths of a second.
		if f := strings.Split(r, "|"); !strings.HasSuffix(strings.TrimSpace(f[4]), " s") && !strings.HasSuffix(strings.TrimSpace(f[4]), " ms") {
			t.Errorf("not measured in seconds or milliseconds: %s", r)
		}
	}
}
