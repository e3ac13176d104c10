#!/usr/bin/env bash
# Builds and runs bench/vtrace-overhead (libvtrace's begin+end against two clock reads and a mutex), then counts its instructions per pair with callgrind.
set -uo pipefail

usage="usage: ${0##*/} [vtrace-overhead options, e.g. --runs 30 --pairs 100000]
  Builds with make, runs the wall-clock measurement, then counts instructions per pair with
  valgrind --tool=callgrind (env: CALLGRIND_PAIRS, default 100000; ANNOTATE=1 also prints
  callgrind_annotate's per-line counts of lib/vtrace/writer.c; CALLGRIND=0 skips it).
  The limits are judged by bench/verdict.py on the program's rounds (the medians of each fifth of
  its runs): met when they agree (4 of 5; spread (max - min) / median within 10 % or their margin
  to the limit), NOT met when they agree it is missed, else undecided. A negative cost beyond the
  clock reads, N threads above 1.1 x one thread, or a round where threads that only read the clock
  scaled below 0.8 themselves (the machine did not give them their CPUs) is a disturbed round. The first limit is met
  in ns or as a share of the clock reads (the VM's speed drifts). Exit status 1 when a limit is not
  met or the count check fails, else 3 when one is undecided."
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-build}
program=$repo/$BUILD/bench/vtrace-overhead
CALLGRIND_PAIRS=${CALLGRIND_PAIRS:-100000}

die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ $CALLGRIND_PAIRS =~ ^[1-9][0-9]*$ ]] || die "CALLGRIND_PAIRS must be a positive integer"

make -s -C "$repo" bench BUILD="$BUILD" || die "make bench failed"

"$program" "$@" | tee "${TMPDIR:-/tmp}/vtrace-overhead.$$.out"
status=${PIPESTATUS[0]}
out=${TMPDIR:-/tmp}/vtrace-overhead.$$.out
[[ $status -le 1 ]] || { rm -f "$out"; exit "$status"; }
# judge NAME PLAUSIBLE: bench/verdict.py on the program's "rounds NAME GOAL: F..." line; prints the
# verdict, returns its exit status.
judge() {
	local goal figures
	read -r goal figures < <(awk -v name="$1" '$1 == "rounds" && $2 == name { sub(/:$/, "", $3); $1 = $2 = ""; print }' "$out")
	[[ -n $goal ]] || { echo "${0##*/}: no rounds of $1 in the program's output" >&2; return 2; }
	# shellcheck disable=SC2086 # one figure a round
	python3 "$repo/bench/verdict.py" --plausible "$2" "$goal" $figures
}
echo
verdicts=()
for limit in "extra_ns 0.." "extra_share 0.." "own_scaling ..1.1" "shared_scaling ..1.1"; do
	text=$(judge $limit) && rc=0 || rc=$?
	[[ $rc == [013] ]] || { rm -f "$out"; die "bench/verdict.py failed: $text"; }
	verdicts+=("$rc")
	printf -v "verdict_${limit%% *}" '%s' "$text"
done
rm -f "$out"
# The first limit: in ns, or as a share of the clock reads: met when either is, NOT met when both are not.
if [[ ${verdicts[0]} == 0 || ${verdicts[1]} == 0 ]]; then first=0
elif [[ ${verdicts[0]} == 1 && ${verdicts[1]} == 1 ]]; then first=1
else first=3; fi
words=(met "NOT met" - undecided)
echo "goal: vtrace_begin + vtrace_end at most 15 ns beyond its two clock reads, or 0.234 of them: ${words[first]}"
echo "  in ns: $verdict_extra_ns"
echo "  as a share: $verdict_extra_share"
echo "goal: N threads at least 0.8 x one thread's throughput, one op per thread: $verdict_own_scaling"
echo "goal: N threads at least 0.8 x one thread's throughput, all on one op: $verdict_shared_scaling"
for rc in "$first" "${verdicts[2]}" "${verdicts[3]}"; do
	[[ $rc != 1 ]] || status=1
	[[ $rc != 3 || $status == 1 ]] || status=3
done

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
