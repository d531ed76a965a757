package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

func nan() float64 { return math.NaN() }

// fmtNs prints a time in ns with a unit that suits its size.
func fmtNs(ns float64) string {
	switch {
	case math.IsNaN(ns):
		return "—"
	case ns >= 1e8:
		return fmt.Sprintf("%.3f s", ns/1e9)
	case ns >= 1e5:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 100:
		return fmt.Sprintf("%.0f ns", ns)
	}
	return fmt.Sprintf("%.2f ns", ns)
}

func fmtRatio(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", x)
}

// header describes the run: when, where, how.
type header struct {
	Date, CPU, GoVersion, GOAMD64, Command string
	Load                                   string // /proc/loadavg at the start: how quiet the machine was
	Cores, Rounds                          int
	Placements                             int // of the libmlx5 rows' code (layout.go)
	Samples                                int // runs of each benchmark a round, the least kept
	Benchtime, GenBenchtime                string
}

// writeTable prints the Markdown table of rows from the runner's samples.
func writeTable(w io.Writer, h header, rs []row, r *runner) {
	where := ""
	if h.Samples > 1 {
		where = fmt.Sprintf(" (each benchmark the least of %d runs)", h.Samples)
	}
	if h.Placements > 1 {
		where += fmt.Sprintf(", the libmlx5 rows' round i with their code at placement i mod %d", h.Placements)
	}
	fmt.Fprintf(w, "Measured %s on %s (%d cores, load average %s), %s, GOAMD64=%s; %d rounds%s, benchtime %s (BenchmarkGenerate %s):\n\n",
		h.Date, h.CPU, h.Cores, h.Load, h.GoVersion, h.GOAMD64, h.Rounds, where, h.Benchtime, h.GenBenchtime)
	fmt.Fprintf(w, "    %s\n\n", h.Command)
	fmt.Fprintln(w, "| path | reference | reference median | mlx5gen median | ratio (median of rounds) | ratio range | allocs/op | target |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, x := range rs {
		if x.NotMeasured != "" {
			fmt.Fprintf(w, "| %s | — | — | not measured: %s | — | — | — | %s |\n", x.Path, x.NotMeasured, dash(x.Target))
			continue
		}
		st := summarise(r.refs[x.Key], r.vals[x.Key], r.allocs[x.Key])
		ref, rng := "—", "—"
		if x.Ref != "" {
			ref = refName(x, r) + " (`" + x.Ref + "`)"
			rng = fmtRatio(st.Min) + "–" + fmtRatio(st.Max)
		} else {
			st.Ratio = nan()
		}
		allocs := "—"
		if len(r.allocs[x.Key]) > 0 {
			allocs = fmt.Sprintf("%.0f", st.Allocs)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", x.Path, ref, fmtNs(st.Ref), fmtNs(st.Val),
			fmtRatio(st.Ratio), rng, allocs, dash(x.Target))
	}
}

// refName is what the reference is; a libmlx5 row names the version
// built.
func refName(x row, r *runner) string {
	if x.Lib && r.lib != nil {
		return "libmlx5 " + r.lib.Version + ": " + x.RefWhy
	}
	return x.RefWhy
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "—"
	}
	return s
}
