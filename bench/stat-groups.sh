#!/usr/bin/env bash
# Measures the CPU time per sample of each of dstat's groups shown alone, iolens stat against dstat, side by side: every group at most dstat's cost (issue 16).
set -euo pipefail

usage="usage: ${0##*/} [GROUP...]
  For each group (default: every group dstat has, one at a time: --cpu --disk --net --page --sys
  --mem --swap --load --proc --int --io --tcp --udp --unix --socket --raw --fs --aio --vm --lock
  --ipc, and the plugins --disk-util --disk-tps --disk-wait --disk-avgqu --net-packets
  --proc-count --mem-adv --vm-adv --zones --top-cpu --top-mem --top-io --top-bio --top-latency
  --top-int --top-oom), runs iolens stat GROUP and dstat GROUP side by side (100 ms apart),
  REPEATS runs of COUNT samples each, and prints the CPU time per sample of each (the sum of
  /proc/PID/task/*/schedstat read 200 ms after each sample, (last - first) / samples between,
  median of the runs: no start-up in it) and the ratio iolens / dstat. Goal: every ratio at
  most 1 (a group dstat does not have is left out). Exit status 1 when one is above.
env: IOLENS (default ./iolens), DELAY (whole seconds, default 1), COUNT (default 6),
  REPEATS (default 3), CC (default cc)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
DELAY=${DELAY:-1}
COUNT=${COUNT:-6}
REPEATS=${REPEATS:-3}
CC=${CC:-cc}
die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ -x $IOLENS ]] || die "$IOLENS: not an executable (run make, or set IOLENS)"
command -v dstat >/dev/null || die "dstat is missing (make deps)"
[[ $DELAY =~ ^[1-9][0-9]*$ ]] || die "DELAY must be a whole number of seconds (dstat takes no other)"
[[ $COUNT =~ ^[0-9]+$ && $COUNT -ge 3 ]] || die "COUNT must be at least 3"
[[ $REPEATS =~ ^[1-9][0-9]*$ ]] || die "REPEATS must be a positive number"

groups=("$@")
if [[ ${#groups[@]} -eq 0 ]]; then
	groups=(--cpu --disk --net --page --sys --mem --swap --load --proc --int --io --tcp --udp --unix --socket
		--raw --fs --aio --vm --lock --ipc --disk-util --disk-tps --disk-wait --disk-avgqu --net-packets
		--proc-count --mem-adv --vm-adv --zones --top-cpu --top-mem --top-io --top-bio --top-latency --top-int
		--top-oom)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/iolens-stat-groups.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
runner=$work/stat-cpu-run
"$CC" -O2 -Wall -o "$runner" "$repo/bench/stat-cpu-run.c" || die "cannot build bench/stat-cpu-run.c"

median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) exit 1; printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
in_run_ms() { awk 'NF >= 5 { print ($NF - $4) / (NF - 4) / 1e6 }' "$1" | median; }

echo "stat-groups: iolens = $IOLENS ($("$IOLENS" --version 2>/dev/null | head -n 1)), $(dstat --version 2>/dev/null | head -n 1 || true)," \
	"$(nproc) cpus, kernel $(uname -r); DELAY=$DELAY s, $REPEATS runs of $COUNT samples each"
printf '%-14s %10s %10s %7s\n' group "iolens ms" "dstat ms" ratio
failed=0
for group in "${groups[@]}"; do
	# A group this dstat does not know is not compared.
	if ! timeout 30 dstat "$group" --nocolor 1 1 >/dev/null 2>"$work/probe.err"; then
		printf '%-14s %10s %10s %7s  (dstat: %s)\n' "$group" - - - "$(head -c 60 "$work/probe.err" | tr '\n' ' ')"
		continue
	fi
	tag=${group//-/}
	rm -f "$work/$tag.iolens" "$work/$tag.dstat"
	for ((run = 1; run <= REPEATS; run++)); do
		"$runner" -l "$work/$tag.iolens" "$IOLENS" stat "$group" --nocolor "$DELAY" "$COUNT" 2>>"$work/$tag.err" &
		a=$!
		sleep 0.1
		"$runner" -l "$work/$tag.dstat" dstat "$group" --nocolor "$DELAY" "$COUNT" 2>>"$work/$tag.err" &
		b=$!
		wait "$a" || die "iolens stat $group failed: $(tail -n 2 "$work/$tag.err")"
		wait "$b" || die "dstat $group failed: $(tail -n 2 "$work/$tag.err")"
	done
	ours=$(in_run_ms "$work/$tag.iolens") || die "$group: no readings of iolens between samples"
	theirs=$(in_run_ms "$work/$tag.dstat") || die "$group: no readings of dstat between samples"
	ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
	mark=""
	if awk -v a="$ours" -v b="$theirs" 'BEGIN { exit !(a > b) }'; then
		mark="  above dstat"
		failed=1
	fi
	printf '%-14s %10s %10s %7s%s\n' "$group" "$ours" "$theirs" "$ratio" "$mark"
done
if ((failed)); then
	echo "goal: every group at most dstat's cost: NOT met"
	exit 1
fi
echo "goal: every group at most dstat's cost: met"
