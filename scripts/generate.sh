#!/usr/bin/env bash
# Sets up a fresh Debian machine (scripts/setup.sh) and runs the generator
# on the installed infiniband/mlx5dv.h. Extra arguments go to
# `mlx5gen generate`; without -out the package goes to build/mlx5dv
# (git-ignored). `go generate ./generated/` regenerates the committed
# package from the 44.0 header of the cache instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
args=("$@")
case " $* " in
*" -out "* | *" -out="* | *" --out "* | *" --out="*) ;;
*) args+=(-out build/mlx5dv) ;;
esac
go run ./cmd/mlx5gen generate "${args[@]}"
