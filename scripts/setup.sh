#!/usr/bin/env bash
# Prepares a Debian machine for mlx5gen: gcc for cgo and the layout proofs,
# libibverbs-dev for the installed infiniband/mlx5dv.h (what the generator
# reads by default), libisal-dev for the signature CRC cross-check,
# qemu-user-static for the tests of the other architectures, and the header
# cache of rdma-core 44.0, 56.1 and 65.0.
# Installs with apt-get as root, or through sudo when not root.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

need=()
[ -f /usr/include/infiniband/mlx5dv.h ] || need+=(libibverbs-dev)
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
# ISA-L, the independent CRC reference of runtime/sim/sigblock/isaltest.
[ -f /usr/include/isa-l/crc.h ] || need+=(libisal-dev)
# qemu-user for the tests of the other architectures (scripts/qemu-test.sh).
for q in aarch64 ppc64le s390x riscv64 loongarch64; do
	if ! command -v "qemu-$q-static" >/dev/null 2>&1; then
		need+=(qemu-user-static)
		break
	fi
done
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ]; then
		sudo=()
	elif command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "setup.sh: ${need[*]} missing and not root; run: sudo apt-get install -y ${need[*]}" >&2
		exit 1
	fi
	echo "setup.sh: installing ${need[*]}" >&2
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

bash "$top/scripts/rdma-headers.sh" >/dev/null
