package main

import (
	"io"
	"runtime/debug"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
)

// BenchmarkGenerate runs `mlx5gen generate` as a user does: the 44.0
// header to every file written (parse, model, spec, emit, gofmt, write),
// with the command's garbage-collector setting.
func BenchmarkGenerate(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	root, err := rdmacore.IncludeRoot("../..", "44.0")
	if err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if st := run([]string{"generate", "-I", root, "-out", out, "-rules", out + "/RULES.md"}, nil, io.Discard, io.Discard); st != 0 {
			b.Fatalf("status %d", st)
		}
	}
}

// BenchmarkGenerateReleases generates each release of the header cache,
// the model cache off (the parse is what profile-guided optimisation
// needs to see). scripts/pgo.sh writes default.pgo from its CPU profile.
func BenchmarkGenerateReleases(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	b.Setenv(cheader.CacheEnv, "off")
	for _, v := range rdmacore.Versions {
		b.Run(v, func(b *testing.B) {
			root, err := rdmacore.IncludeRoot("../..", v)
			if err != nil {
				b.Fatal(err)
			}
			out := b.TempDir()
			b.ReportAllocs()
			for b.Loop() {
				if st := run([]string{"generate", "-I", root, "-out", out, "-rules", out + "/RULES.md"}, nil, io.Discard, io.Discard); st != 0 {
					b.Fatalf("status %d", st)
				}
			}
		})
	}
}
