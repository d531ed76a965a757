#!/usr/bin/env bash
# Runs the pure-Go tests (generated/ and runtime/) for the other 64-bit
# architectures rdma-core ships for (arm64, ppc64le and s390x, big-endian;
# riscv64 and loong64), under qemu-user: each test binary is
# cross-compiled (GOARCH, CGO_ENABLED=0) and run by `go test -exec` with the
# qemu binary named explicitly, so binfmt_misc need not be registered.
# Needs Debian's qemu-user-static (scripts/setup.sh installs it).
# Usage: scripts/qemu-test.sh [arch...]   (default: all five)
set -euo pipefail
cd "$(dirname "$0")/.."
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(arm64 ppc64le s390x riscv64 loong64)
for arch in "${archs[@]}"; do
	case $arch in
	arm64) q=aarch64 ;;
	loong64) q=loongarch64 ;;
	*) q=$arch ;;
	esac
	qemu=$(command -v "qemu-$q-static" || command -v "qemu-$q" || true)
	if [ -z "$qemu" ]; then
		echo "qemu-test.sh: qemu-$q-static not found (Debian package qemu-user-static)" >&2
		exit 1
	fi
	start=$SECONDS
	GOARCH=$arch CGO_ENABLED=0 go test -count=1 -exec "$qemu" ./generated/... ./runtime/...
	echo "qemu-test.sh: $arch passed in $((SECONDS - start)) s"
done
