#!/usr/bin/env bash
# Refreshes cmd/mlx5gen/default.pgo, the CPU profile the go command uses
# for profile-guided optimisation of mlx5gen (go build picks up a
# default.pgo in the main package's directory). The profile is of
# BenchmarkGenerateReleases: generating rdma-core 44.0, 56.1 and 65.0 with
# the model cache off. Run it after a change that moves where the
# generator spends its time; -benchtime (default 20x) sets the runs per
# release.
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime=${1:-20x}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The profile of a build without PGO, so that it does not feed on itself.
go test -pgo=off -run '^$' -bench '^BenchmarkGenerateReleases$' -benchtime "$benchtime" \
	-cpuprofile "$tmp/cpu.pprof" -o "$tmp/mlx5gen.test" ./cmd/mlx5gen/
go tool pprof -proto "$tmp/cpu.pprof" > cmd/mlx5gen/default.pgo
echo "wrote cmd/mlx5gen/default.pgo ($(wc -c < cmd/mlx5gen/default.pgo) bytes)"
