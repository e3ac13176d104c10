#!/usr/bin/env bash
# Builds and runs bench/vtrace-overhead (libvtrace's begin+end against two clock reads and a mutex), then counts its instructions per pair with callgrind.
set -uo pipefail

usage="usage: ${0##*/} [vtrace-overhead options, e.g. --runs 30 --pairs 100000]
  Builds with make, runs the wall-clock measurement, then counts instructions per pair with
  valgrind --tool=callgrind (env: CALLGRIND_PAIRS, default 100000; ANNOTATE=1 also prints
  callgrind_annotate's per-line counts of lib/vtrace/writer.c; CALLGRIND=0 skips it).
  Exit status 1 when a limit or the count check fails."
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-build}
program=$repo/$BUILD/bench/vtrace-overhead
CALLGRIND_PAIRS=${CALLGRIND_PAIRS:-100000}

die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ $CALLGRIND_PAIRS =~ ^[1-9][0-9]*$ ]] || die "CALLGRIND_PAIRS must be a positive integer"

make -s -C "$repo" bench BUILD="$BUILD" || die "make bench failed"

"$program" "$@"
status=$?
[[ $status -le 1 ]] || exit "$status"

[[ ${CALLGRIND:-1} == 0 ]] && exit "$status"
if ! command -v valgrind >/dev/null; then
	echo "${0##*/}: valgrind not found: instruction counts skipped (apt-get install -y valgrind)" >&2
	exit "$status"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/vtrace-overhead-callgrind.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# instructions LOOP: the Ir that callgrind counts inside loop_LOOP (and what it calls), and nothing else.
instructions() {
	local out=$work/callgrind.$1
	valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect="loop_$1" \
		"$program" --callgrind-loop "$1" --pairs "$CALLGRIND_PAIRS" >"$work/log.$1" 2>&1 ||
		{ cat "$work/log.$1" >&2; die "valgrind on --callgrind-loop $1 failed"; }
	awk '/^totals:/ { print $2; found = 1 } END { if (!found) exit 1 }' "$out" ||
		die "no totals line in $out"
}

clock_ir=$(instructions clock) || exit 1
vtrace_ir=$(instructions vtrace) || exit 1
mutex_ir=$(instructions mutex) || exit 1

echo
echo "instructions (valgrind --tool=callgrind, $CALLGRIND_PAIRS pairs on one thread)"
awk -v n="$CALLGRIND_PAIRS" -v c="$clock_ir" -v v="$vtrace_ir" -v m="$mutex_ir" 'BEGIN {
	printf "  %-40s %10.1f Ir/pair\n", "2 x clock_gettime(CLOCK_MONOTONIC)", c / n
	printf "  %-40s %10.1f Ir/pair\n", "vtrace_begin + vtrace_end", v / n
	printf "  %-40s %10.1f Ir/pair\n", "vtrace beyond its two clock reads", (v - c) / n
	printf "  %-40s %10.1f Ir/pair\n", "mutex counter beyond its two clock reads", (m - c) / n
}'
echo "  (under valgrind clock_gettime is a system call, not the vDSO: only the differences mean much)"
echo
echo "  where vtrace's instructions go (self Ir per pair, by function):"
callgrind_annotate --inclusive=no --auto=no "$work/callgrind.vtrace" 2>/dev/null |
	awk -v n="$CALLGRIND_PAIRS" '$1 ~ /^[0-9,]+$/ && $NF ~ /^\[/ && $0 !~ /PROGRAM TOTALS/ {
		ir = $1; gsub(",", "", ir)
		name = $0; sub(/^ *[0-9,]+ +\([ 0-9.]+%\) +/, "", name); sub(/ +\[.*$/, "", name); sub(/^.*\.\.\//, "", name)
		if (ir / n >= 0.5) printf "    %8.1f  %s\n", ir / n, name
	}'
if [[ ${ANNOTATE:-0} == 1 ]]; then
	echo
	echo "  per line (ANNOTATE=1), Ir for all $CALLGRIND_PAIRS pairs:"
	callgrind_annotate --inclusive=no --auto=yes --include="$repo" "$work/callgrind.vtrace" 2>/dev/null |
		sed -n '/Auto-annotated source: .*lib\/vtrace\/writer.c/,$p' 
fi
exit "$status"
