package main

import (
	"math"
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/mlx5gen/mlx5gen/gen/verify
cpu: AMD EPYC
BenchmarkPostRDMAWrite/C-2         	  500000	         2.50 ns/op	       0 B/op	       0 allocs/op
BenchmarkPostRDMAWrite/Go-2        	  100000	        13.25 ns/op	       0 B/op	       0 allocs/op
BenchmarkMkeyConfigure/batch8-2    	   10000	       800.0 ns/op	       100.0 ns/config	       0 B/op	       0 allocs/op
BenchmarkGenerate                  	       2	 190000000 ns/op	80000000 B/op	  536000 allocs/op
BenchmarkPostRDMAWrite/Go-2 says hello
PASS
`

func TestParseBench(t *testing.T) {
	got, err := parseBench(strings.NewReader(sample), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]result{
		"BenchmarkPostRDMAWrite/C":      {"ns/op": 2.5, "B/op": 0, "allocs/op": 0},
		"BenchmarkPostRDMAWrite/Go":     {"ns/op": 13.25, "B/op": 0, "allocs/op": 0},
		"BenchmarkMkeyConfigure/batch8": {"ns/op": 800, "ns/config": 100, "B/op": 0, "allocs/op": 0},
		"BenchmarkGenerate":             {"ns/op": 1.9e8, "B/op": 8e7, "allocs/op": 536000},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d: %v", len(got), len(want), got)
	}
	for name, w := range want {
		g := got[name]
		if len(g) != len(w) {
			t.Errorf("%s: got %v, want %v", name, g, w)
		}
		for u, v := range w {
			if g[u] != v {
				t.Errorf("%s %s: got %v, want %v", name, u, g[u], v)
			}
		}
	}
}

func TestParseBenchErrors(t *testing.T) {
	for _, in := range []string{
		"BenchmarkX-2 10 1.0 ns/op\nBenchmarkX-2 10 2.0 ns/op\n", // twice in one round
		"BenchmarkX-2 10 abc ns/op\n",                            // not a number
		"BenchmarkX-2 10 1.0 ns/op 5\n",                          // a value without its unit
	} {
		if _, err := parseBench(strings.NewReader(in), 1); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// TestParseBenchSamples: with -test.count samples, each metric is the
// least of a benchmark's samples, and a benchmark seen another number of
// times is an error.
func TestParseBenchSamples(t *testing.T) {
	in := "BenchmarkX-2 10 3.0 ns/op 0 allocs/op\nBenchmarkY-2 10 5.0 ns/op\nBenchmarkX-2 10 2.0 ns/op 1 allocs/op\nBenchmarkY-2 10 6.0 ns/op\n"
	got, err := parseBench(strings.NewReader(in), 2)
	if err != nil {
		t.Fatal(err)
	}
	if got["BenchmarkX"]["ns/op"] != 2 || got["BenchmarkX"]["allocs/op"] != 0 || got["BenchmarkY"]["ns/op"] != 5 {
		t.Errorf("got %v", got)
	}
	for _, n := range []int{1, 3} {
		if _, err := parseBench(strings.NewReader(in), n); err == nil {
			t.Errorf("samples %d of a run of 2: no error", n)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
	} {
		in := append([]float64(nil), c.in...)
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Errorf("median modified its input: %v", c.in)
			}
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is not NaN")
	}
}

// The ratio is the median of the per-round ratios, not the ratio of the
// medians: here the machine slowed down 10× in the last two rounds, which
// shifts both medians but no round's ratio.
func TestSummariseMedianOfRatios(t *testing.T) {
	ref := []float64{2, 2, 2, 20, 20}
	val := []float64{4, 4, 5, 40, 40}
	st := summarise(ref, val, []float64{0, 0, 0, 0, 1})
	if st.Ratio != 2 || st.Min != 2 || st.Max != 2.5 {
		t.Errorf("ratio %v (%v–%v), want 2 (2–2.5)", st.Ratio, st.Min, st.Max)
	}
	if st.Ref != 2 || st.Val != 5 || st.Allocs != 0 || st.Rounds != 5 {
		t.Errorf("medians %+v", st)
	}
	if ratioOfMedians := st.Val / st.Ref; ratioOfMedians == st.Ratio {
		t.Errorf("the fixture does not tell the two apart")
	}
	if st := summarise(nil, val, nil); !math.IsNaN(st.Ratio) {
		t.Errorf("a row without a reference has ratio %v", st.Ratio)
	}
}

func TestFmtNs(t *testing.T) {
	for ns, want := range map[float64]string{
		1.834: "1.83 ns", 105: "105 ns", 2.5e5: "0.25 ms", 3.8e8: "0.380 s", math.NaN(): "—",
	} {
		if got := fmtNs(ns); got != want {
			t.Errorf("fmtNs(%v) = %q, want %q", ns, got, want)
		}
	}
}

func TestPattern(t *testing.T) {
	r := newRunner("", "", []row{
		{Key: "a", Pkg: verify, Bench: "BenchmarkPostRDMAWrite/Go", Ref: "BenchmarkPostRDMAWrite/C"},
		{Key: "b", Pkg: verify, Bench: "BenchmarkPollCQ/Go", Ref: "BenchmarkPollCQ/C-one-barrier"},
		{Key: "c", Pkg: command, Bench: "BenchmarkGenerate"},
		{Key: "d", NotMeasured: "no benchmark"},
	})
	if got, want := r.pattern(verify, true), `^(BenchmarkPostRDMAWrite|BenchmarkPollCQ)$/^(Go|C|C-one-barrier)$`; got != want {
		t.Errorf("verify: %s, want %s", got, want)
	}
	if got, want := r.pattern(command, true), `^(BenchmarkGenerate)$`; got != want {
		t.Errorf("command: %s, want %s", got, want)
	}
	if got := r.packages(); len(got) != 2 || got[0] != verify || got[1] != command {
		t.Errorf("packages %v", got)
	}
}

// TestPGOPattern: a PGO row's binary is its own, and its profile run
// measures only its Go side, not the reference.
func TestPGOPattern(t *testing.T) {
	rs := withPGO([]row{
		{Key: "a", Pkg: lib, Bench: libPost + "Go", Ref: libPost + "C", Target: "≤ 1.0×"},
		{Key: "b", Pkg: lib, Bench: libDB + "Go", Ref: libDB + "CUnlocked"},
	}, "a", "b")
	r := newRunner("", "", rs)
	if got := r.packages(); len(got) != 2 || got[0] != lib || got[1] != lib+pgoKey {
		t.Fatalf("packages %v", got)
	}
	if got, want := r.pattern(lib+pgoKey, false), `^(BenchmarkLibmlx5Post|BenchmarkLibmlx5DoorbellEach)$/^(Go)$`; got != want {
		t.Errorf("profile run: %s, want %s", got, want)
	}
	if got, want := r.pattern(lib+pgoKey, true), `^(BenchmarkLibmlx5Post|BenchmarkLibmlx5DoorbellEach)$/^(Go|C|CUnlocked)$`; got != want {
		t.Errorf("rounds: %s, want %s", got, want)
	}
	if rs[1].Key != "a-pgo" || !rs[1].PGO || rs[1].Target != "" || rs[1].Bench != rs[0].Bench || rs[1].Ref != rs[0].Ref {
		t.Errorf("twin of a: %+v", rs[1])
	}
}

// TestPGOTwins: every libmlx5 row with a target in issue 26 has its PGO
// twin (withPGO skips a key it does not find).
func TestPGOTwins(t *testing.T) {
	have := map[string]bool{}
	for _, w := range rows {
		have[w.Key] = true
	}
	for _, w := range plainRows {
		if w.Lib && w.Target != "" && !have[w.Key+"-pgo"] {
			t.Errorf("row %s has no PGO twin", w.Key)
		}
	}
}
