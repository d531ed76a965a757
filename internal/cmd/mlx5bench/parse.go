package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// result is one benchmark line of `go test -bench`: its metrics by unit
// (ns/op, allocs/op, and any custom one such as ns/config).
type result map[string]float64

// procSuffix is the -GOMAXPROCS suffix the testing package appends.
var procSuffix = regexp.MustCompile(`-\d+$`)

// parseBench reads `go test -bench` output of samples runs of each
// benchmark (-test.count) and returns the results by benchmark name
// (without the -N suffix), each metric the least of the samples: other
// jobs on the machine only ever slow a sample down. A benchmark that
// appears other than samples times is an error.
func parseBench(r io.Reader, samples int) (map[string]result, error) {
	out := map[string]result{}
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue // a log line that starts with a benchmark's name
		}
		name := procSuffix.ReplaceAllString(f[0], "")
		if (len(f)-2)%2 != 0 {
			return nil, fmt.Errorf("line %d: %q: a value without its unit", line, sc.Text())
		}
		res := result{}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q: %v", line, sc.Text(), err)
			}
			res[f[i+1]] = v
		}
		if seen[name]++; seen[name] > samples {
			return nil, fmt.Errorf("line %d: %s appears more than %d times", line, name, samples)
		}
		if prev, ok := out[name]; ok {
			for u, v := range prev {
				if cur, ok := res[u]; !ok || v < cur {
					res[u] = v
				}
			}
		}
		out[name] = res
	}
	for name, k := range seen {
		if k != samples {
			return nil, fmt.Errorf("%s appears %d times, not %d", name, k, samples)
		}
	}
	return out, sc.Err()
}

// median of xs (the mean of the middle two for an even count); xs is not
// modified. NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return nan()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// stats summarises one row over the rounds: the ratio is the median of the
// per-round ratios (each taken within one round, so drift between rounds
// cancels), not the ratio of the medians.
type stats struct {
	Ref, Val        float64 // medians, in the row's unit
	Ratio, Min, Max float64 // per-round Val/Ref
	Allocs          float64 // median allocs/op of the measured side
	Rounds          int
}

func summarise(ref, val, allocs []float64) stats {
	st := stats{Ref: median(ref), Val: median(val), Allocs: median(allocs), Rounds: len(val)}
	st.Ratio, st.Min, st.Max = nan(), nan(), nan()
	if len(ref) != len(val) || len(ref) == 0 {
		return st
	}
	rs := make([]float64, len(ref))
	for i := range ref {
		rs[i] = val[i] / ref[i]
	}
	st.Ratio = median(rs)
	sort.Float64s(rs)
	st.Min, st.Max = rs[0], rs[len(rs)-1]
	return st
}
