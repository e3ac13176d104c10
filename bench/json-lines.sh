#!/usr/bin/env bash
# Measures what one row of a monitor's lines costs in each format (cachetop --files --json writes tens of thousands an interval): CPU time per row of a table, CSV and JSON lines, JSON's ratio to CSV per round, instructions per row.
set -euo pipefail

usage="usage: ${0##*/} [--rows N] [--rounds R]
  Builds bench/json-lines.c (make bench), then runs it R rounds: each round writes one interval
  of N rows shaped as cachetop --files' (a path of ~30 characters, 11 numbers) in each format,
  table, CSV and JSON lines (in an order that turns each round), to /dev/null.
  Reported: per format, the median CPU time per row (us) and what 66,000 rows take at that
  rate (ms); per round, the ratio JSON lines / CSV; with valgrind, the instructions per row
  (callgrind: the instructions of 2N rows less those of N, / N), which the machine's load does
  not change.
  Goal: JSON lines at most 1.5 x CSV's CPU time per row, judged by bench/verdict.py on the
  rounds' ratios: exit status 0 met, 1 NOT met, 3 undecided (the rounds disagree).
Defaults: N 60000, R 7. env: BUILD (default build), CALLGRIND=0 (no instruction counts),
  PROGRAM (a json-lines built elsewhere, from another commit, run as it is: no make)."

ROWS=60000 ROUNDS=7
while (($#)); do
	case $1 in
	-h | --help) echo "$usage"; exit 0 ;;
	--rows) ROWS=${2:?"$usage"}; shift 2 ;;
	--rounds) ROUNDS=${2:?"$usage"}; shift 2 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ $ROWS =~ ^[1-9][0-9]*$ && $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "N and R are whole numbers above 0"

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-build}
GOAL_RATIO=1.5
if [[ -n ${PROGRAM:-} ]]; then
	program=$PROGRAM
	[[ -x $program ]] || die "$program: not an executable"
else
	program=$repo/$BUILD/bench/json-lines
	make -s -C "$repo" "$BUILD/bench/json-lines" BUILD="$BUILD" || die "make $BUILD/bench/json-lines failed"
fi

formats=(table csv json)
declare -A cpu round
ratios=()
echo "rounds of $ROWS rows, CPU us per row:"
for ((r = 0; r < ROUNDS; r++)); do
	for ((i = 0; i < 3; i++)); do
		fmt=${formats[(r + i) % 3]}
		out=$("$program" "$fmt" "$ROWS") || die "$program $fmt $ROWS failed"
		read -r _ _ _ _ _ us <<<"$out" # FORMAT ROWS wall_us W cpu_us C
		round[$fmt]=$us
		cpu[$fmt]+=" $us"
	done
	ratio=$(awk -v j="${round[json]}" -v c="${round[csv]}" 'BEGIN { printf "%.3f", j / c }')
	ratios+=("$ratio")
	echo "  round $((r + 1)): table ${round[table]} csv ${round[csv]} json ${round[json]}  json/csv $ratio"
done

median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
for fmt in "${formats[@]}"; do
	m=$(median <<<"${cpu[$fmt]}")
	awk -v f="$fmt" -v m="$m" 'BEGIN { printf "%-5s median %.3f us a row of CPU: %.0f ms for 66,000 rows\n", f, m, m * 66000 / 1000 }'
done
status=0
verdict=$(python3 "$repo/bench/verdict.py" --plausible 0.2..50 "<= $GOAL_RATIO" "${ratios[@]}") || status=$?
[[ $status == [013] ]] || die "bench/verdict.py failed: $verdict"
echo "goal: JSON lines at most $GOAL_RATIO x CSV's CPU time per row: $verdict"

if [[ ${CALLGRIND:-1} != 0 ]]; then
	if ! command -v valgrind >/dev/null; then
		echo "${0##*/}: valgrind not found: instruction counts skipped (apt-get install -y valgrind)" >&2
	else
		# instructions FORMAT ROWS: what callgrind counts in the whole run.
		instructions() {
			valgrind --tool=callgrind --callgrind-out-file=/dev/null "$program" "$1" "$2" 2>&1 >/dev/null |
				awk '/Collected :/ { print $NF }'
		}
		n=$((ROWS / 4 > 1000 ? ROWS / 4 : 1000))
		echo
		echo "instructions per row (callgrind, $n and $((2 * n)) rows):"
		for fmt in "${formats[@]}"; do
			one=$(instructions "$fmt" "$n") two=$(instructions "$fmt" $((2 * n)))
			[[ $one =~ ^[0-9]+$ && $two =~ ^[0-9]+$ ]] || die "callgrind gave no count for $fmt"
			echo "  $fmt $(((two - one) / n))"
		done
	fi
fi
exit "$status"
