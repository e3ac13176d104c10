#!/usr/bin/env bash
# tests/kernels/check.sh: the eBPF tests in other kernels (make check-kernels): per kernel, the
# harness's self-test, then the tests in one boot; a "N passed, N failed, N skipped" line each.
#
#   tests/kernels/check.sh [KERNEL...]        default: 6.1 6.12 (Debian 12's, from packages)
#
# TESTS: the tests to run in each guest (default: every tests/cli script that needs eBPF, by its
# need_ebpf or ebpf_expected); SELFTEST=0 leaves the self-test out; KERNEL_TIMEOUT: seconds a
# guest may take (default 3600). IOLENS and BUILD as for tests/run. Each guest's output is kept
# in build/kernels/results/KERNEL/ (stdout, stderr, console.log).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$top" || exit 2
: "${IOLENS:=$top/iolens}" "${BUILD:=$top/build}" "${KERNELS_DIR:=$top/build/kernels}"
: "${KERNEL_TIMEOUT:=3600}" "${SELFTEST:=1}"
[ $# -gt 0 ] || set -- 6.1 6.12
if [ -z "${TESTS:-}" ]; then
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
	# The tests on the guest's scratch disk; what each took copied out to the share.
	# shellcheck disable=SC2086 # TESTS is a list of names
	"$here/run.sh" --timeout "$KERNEL_TIMEOUT" --share "$results" "$kernel" \
		env IOLENS="$IOLENS" BUILD="$BUILD" TEST_TMPDIR=/tmp/tests RESULTS="$results" bash -c \
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
echo
printf '%s\n' "${summaries[@]}"
echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
[ "$total_failed" -eq 0 ]
