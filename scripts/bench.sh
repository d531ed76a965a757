#!/usr/bin/env bash
# Measures every path of the performance table (docs/performance.md) in one
# run: mlx5gen against its C reference, interleaved, 10 rounds, the median
# of the per-round ratios. Extra arguments go to internal/cmd/mlx5bench
# (-rounds, -benchtime, -rows, -o FILE). Needs gcc (cgo) for the C loops.
# A default run takes a few minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./internal/cmd/mlx5bench -command "bash scripts/bench.sh${*:+ $*}" "$@"
