#!/usr/bin/env bash
# Sets up a fresh Debian machine (scripts/setup.sh) and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
set -x
go vet ./...
go test -count=1 ./...
