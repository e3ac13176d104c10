#!/usr/bin/env bash
# tests/kernels/check.sh: the eBPF features in other kernels (make check-kernels): per kernel, the
# harness's self-test, then the tests in one boot; a "N passed, N failed, N skipped" line each.
#
#   tests/kernels/check.sh [KERNEL...]        default: 5.10 6.1 6.12 (Debian 11's and 12's, from packages)
#
# TESTS: the tests to run in each guest (names as tests/run takes them). Default: kernels/matrix,
# each feature held to an exact truth by every mechanism the kernel has, in a few minutes (what CI
# runs); TESTS=all: every tests/cli script that needs eBPF (need_ebpf, ebpf_expected), an hour or
# more per kernel under TCG. SELFTEST=0 leaves the self-test out; KERNEL_TIMEOUT: seconds a guest
# may take (default 900 for the matrix, 14400 for others); MATRIX_REQUIRE: the mechanisms that must count in every kernel given
# (default "fentry kprobes": 5.10, 6.1 and 6.12 have both). IOLENS and BUILD as for tests/run.
# Each guest's output, console and test-durations are kept in build/kernels/results/KERNEL/, and
# the matrix's rows of every kernel in build/kernels/results/matrix.md (kernel x feature x mechanism
# x truth x result).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$top" || exit 2
: "${IOLENS:=$top/iolens}" "${BUILD:=$top/build}" "${KERNELS_DIR:=$top/build/kernels}"
: "${SELFTEST:=1}"
[ $# -gt 0 ] || set -- 5.10 6.1 6.12
: "${TESTS:=kernels/matrix}" "${MATRIX_REQUIRE:=fentry kprobes}"
# A guest that hangs must not take CI's time: the matrix ends in 1-3 minutes (7 on a busy host), 15 are its limit;
# the tests of tests/cli take an hour or more under TCG.
if [ "$TESTS" = kernels/matrix ]; then : "${KERNEL_TIMEOUT:=900}"; else : "${KERNEL_TIMEOUT:=14400}"; fi
if [ "$TESTS" = all ]; then
	TESTS=$(grep -lE '^[^#]*\b(need_ebpf|ebpf_expected)\b' tests/cli/*.sh | grep -v '/lib\.sh$' |
		sed 's|^tests/\(.*\)\.sh$|\1|' | tr '\n' ' ')
fi

# Every kernel fetched first: a download is not a test's time, and a kernel missing from the
# archive stops the run before the first boot.
releases=$("$here/fetch.sh" "$@") || exit 2
mapfile -t releases <<<"$releases"

total_passed=0 total_failed=0 total_skipped=0 summaries=()
# tally NAME OUTPUT_FILE: adds the last "N passed, N failed, N skipped" line of the file; a run
# that printed none (a guest that died, a reader that never ended) is a failure of its own.
tally() {
	local line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$2" | tail -n 1)
	if [ -z "$line" ]; then
		echo "check.sh: $1: no summary line: counted as 1 failure"
		line="0 passed, 1 failed, 0 skipped"
	fi
	set -- $line
	passed=$((passed + $1)) failed=$((failed + $3)) skipped=$((skipped + $5))
}

for i in "${!releases[@]}"; do
	kernel=${*:i+1:1} release=${releases[i]}
	results=$KERNELS_DIR/results/$kernel
	rm -rf "$results"
	mkdir -p "$results"
	passed=0 failed=0 skipped=0 began=$SECONDS
	echo "== $kernel ($release)"
	if [ "$SELFTEST" = 1 ]; then
		KERNEL=$kernel "$top/tests/run" kernels/selftest | tee "$results/selftest"
		tally "$kernel self-test" "$results/selftest"
	fi
	# The tests on the guest's scratch disk, one at a time (TCG's single thread runs the guest's
	# CPUs in turn); what each took copied out to the share.
	# shellcheck disable=SC2086 # TESTS is a list of names
	"$here/run.sh" --timeout "$KERNEL_TIMEOUT" --share "$results" "$kernel" \
		env IOLENS="$IOLENS" BUILD="$BUILD" TEST_TMPDIR=/tmp/tests TEST_JOBS=1 RESULTS="$results" \
		MATRIX_ROWS="$results/matrix.rows" MATRIX_REQUIRE="$MATRIX_REQUIRE" bash -c \
		'"$0" "$@"; status=$?; cp "$TEST_TMPDIR/test-durations" "$RESULTS/" 2>/dev/null; exit $status' \
		"$top/tests/run" $TESTS | tee "$results/summary"
	status=${PIPESTATUS[0]}
	tally "$kernel" "$results/summary"
	# A guest stopped at its timeout or dead (run.sh: 124, 125) fails even after a summary.
	if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
		echo "check.sh: $kernel: the guest's run ended with status $status: counted as 1 failure"
		failed=$((failed + 1))
	fi
	summaries+=("$kernel ($release, $((SECONDS - began)) s): $passed passed, $failed failed, $skipped skipped")
	total_passed=$((total_passed + passed)) total_failed=$((total_failed + failed))
	total_skipped=$((total_skipped + skipped))
done

# The Measure table: every kernel's rows, in the order run; a kernel whose guest wrote none says so.
table=$KERNELS_DIR/results/matrix.md
case " $TESTS " in *" kernels/matrix "*) ;; *) table=/dev/null ;; esac
{
	echo "| kernel | feature | mechanism | truth | result |"
	echo "|---|---|---|---|---|"
	for i in "${!releases[@]}"; do
		rows=$KERNELS_DIR/results/${*:i+1:1}/matrix.rows
		if [ -s "$rows" ]; then
			awk -F'\t' -v k="${releases[i]}" '{ gsub(/\|/, "\\|"); printf "| %s | %s | %s | %s | %s |\n", k, $1, $2, $3, $4 }' "$rows"
		else
			echo "| ${releases[i]} | (none) | | | no rows: kernels/matrix did not run or ended first |"
		fi
	done
} >"$table"
echo
printf '%s\n' "${summaries[@]}"
echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
[ "$total_failed" -eq 0 ]
