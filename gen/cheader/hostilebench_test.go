//go:build mlx5gen_slow

package cheader_test

import "testing"

// BenchmarkManyMacrosRSS models a header of 30,000 integer macros (under
// the #define limit) in a child process, as TestHostileHeaders does, and
// reports the child's peak resident set (VmHWM) and that peak above a
// child modelling an empty header, per 100,000 macros: issue 22 measured
// 6.5 KB a macro, 650 MB per 100,000 (BenchmarkManyMacros reports the
// bytes allocated and the live heap, in the benchmark's own process).
func BenchmarkManyMacrosRSS(b *testing.B) {
	const n = 30000
	full, _ := hostileRoot(b, map[string]string{"mlx5dv.h": manyMacros(n)})
	empty, _ := hostileRoot(b, map[string]string{"mlx5dv.h": "struct s { int a; };\n"})
	var peak int64
	for b.Loop() {
		out, _, rss, _ := runHostile(b, full)
		if out != "ok" {
			b.Fatalf("%d macros: %s", n, out)
		}
		peak = max(peak, rss)
	}
	out, _, base, _ := runHostile(b, empty)
	if out != "ok" {
		b.Fatalf("empty header: %s", out)
	}
	b.ReportMetric(float64(peak)/(1<<20), "MB-peak-RSS")
	b.ReportMetric(float64(peak-base)*100000/n/(1<<20), "MB-RSS/100k-macros")
}
