package cheader

import (
	"os"
	"path/filepath"
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
