#!/usr/bin/env bash
# Fetch libibverbs-dev for the rdma-core releases mlx5gen supports and unpack
# each into .cache/rdma-core/<version>/ (headers under usr/include, man pages
# under usr/share/man). Uses a private apt sources list and state directory, so
# the machine's own apt configuration is never touched and nothing is installed.
#
#   scripts/rdma-headers.sh            # all supported versions
#   scripts/rdma-headers.sh 56.1       # one version
#
# Prints one "<version> <dir>" line per version. Quick and offline when the
# cache is warm. Environment: MLX5GEN_CACHE overrides the cache root.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${MLX5GEN_CACHE:-$top/.cache}
root=$cache/rdma-core
apt=$cache/apt

# version -> Debian suite and exact package version
declare -A suite=([44.0]=bookworm [56.1]=trixie [65.0]=sid)
declare -A debver=([44.0]=44.0-2 [56.1]=56.1-1 [65.0]=65.0-1.1)

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(44.0 56.1 65.0)

for v in "${versions[@]}"; do
	if [ -z "${suite[$v]:-}" ]; then
		echo "rdma-headers.sh: unsupported rdma-core version $v (supported: ${!suite[*]})" >&2
		exit 2
	fi
done

aptopts=(
	-o "Dir::Etc::sourcelist=$apt/sources.list"
	-o "Dir::Etc::sourceparts=-"
	-o "Dir::State::Lists=$apt/lists"
	-o "Dir::State::status=$apt/status"
	-o "Dir::Cache=$apt/cache"
	-o "Debug::NoLocking=1"
	-o "APT::Get::List-Cleanup=0"
	-o "Acquire::Languages=none"
	-o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
	-o "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false"
	-o "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false"
	-o "Acquire::IndexTargets::deb::CNF::DefaultEnabled=false"
)

updated=0
apt_update() {
	[ $updated = 1 ] && return
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
	: >"$apt/status"
	{
		for s in bookworm trixie sid; do
			echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $s main"
		done
	} >"$apt/sources.list"
	apt-get "${aptopts[@]}" -qq update >&2
	updated=1
}

for v in "${versions[@]}"; do
	dest=$root/$v
	if [ -f "$dest/.complete" ]; then
		echo "$v $dest"
		continue
	fi
	apt_update
	deb=$apt/debs/libibverbs-dev_${debver[$v]}_amd64.deb
	if [ ! -f "$deb" ]; then
		(cd "$apt/debs" && apt-get "${aptopts[@]}" -qq download "libibverbs-dev=${debver[$v]}" >&2)
	fi
	[ -f "$deb" ] || { echo "rdma-headers.sh: download of libibverbs-dev=${debver[$v]} produced no $deb" >&2; exit 1; }
	rm -rf "$dest.tmp"
	mkdir -p "$dest.tmp"
	dpkg -x "$deb" "$dest.tmp"
	[ -f "$dest.tmp/usr/include/infiniband/mlx5dv.h" ] || { echo "rdma-headers.sh: $deb has no usr/include/infiniband/mlx5dv.h" >&2; exit 1; }
	echo "${debver[$v]}" >"$dest.tmp/.complete"
	rm -rf "$dest"
	mv "$dest.tmp" "$dest"
	echo "$v $dest"
done
