#!/usr/bin/env bash
# Installs what one stage of mlx5gen needs on a Debian machine, and no
# more, so that running the generator never waits on what only the tests
# use:
#
#   scripts/setup.sh generate   gcc and libibverbs-dev (the installed
#                               infiniband/mlx5dv.h), unless the header is
#                               there or the caller gives its own -I tree
#   scripts/setup.sh test       those, libisal-dev (the signature CRCs'
#                               reference), and the header cache: the
#                               rdma-core 44.0, 56.1 and 65.0 headers
#                               fetched into .cache/ (scripts/rdma-headers.sh)
#   scripts/setup.sh slow       the test stage's, and qemu-user-static for
#                               the other architectures (scripts/qemu-test.sh)
#
# Packages are installed with apt-get as root, or through sudo. A user who
# is neither gets the exact command to give an administrator, and exit 1.
# MLX5GEN_NO_HEADER=1 drops the header packages (generate.sh with -I).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
stage=${1:-test}
case $stage in
generate | test | slow) ;;
*)
	echo "setup.sh: unknown stage \"$stage\" (generate, test or slow)" >&2
	exit 2
	;;
esac

# have NAME: NAME is a program this user can run (bash's command -v also
# finds files that are not executable).
have() {
	local p
	p=$(command -v "$1" 2>/dev/null) && [ -x "$p" ]
}

need=()
if [ "${MLX5GEN_NO_HEADER:-}" != 1 ] || [ "$stage" != generate ]; then
	# The header the generator reads by default; the test stage also
	# links the cgo bindings against libibverbs and libmlx5 (its .so links).
	[ -f /usr/include/infiniband/mlx5dv.h ] || need+=(libibverbs-dev)
fi
# cgo, and the C model's predefined macros and include paths.
have gcc || need+=(gcc libc6-dev)
if [ "$stage" != generate ]; then
	# ISA-L, the independent CRC reference of runtime/sim/sigblock/isaltest.
	[ -f /usr/include/isa-l/crc.h ] || need+=(libisal-dev)
fi
if [ "$stage" = slow ]; then
	# qemu-user for the tests of the other architectures.
	for q in aarch64 ppc64le s390x riscv64 loongarch64 i386 arm; do
		if ! have "qemu-$q-static" && ! have "qemu-$q"; then
			need+=(qemu-user-static)
			break
		fi
	done
fi

if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ]; then
		sudo=()
	elif have sudo; then
		sudo=(sudo)
	else
		echo "setup.sh: the $stage stage needs the Debian packages ${need[*]}, which are not installed;" \
			"this user is not root and has no sudo: ask an administrator to run" \
			"'apt-get install -y ${need[*]}', then run this command again" >&2
		exit 1
	fi
	echo "setup.sh: installing ${need[*]}" >&2
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ "$stage" != generate ]; then
	# The tests generate from each supported release (golden files, the
	# downstream module); fetched with a private apt state, as any user.
	bash "$top/scripts/rdma-headers.sh" >/dev/null
fi
