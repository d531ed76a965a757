#!/usr/bin/env bash
# Measures every path of the performance table (docs/performance.md) in one
# run: mlx5gen against its C reference, interleaved, 12 rounds (each from a
# fresh copy of the test binaries; the libmlx5 rows' rounds rotate through
# four placements of their code), the median of the per-round ratios.
# Extra arguments go to internal/cmd/mlx5bench (-rounds, -placements, -samples, -against REV,
# -benchtime, -rows, -o FILE, -json, -update FILES). Needs gcc (cgo) for
# the C loops.
#
# The libmlx5 rows compare with libmlx5's own builders, built once (into
# the user cache directory) from an rdma-core source tree given with
# -rdma-core-src DIR or MLX5GEN_RDMA_CORE_SRC=DIR, e.g.
#   git clone --branch v44.0 https://github.com/linux-rdma/rdma-core DIR
# (also needs python3, which runs the tree's make_abi_structs.py). Without
# a tree those rows say how to get one and the others still run. Each
# libmlx5 row with a target has a "-pgo" twin: the same benchmarks in a
# test binary built with a CPU profile of their own Go side (go test -pgo).
# A default run takes a few minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./internal/cmd/mlx5bench -command "bash scripts/bench.sh${*:+ $*}" "$@"
