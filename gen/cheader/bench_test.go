package cheader

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"modernc.org/cc/v4"
)

// installedRoot is the header the benchmarks parse: the one Debian's
// libibverbs-dev installs (scripts/setup.sh installs it).
func installedRoot(b *testing.B) string {
	if _, err := os.Stat(filepath.Join(DefaultIncludeRoot, DefaultHeader)); err != nil {
		b.Fatalf("%s/%s is missing: run scripts/setup.sh (apt-get install libibverbs-dev)", DefaultIncludeRoot, DefaultHeader)
	}
	return DefaultIncludeRoot
}

// BenchmarkParseMLX5DV measures installed header -> model: the cc/v4 parse
// plus everything the model adds (attributes, layout, macros, functions).
func BenchmarkParseMLX5DV(b *testing.B) {
	root := installedRoot(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(Config{IncludeRoot: root}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCCParseOnly is the cc/v4 parse alone with the same configuration,
// the baseline that BenchmarkParseMLX5DV is compared with.
func BenchmarkCCParseOnly(b *testing.B) {
	root := installedRoot(b)
	base, err := hostConfig()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		cfg := *base
		cfg.IncludePaths = append([]string{root}, base.IncludePaths...)
		cfg.SysIncludePaths = append([]string{root}, base.SysIncludePaths...)
		cfg.EvalAllMacros = true
		cfg.Header = true
		cfg.UnsignedEnums = true
		if _, err := cc.Translate(&cfg, []cc.Source{
			{Name: "<predefined>", Value: cfg.Predefined},
			{Name: "<builtin>", Value: cc.Builtin},
			{Name: "<mlx5gen>", Value: "#include <infiniband/mlx5dv.h>\n"},
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkManyMacros models a header of 30,000 integer macros (under
// maxDefines) and reports the bytes allocated and the peak heap per
// 100,000 macros, the figure issue 22 gave as 6.5 KB a macro.
func BenchmarkManyMacros(b *testing.B) {
	const n = 30000
	root := b.TempDir()
	var src []byte
	for i := 0; i < n; i++ {
		src = fmt.Appendf(src, "#define K%d (%d << 2 | 1)\n", i, i)
	}
	if err := os.MkdirAll(filepath.Join(root, "infiniband"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, DefaultHeader), src, 0o644); err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak uint64
	for b.Loop() {
		m, err := Load(Config{IncludeRoot: root})
		if err != nil {
			b.Fatal(err)
		}
		if len(m.Macros) < n {
			b.Fatalf("%d macros modelled, want %d", len(m.Macros), n)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)*100000/n, "B-alloc/100k-macros")
	b.ReportMetric(float64(peak)*100000/n, "B-heap/100k-macros")
}
