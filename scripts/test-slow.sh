#!/usr/bin/env bash
# The slow test stage, which CI (.ci/run) runs after scripts/test.sh:
# the command's end-to-end tests (cmd/mlx5gen, examples), the generator's
# release bindings and hostile headers, bench.sh's PGO build, the cgo link tests (internal/verbslink, with a cgocheck2 rebuild), the
# pure-Go packages built and tested without cgo, the examples' hardware
# path without cgo, the race detector, the 32-bit targets, and the pure-Go
# tests of the other 64-bit architectures under qemu-user. Installs its
# needs first (scripts/setup.sh slow: the test stage's and
# qemu-user-static). Each step prints how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh slow
step() {
	local name=$1 start=$SECONDS
	shift
	echo "+ $*" >&2
	"$@"
	echo "test-slow.sh: $name: $((SECONDS - start)) s" >&2
}
# The command end to end: the generator as a user runs it, the
# downstream module of docs/downstream.md, scripts/generate.sh, the
# testscripts; and every example through go run, on the simulator and
# with -device mlx5_0 (the hardware backend's no-device error).
step command go test -count=1 ./cmd/mlx5gen/ ./examples/
# The generator's two heaviest tests (build tag mlx5gen_slow): every
# release's cgo bindings compiled against its headers and run against
# their test double (TestBindingsReleases), and the hostile header sets
# modelled in child processes under their CPU and memory bounds
# (TestHostileHeaders).
step gen-slow go test -count=1 -tags mlx5gen_slow -run 'TestBindingsReleases|TestHostileHeaders' ./gen/ ./gen/cheader/
step gen-slow-vet go vet -tags mlx5gen_slow ./gen/ ./gen/cheader/
# bench.sh's PGO rows end to end: a PGO twin built (the plain binary for
# its profile run, then the twin with that profile: the standard library
# is recompiled with it) and measured.
step bench-pgo go test -count=1 -tags mlx5gen_slow -run TestSmokePGO ./internal/cmd/mlx5bench/
# The bindings linked against libibverbs and libmlx5, and cgo's pointer
# rules, also re-built with GOEXPERIMENT=cgocheck2 (TestCgocheck2); then
# against the generated C test double.
step verbslink go test -count=1 ./internal/verbslink/
step verbslink-double go test -count=1 -tags mlx5gen_double ./internal/verbslink/
# The generated package and the runtime need neither cgo nor rdma-core.
step nocgo-build env CGO_ENABLED=0 go build ./generated/... ./runtime/... ./examples/...
step nocgo-test env CGO_ENABLED=0 go test -count=1 ./generated/... ./runtime/...
# Every example through go run, on the simulator and (failing, saying it
# needs cgo) with -device mlx5_0, built without cgo.
step nocgo-examples env CGO_ENABLED=0 go test -count=1 ./examples/
# The device API, the simulator and the queues under the race detector:
# a writer and a poller on different goroutines (devicetest's
# PostPollSplit), Close racing post, poll and wait (CloseRace, the gate's
# own tests), several goroutines arming and waiting on one channel.
step race go test -count=1 -race ./runtime/device/... ./runtime/sim/ ./runtime/internal/gate ./runtime/sq ./runtime/cq ./runtime/rq ./examples/...
# The 32-bit targets build (the mirrors say they are not C's layout there,
# and runtime/sq refuses to start without DMA barriers), and their tests
# compile there too (vet type-checks the test files).
step 32bit-build sh -c 'GOARCH=386 CGO_ENABLED=0 go build ./... && GOARCH=arm CGO_ENABLED=0 go build ./...'
step 32bit-vet sh -c 'GOARCH=386 CGO_ENABLED=0 go vet ./generated/... ./runtime/... && GOARCH=arm CGO_ENABLED=0 go vet ./generated/... ./runtime/...'
# The pure-Go tests on arm64, ppc64le, s390x, riscv64 and loong64, under qemu-user.
step qemu bash scripts/qemu-test.sh
echo "test-slow.sh: passed in $SECONDS s" >&2
