#!/usr/bin/env bash
# Sets up a fresh Debian machine (scripts/setup.sh) and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
set -x
go vet ./...
go test -count=1 ./...
# The cgo bindings against their generated C test double: every bound
# function byte for byte, and cgo's pointer rules. (go test ./... above ran
# the link test and the same tests re-built with GOEXPERIMENT=cgocheck2, in
# internal/verbslink.)
go test -count=1 -tags mlx5gen_double ./generated/mlx5verbs/ ./internal/verbslink/ ./runtime/device/verbs/
# The signature CRCs against ISA-L (cgo, test only; libisal-dev from setup.sh).
go test -count=1 -tags isal ./runtime/sim/sigblock/isaltest
# The generated package and the runtime need neither cgo nor rdma-core.
CGO_ENABLED=0 go build ./generated/... ./runtime/... ./examples/...
CGO_ENABLED=0 go test -count=1 ./generated/... ./runtime/...
# Every example through go run, on the simulator and (failing, saying it
# needs cgo) with -device mlx5_0, built without cgo.
CGO_ENABLED=0 go test -count=1 ./examples/
# The device API, the simulator and the queues under the race detector:
# a writer and a poller on different goroutines (devicetest's
# PostPollSplit), Close racing post, poll and wait (CloseRace, the gate's
# own tests), several goroutines arming and waiting on one channel.
go test -count=1 -race ./runtime/device/... ./runtime/sim/ ./runtime/internal/gate ./runtime/sq ./runtime/cq ./runtime/rq ./examples/...
# Every reference vector through the send-queue writer.
go run ./cmd/mlx5gen replay testdata/vectors/*.json
# Every CQE reference vector through the CQ poller.
go run ./cmd/mlx5gen replay testdata/cqe-vectors/*.json
# The 32-bit targets build (the mirrors say they are not C's layout there,
# and runtime/sq refuses to start without DMA barriers).
GOARCH=386 CGO_ENABLED=0 go build ./...
GOARCH=arm CGO_ENABLED=0 go build ./...
# Their tests compile there too (vet type-checks the test files).
GOARCH=386 CGO_ENABLED=0 go vet ./generated/... ./runtime/...
GOARCH=arm CGO_ENABLED=0 go vet ./generated/... ./runtime/...
# The pure-Go tests on arm64, ppc64le, s390x, riscv64 and loong64, under qemu-user.
bash scripts/qemu-test.sh
