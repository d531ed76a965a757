#!/usr/bin/env bash
# Runs the pure-Go tests (generated/ and runtime/) for the other 64-bit
# architectures rdma-core ships for (arm64, ppc64le and s390x, big-endian;
# riscv64 and loong64), under qemu-user: each test binary is
# cross-compiled (GOARCH, CGO_ENABLED=0) and run by `go test -exec` with the
# qemu binary named explicitly, so binfmt_misc need not be registered.
# Needs Debian's qemu-user-static (scripts/setup.sh slow installs it;
# scripts/test-slow.sh runs this script).
# On the 32-bit targets (386, arm) it runs only the tests that show the
# runtime refusing to start there (no DMA barriers, mirrors not C's layout).
# Usage: scripts/qemu-test.sh [arch...]   (default: all seven)
set -euo pipefail
cd "$(dirname "$0")/.."
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(arm64 ppc64le s390x riscv64 loong64 386 arm)
for arch in "${archs[@]}"; do
	case $arch in
	arm64) q=aarch64 ;;
	loong64) q=loongarch64 ;;
	386) q=i386 ;;
	*) q=$arch ;;
	esac
	qemu=$(command -v "qemu-$q-static" || command -v "qemu-$q" || true)
	if [ -z "$qemu" ] || [ ! -x "$qemu" ]; then
		echo "qemu-test.sh: qemu-$q-static not found (Debian package qemu-user-static)" >&2
		exit 1
	fi
	start=$SECONDS
	case $arch in
	386 | arm)
		# Always qemu, never the host kernel: CI kernels may lack IA-32
		# emulation (the binary then reaches /bin/sh). Go's asynchronous
		# preemption signal crashes Go's 386 runtime under qemu-i386 7.2
		# ("bad g in signal handler"), so it is off for these runs.
		GODEBUG=asyncpreemptoff=1 GOARCH=$arch CGO_ENABLED=0 go test -count=1 -exec "$qemu" \
			-run '^(TestMirrorLayout|TestBarriersRun|TestNewNeedsBarriers|TestPartShiftPPC64)$' \
			./generated/mlx5dv ./runtime/barrier ./runtime/sq ./runtime/rq
		;;
	*)
		GOARCH=$arch CGO_ENABLED=0 go test -count=1 -exec "$qemu" ./generated/... ./runtime/...
		;;
	esac
	echo "qemu-test.sh: $arch passed in $((SECONDS - start)) s"
done
