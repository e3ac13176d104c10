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
  most 1 (a group dstat does not have is left out), judged per group by bench/verdict.py on each
  run's own ratio (the two side by side): met when the runs agree (all of 3, 4 of 5; spread
  (max - min) / median within 20 % or their margin to the limit), NOT met when they agree it is
  missed, else undecided.
  Exit status 0 when every group meets it, 1 when one does not, else 3 (undecided).
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
command -v dstat >/dev/null || die "dstat is missing (make test-deps)"
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
per_run_ms() { awk 'NF >= 5 { printf "%.6f\n", ($NF - $4) / (NF - 4) / 1e6 }' "$1"; }
statuses=""
details=()
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
	# Each run's own ratio, iolens / dstat (run side by side, under the same load).
	figures=$(paste -d' ' <(per_run_ms "$work/$tag.iolens") <(per_run_ms "$work/$tag.dstat") |
		awk 'NF == 2 { if ($2 > 0) printf "%.4f ", $1 / $2; else printf "nan " }')
	# shellcheck disable=SC2086 # one figure a run
	verdict=$(python3 "$repo/bench/verdict.py" --max-spread 20 --format %.2f '<= 1' $figures) && rc=0 || rc=$?
	[[ $rc == [013] ]] || die "bench/verdict.py failed on $group: $verdict"
	statuses+=" $rc"
	printf '%-14s %10s %10s %7s  %s\n' "$group" "$ours" "$theirs" "$ratio" "$(head -n 1 <<<"$verdict" | cut -d' ' -f1-2 | sed 's/ (.*//; s/:$//')"
	details+=("$group: $verdict")
done
status=0
[[ $statuses != *3* ]] || status=3
[[ $statuses != *1* ]] || status=1
words=(met "NOT met" - undecided) # bench/verdict.py's, by exit status
echo "goal: every group at most dstat's cost (each run's iolens / dstat <= 1): ${words[status]}"
for line in "${details[@]}"; do echo "  $line"; done
exit "$status"
