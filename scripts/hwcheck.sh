#!/usr/bin/env bash
# The hardware conformance kit: run on a machine with a ConnectX (mlx5)
# device, it checks that the device API's hardware backend does what the
# simulator does, and prints a report (docs/hwcheck.md says what each
# step checks):
#
#   bash scripts/hwcheck.sh [-device mlx5_0] [-report FILE]
#
# Steps: the device and its capabilities (mlx5gen devices); the device
# API's conformance suite (devicetest.Run) and the seed man pages'
# examples (devicetest.RunSeeds: signature blocks, mkey layouts, a DCI
# write) on the device, through runtime/device/verbs; the generated
# bindings linked against the installed libibverbs and libmlx5; every
# example program with -device. A skipped test is a failure here: the
# kit exists to run them.
#
# Without a device it stops at the first step with the backend's
# no-device error and exit status 3. Installs what generating needs
# (scripts/setup.sh generate: gcc, libibverbs-dev); the device needs
# rdma-core's user-space drivers (ibverbs-providers) and a loaded mlx5_ib.
set -uo pipefail
cd "$(dirname "$0")/.."
dev="" report=""
while [ $# -gt 0 ]; do
	case $1 in
	-device) [ $# -ge 2 ] || { echo "hwcheck.sh: -device needs a device name (mlx5gen devices lists them)" >&2; exit 2; }; dev=$2; shift 2 ;;
	-report) [ $# -ge 2 ] || { echo "hwcheck.sh: -report needs a file" >&2; exit 2; }; report=$2; shift 2 ;;
	-h | -help | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "hwcheck.sh: unknown argument $1 (usage: hwcheck.sh [-device NAME] [-report FILE])" >&2; exit 2 ;;
	esac
done
bash scripts/setup.sh generate || exit 1
log=$(mktemp -d "${TMPDIR:-/tmp}/hwcheck.XXXXXX")
results=()
failed=0
# step NAME CMD...: runs CMD with its output in the log, and records
# PASS or FAIL (FAIL too when a test skipped) with its time.
step() {
	local name=$1 start=$SECONDS out="$log/$1.log"
	shift
	echo "+ $*" >&2
	"$@" >"$out" 2>&1
	local rc=$?
	if [ $rc -eq 0 ] && grep -q -- '--- SKIP' "$out"; then
		grep -B1 -A2 -- '--- SKIP' "$out" >&2
		rc=1
	fi
	local verdict=PASS
	if [ $rc -ne 0 ]; then
		verdict=FAIL
		failed=1
		tail -n 30 "$out" >&2
	fi
	results+=("$(printf '%-26s %s %4d s  %s' "$name" "$verdict" $((SECONDS - start)) "$out")")
	return $rc
}

# The device first: without one nothing else can say anything.
go build -o "$log/mlx5gen" ./cmd/mlx5gen || { rm -rf "$log"; exit 1; }
"$log/mlx5gen" devices >"$log/devices.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	cat "$log/devices.log" >&2
	rm -rf "$log"
	echo "hwcheck.sh: no mlx5 device to check (mlx5gen devices, exit $rc); nothing was run" >&2
	exit 3
fi
cat "$log/devices.log"
if [ -n "$dev" ] && ! grep -qw -- "$dev" "$log/devices.log"; then
	echo "hwcheck.sh: -device $dev is not among the devices above" >&2
	exit 3
fi
# Without -device: the first device listed (the line after the header).
[ -n "$dev" ] || dev=$(awk 'NR == 2 { print $1; exit }' "$log/devices.log")
devargs=(-device "$dev")

step conformance go test -count=1 -v -run '^TestConformance$' ./runtime/device/verbs/ -args "${devargs[@]}"
step seeds go test -count=1 -v -run '^TestSeeds$' ./runtime/device/verbs/ -args "${devargs[@]}"
step bindings-link go test -count=1 -v ./internal/verbslink/
for ex in examples/*/; do
	ex=${ex%/}
	step "example-${ex#examples/}" go run "./$ex" -device "$dev"
done

{
	echo "hwcheck: device $dev, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -srm), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	sed 's/^/  /' "$log/devices.log"
	printf '%s\n' "${results[@]}"
	if [ $failed -eq 0 ]; then echo "hwcheck: every step passed"; else echo "hwcheck: FAILED (logs in $log)"; fi
} | tee ${report:+"$report"}
exit $failed
