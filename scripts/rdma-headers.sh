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

# version -> Debian suite, the package version tested, and its sha256
declare -A suite=([44.0]=bookworm [56.1]=trixie [65.0]=sid)
declare -A debver=([44.0]=44.0-2 [56.1]=56.1-1 [65.0]=65.0-1.1)
declare -A debsha=(
	[44.0]=78e87d12fb642bc41b04cb2e2f3f2f23cee14b89978a846b83defe945f388f72
	[56.1]=3833759895e1435663a0bc2f9d9d82feb467f8cf8f19afb57c75b5c1f6bb1f1a
	[65.0]=c36f57d9b11d48827eb0e01c9c0e353984620bcf741fa3b13a039b53ecca6a67
)

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
	-o "APT::Sandbox::User=root"
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
	want=${debver[$v]}
	deb=$apt/debs/libibverbs-dev_${want}_amd64.deb
	if [ ! -f "$deb" ]; then
		if ! (cd "$apt/debs" && apt-get "${aptopts[@]}" -qq download "libibverbs-dev=$want" >&2 2>/dev/null); then
			# The suite moved to another Debian revision of the same
			# upstream release: take that one, and say so.
			other=$(apt-cache "${aptopts[@]}" madison libibverbs-dev | awk -v v="$v-" '$3 ~ "^" v { print $3; exit }')
			if [ -z "$other" ]; then
				echo "rdma-headers.sh: Debian ${suite[$v]} no longer has libibverbs-dev $v (wanted $want)" >&2
				exit 1
			fi
			echo "rdma-headers.sh: libibverbs-dev $want is gone from ${suite[$v]}; using $other" >&2
			want=$other
			deb=$apt/debs/libibverbs-dev_${want}_amd64.deb
			(cd "$apt/debs" && apt-get "${aptopts[@]}" -qq download "libibverbs-dev=$want" >&2)
		fi
	fi
	[ -f "$deb" ] || { echo "rdma-headers.sh: download of libibverbs-dev=$want produced no $deb" >&2; exit 1; }
	if [ "$want" = "${debver[$v]}" ] && ! echo "${debsha[$v]}  $deb" | sha256sum -c --status; then
		echo "rdma-headers.sh: $deb does not have the expected sha256 ${debsha[$v]}" >&2
		rm -f "$deb"
		exit 1
	fi
	rm -rf "$dest.tmp"
	mkdir -p "$dest.tmp"
	dpkg -x "$deb" "$dest.tmp"
	[ -f "$dest.tmp/usr/include/infiniband/mlx5dv.h" ] || { echo "rdma-headers.sh: $deb has no usr/include/infiniband/mlx5dv.h" >&2; exit 1; }
	echo "$want" >"$dest.tmp/.complete"
	rm -rf "$dest"
	mv "$dest.tmp" "$dest"
	echo "$v $dest"
done
