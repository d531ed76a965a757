#!/usr/bin/env bash
# The main test stage: what a change must pass, in about 6 minutes on 2
# cores with cold caches. Installs its needs first (scripts/setup.sh test:
# gcc, libibverbs-dev, libisal-dev, the rdma-core header cache). The slow
# stage (scripts/test-slow.sh: builds without cgo, the race detector, the
# 32-bit targets, the other architectures under qemu) runs after it in CI
# (.ci/run). Each step prints how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
# step NAME CMD...: runs CMD, then says how long it took.
step() {
	local name=$1 start=$SECONDS
	shift
	echo "+ $*" >&2
	"$@"
	echo "test.sh: $name: $((SECONDS - start)) s" >&2
}
step vet go vet ./...
# Every package but three the slow stage runs, the ones that build whole
# programs and modules in subprocesses (minutes on a cold cache):
# internal/verbslink rebuilds the standard library and the bindings with
# GOEXPERIMENT=cgocheck2; cmd/mlx5gen builds and runs the command, the
# downstream module and the scripts end to end; examples runs every
# example with go run, twice.
slow='/internal/verbslink$|/cmd/mlx5gen$|/examples$'
# (Two tests of gen and gen/cheader build only with the mlx5gen_slow tag,
# which the slow stage gives: TestBindingsReleases compiles three
# releases' cgo bindings, TestHostileHeaders models megabyte headers in
# child processes, about 100 s of CPU together.)
step test go test -count=1 $(go list ./... | grep -Ev "$slow")
# The cgo bindings against their generated C test double: every bound
# function byte for byte (and runtime/device/verbs' DEVX calls through it).
step double go test -count=1 -tags mlx5gen_double ./generated/mlx5verbs/ ./runtime/device/verbs/
# The signature CRCs against ISA-L (cgo, test only; libisal-dev from setup.sh).
step isal go test -count=1 -tags isal ./runtime/sim/sigblock/isaltest
# Every reference vector through the send-queue writer, and every CQE
# reference vector through the CQ poller.
step replay go run ./cmd/mlx5gen replay testdata/vectors/*.json
step replay-cqe go run ./cmd/mlx5gen replay testdata/cqe-vectors/*.json
echo "test.sh: passed in $SECONDS s; the slow stage is scripts/test-slow.sh" >&2
