#!/usr/bin/env bash
# Sets up a fresh Debian machine (scripts/setup.sh) and runs the generator
# on the installed infiniband/mlx5dv.h. Extra arguments go to
# `mlx5gen generate`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
go run ./cmd/mlx5gen generate "$@"
