#!/usr/bin/env bash
# Measures `iolens stat`'s CPU time per sample (-cdngylmsp and -x) and its start-up against dstat and iostat doing the same work, with a C floor, plus its instructions and syscalls per sample, and whole runs of -x against iostat -x (CPU and memory).
set -euo pipefail

usage="usage: ${0##*/}
  1. CPU time per sample of iolens stat -cdngylmsp against dstat -cdngylmsp, and of iolens stat -x
     against iostat -d -x and dstat's disk plugins, all on the disk of the repository's filesystem,
     with a floor: a C loop that only reads the same /proc files. Limit: iolens at most one tenth
     of dstat's CPU per sample.
  2. Start-up: wall and CPU time of one-sample runs (median), /bin/true as the floor. Limit: iolens
     under 5 ms of wall time.
  3. iolens's instructions per sample (valgrind --tool=callgrind) and syscalls per sample
     (perf stat -e raw_syscalls:sys_enter), which do not depend on the load of the machine.
  4. Whole runs of iolens stat -x 1 5 against iostat -x 1 5 (X_ONLY=1: this alone, under a minute):
     CPU (user + system) and max RSS of the run, and CPU a sample beyond the start (read between
     samples); iolens stat -x --latency (eBPF) beside them. Limits: the run at most 2x iostat's
     CPU, a sample at most 1.2x, each judged on the rounds' own ratios.
  Each limit is judged by bench/verdict.py on rounds: 1 on each run's own ratio iolens / dstat
  (the two side by side), 2 on the median wall time of each fifth of the runs; met when the rounds
  agree (all of 3, 4 of 5; spread (max - min) / median within 10 % or their margin to the limit),
  NOT met when they agree it is missed, else undecided. Exit status 0 when every limit is met, 1
  when one is not (or an error), 3 when one is undecided.
env: IOLENS (default ./iolens), DEV (default: the disk of the repository's filesystem),
  DELAY (whole seconds, default 1), COUNT (samples a run, default 11), REPEATS (runs of COUNT
  samples, default 3), ONE_RUNS (runs of 1 sample, default 7), STARTUP_RUNS (default 50),
  CALLGRIND_COUNT (default 101), CALLGRIND=0 (no callgrind), DSTAT_CALLGRIND=0 (no dstat under
  callgrind, which takes 15 s), SYSCALLS=0 (no perf), ANNOTATE=1 (callgrind_annotate's top functions),
  X_COUNT (samples of 4's long runs, default 5), X_RUNS (4's rounds, default 9), X_ONLY=1 (4 alone)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
[[ $# -eq 0 ]] || { echo "$usage" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
DELAY=${DELAY:-1}
COUNT=${COUNT:-11}
REPEATS=${REPEATS:-3}
ONE_RUNS=${ONE_RUNS:-7}
STARTUP_RUNS=${STARTUP_RUNS:-50}
CALLGRIND_COUNT=${CALLGRIND_COUNT:-101}
CALLGRIND_DELAY=0.01
DSTAT_CALLGRIND_COUNT=3
CPU_LIMIT_SHARE=10  # iolens at most 1/10 of dstat's CPU per sample
STARTUP_LIMIT_MS=5
X_COUNT=${X_COUNT:-5}
X_RUNS=${X_RUNS:-9}
X_RUN_LIMIT=2       # iolens stat -x 1 5 at most 2x iostat -x 1 5's CPU
X_SAMPLE_LIMIT=1.2  # and a sample beyond the start at most 1.2x iostat's

die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ -x $IOLENS ]] || die "$IOLENS: not an executable (run make, or set IOLENS)"
# dstat takes whole seconds, and the runner reads a command's CPU time 200 ms after each sample.
[[ $DELAY =~ ^[1-9][0-9]*$ ]] || die "DELAY must be a whole number of seconds"
[[ $COUNT =~ ^[0-9]+$ && $COUNT -ge 4 ]] || die "COUNT must be at least 4"
[[ $X_COUNT =~ ^[0-9]+$ && $X_COUNT -ge 4 ]] || die "X_COUNT must be at least 4"
for var in REPEATS ONE_RUNS STARTUP_RUNS X_RUNS; do
	[[ ${!var} =~ ^[1-9][0-9]*$ ]] || die "$var must be a positive integer"
done
[[ $CALLGRIND_COUNT =~ ^[0-9]+$ && $CALLGRIND_COUNT -ge 2 ]] || die "CALLGRIND_COUNT must be at least 2"

missing=()
command -v dstat >/dev/null || missing+=(dstat)
command -v iostat >/dev/null || missing+=(sysstat)
if ((${#missing[@]})); then
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		echo "${0##*/}: installing ${missing[*]}" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
			die "apt-get install ${missing[*]} failed"
	else
		die "${missing[*]} not installed (make test-deps, or apt-get install -y ${missing[*]})"
	fi
fi
CC=${CC:-cc}
command -v "$CC" >/dev/null || die "$CC not found: it builds the runner and the floor (set CC)"

# The disk under the repository: a dm or md device by its kernel name (dm-0), as /proc/diskstats has it.
if [[ -z ${DEV:-} ]]; then
	source=$(findmnt -n -o SOURCE -T "$repo" 2>/dev/null | head -n 1) || true
	source=${source%%\[*} # btrfs: /dev/sda2[/@subvolume]
	[[ $source == /dev/* ]] && DEV=$(basename "$(readlink -f "$source")")
fi
[[ -n ${DEV:-} ]] || die "no block device under $repo (set DEV to a name in /proc/diskstats)"
awk -v dev="$DEV" '$3 == dev { found = 1 } END { exit !found }' /proc/diskstats ||
	die "$DEV is not in /proc/diskstats (set DEV)"

work=$(mktemp -d "${TMPDIR:-/tmp}/iolens-stat-cpu.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

runner=$work/stat-cpu-run
floor=$work/stat-cpu-floor
"$CC" -O2 -Wall -o "$runner" "$repo/bench/stat-cpu-run.c" || die "cannot build bench/stat-cpu-run.c"
"$CC" -O2 -Wall -o "$floor" "$repo/bench/stat-cpu-floor.c" || die "cannot build bench/stat-cpu-floor.c"

# What each command of -cdngylmsp and of -x needs from /proc: the floor reads exactly these.
floor_files=(/proc/stat /proc/meminfo /proc/vmstat /proc/loadavg /proc/net/dev /proc/diskstats /proc/swaps)
floor_x_files=(/proc/diskstats)
dstat_disk=(-d -r -D "$DEV" --disk-util --disk-wait --disk-avgqu --disk-avgrq)

# set_argv NAME DELAY COUNT puts in $argv the command line of NAME taking COUNT samples DELAY apart.
# iostat -y prints COUNT intervals, the others COUNT lines of which the first is since boot: either
# way a run of COUNT has COUNT - 1 intervals more than a run of 1.
cpu_names=(iolens dstat floor iolens_x iostat_x dstat_disk floor_x)
set_argv() {
	case $1 in
	iolens) argv=("$IOLENS" stat -cdngylmsp --nocolor "$2" "$3") ;;
	dstat) argv=(dstat -cdngylmsp --nocolor "$2" "$3") ;;
	floor) argv=("$floor" "$2" "$3" "${floor_files[@]}") ;;
	iolens_x) argv=("$IOLENS" stat -x -D "$DEV" --nocolor "$2" "$3") ;;
	iostat_x) argv=(iostat -d -x -y "$DEV" "$2" "$3") ;;
	dstat_disk) argv=(dstat "${dstat_disk[@]}" --nocolor "$2" "$3") ;;
	floor_x) argv=("$floor" "$2" "$3" "${floor_x_files[@]}") ;;
	iolens_start) argv=("$IOLENS" stat -cdngylmsp --nocolor 1 1) ;;
	iolens_x_start) argv=("$IOLENS" stat -x -D "$DEV" --nocolor 1 1) ;;
	dstat_start) argv=(dstat -cdngylmsp --nocolor 1 1) ;;
	iostat_start) argv=(iostat -x 1 1) ;;
	true) argv=(/bin/true) ;;
	esac
}
describe() { local argv; set_argv "$@"; local text="${argv[*]/#"$IOLENS"/iolens}"; echo "${text//"$work"\//}"; }

# Starts NAME with COUNT samples under the runner in follow mode, its output read and thrown away;
# its pid in $started. Results go to $work/NAME.COUNT, one line a run.
start_run() {
	local name=$1 count=$2 argv
	set_argv "$name" "$DELAY" "$count"
	"$runner" -l "$work/$name.$count" "${argv[@]}" 2>>"$work/$name.err" &
	started=$!
}
wait_runs() { # NAME=PID ...
	local entry
	for entry in "$@"; do
		wait "${entry#*=}" || die "$(describe "${entry%%=*}" "$DELAY" "?") failed: $(tail -n 3 "$work/${entry%%=*}.err")"
	done
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) exit 1; printf "%.6f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# CPU ms a sample within runs: the readings 200 ms after each sample, (last - first) / intervals; median of the runs.
in_run_ms() { awk 'NF >= 5 { print ($NF - $4) / (NF - 4) / 1e6 }' "$1" | median; }
# CPU ms of whole runs (user + system), median.
total_ms() { awk '{ print ($2 + $3) / 1e3 }' "$1" | median; }
# The spread (max - min) of whole runs' CPU ms.
spread_ms() { awk '{ v = ($2 + $3) / 1e3; if (NR == 1 || v < lo) lo = v; if (NR == 1 || v > hi) hi = v } END { printf "%.6f", hi - lo }' "$1"; }
wall_ms() { awk '{ print $1 / 1e3 }' "$1" | median; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a > 0) printf "%.2fx", a / b; else printf "-" }'; }

built=""
[[ $IOLENS -ef $repo/iolens ]] && built=", tree $(git -C "$repo" describe --always --dirty 2>/dev/null || echo "not a git tree")"
echo "stat-cpu: iolens = $IOLENS ($("$IOLENS" --version 2>/dev/null | head -n 1)$built)," \
	"$(dstat --version 2>/dev/null | head -n 1 || true), $(iostat -V 2>&1 | head -n 1), $(nproc) cpus, kernel $(uname -r), disk $DEV"

failed=0 statuses=""
# judge GOAL FIGURE...: bench/verdict.py's verdict of GOAL on the rounds' FIGUREs in $verdict, its
# exit status added to $statuses.
judge() {
	local rc
	verdict=$(python3 "$repo/bench/verdict.py" "$@") && rc=0 || rc=$?
	[[ $rc == [013] ]] || die "bench/verdict.py failed: $verdict"
	statuses+=" $rc"
}

# ---- 4. Whole runs of -x against iostat -x ---------------------------------------------------
# What a person pays for `iolens stat -x 1 5` against `iostat -x 1 5`: the whole run's CPU (start-up
# and all, eBPF's load when it is asked for) and its memory; and a sample's CPU beyond the start.
x_names=(x_iolens x_iostat x_latency)
x_argv() { # NAME COUNT: the command line in $argv
	case $1 in
	x_iolens) argv=("$IOLENS" stat -x 1 "$2") ;;
	x_iostat) argv=(iostat -x 1 "$2") ;;
	x_latency) argv=("$IOLENS" stat -x --latency 1 "$2") ;;
	esac
}
x_whole_runs() {
	local run name argv entry pids
	echo
	echo "4. Whole runs: iolens stat -x 1 $X_COUNT against iostat -x 1 $X_COUNT (and iolens stat -x --latency, eBPF's"
	echo "   percentiles, for what they add), $X_RUNS rounds, the three side by side started 100 ms apart, output"
	echo "   to a pipe thrown away. CPU ms run: user + system of the whole run (wait4); ms a sample: the CPU"
	echo "   time (schedstat) read 200 ms after each sample, (last - first) / samples between, no start-up in"
	echo "   it; max RSS (wait4). Medians of the rounds."
	for ((run = 1; run <= X_RUNS; run++)); do
		pids=()
		for name in "${x_names[@]}"; do
			x_argv "$name" "$X_COUNT"
			"$runner" -l -m "$work/$name.x" "${argv[@]}" 2>>"$work/$name.err" &
			pids+=("$name=$!")
			sleep 0.1
		done
		for entry in "${pids[@]}"; do
			wait "${entry#*=}" || die "${entry%=*} failed: $(tail -n 3 "$work/${entry%=*}.err")"
		done
	done
	# One line a round: CPU ms of the whole run, max RSS KiB, CPU ms a sample beyond the start.
	for name in "${x_names[@]}"; do
		awk '{ printf "%.4f\n", ($2 + $3) / 1e3 }' "$work/$name.x" >"$work/$name.cpu"
		awk '{ print $NF }' "$work/$name.x" >"$work/$name.rss"
		# wall user sys reading... rss: COUNT - 1 readings (none after the last sample).
		awk 'NF >= 6 { printf "%.4f\n", ($(NF - 1) - $4) / (NF - 5) / 1e6 } NF < 6 { print "nan" }' \
			"$work/$name.x" >"$work/$name.sample"
	done
	printf '   %-11s %11s %13s %12s  %s\n' tool "CPU ms run" "ms a sample" "max RSS KiB" command
	for name in "${x_names[@]}"; do
		x_argv "$name" "$X_COUNT"
		printf '   %-11s %11.2f %13.3f %12.0f  %s\n' "${name#x_}" "$(median <"$work/$name.cpu")" \
			"$(grep -v nan "$work/$name.sample" | median)" "$(median <"$work/$name.rss")" "${argv[*]/#"$IOLENS"/iolens}"
	done
	# round_ratios KIND A B: each round's A / B of the figure KIND.
	round_ratios() { paste -d' ' "$work/$2.$1" "$work/$3.$1" | awk '{ if ($2 > 0) printf "%.4f ", $1 / $2; else printf "nan " }'; }
	echo "   ratios iolens / iostat of the medians: run $(ratio "$(median <"$work/x_iolens.cpu")" \
"$(median <"$work/x_iostat.cpu")") CPU, $(ratio "$(median <"$work/x_iolens.rss")" "$(median <"$work/x_iostat.rss")") max RSS;" \
		"with --latency $(ratio "$(median <"$work/x_latency.cpu")" "$(median <"$work/x_iostat.cpu")") CPU," \
		"$(ratio "$(median <"$work/x_latency.rss")" "$(median <"$work/x_iostat.rss")") max RSS"
	# shellcheck disable=SC2046 # one figure a round
	judge --format %.2f "<= $X_RUN_LIMIT" $(round_ratios cpu x_iolens x_iostat)
	printf '   limit: iolens stat -x 1 %s at most %sx iostat -x 1 %s'"'"'s CPU, each round'"'"'s own ratio: %s\n' \
		"$X_COUNT" "$X_RUN_LIMIT" "$X_COUNT" "$(sed '2,$s/^/   /' <<<"$verdict")"
	# shellcheck disable=SC2046 # one figure a round
	judge --format %.2f "<= $X_SAMPLE_LIMIT" $(round_ratios sample x_iolens x_iostat)
	printf '   limit: a sample beyond the start at most %sx iostat'"'"'s, each round'"'"'s own ratio: %s\n' \
		"$X_SAMPLE_LIMIT" "$(sed '2,$s/^/   /' <<<"$verdict")"
}
if [[ ${X_ONLY:-0} == 1 ]]; then
	x_whole_runs
	[[ $statuses != *3* ]] || failed=3
	[[ $statuses != *1* ]] || failed=1
	exit "$failed"
fi

# ---- 1. CPU per sample ---------------------------------------------------------------------
echo
echo "1. CPU time per sample, DELAY=$DELAY s: $REPEATS runs of $COUNT samples and $ONE_RUNS runs of 1 sample of each;"
echo "   the commands of a round run side by side, started 100 ms apart (so that their start-ups and samples"
echo "   do not overlap); their output goes to a pipe and is thrown away"
for ((run = 1; run <= REPEATS; run++)); do
	pids=()
	for name in "${cpu_names[@]}"; do
		start_run "$name" "$COUNT"
		pids+=("$name=$started")
		sleep 0.1
	done
	wait_runs "${pids[@]}"
done
for ((run = 1; run <= ONE_RUNS; run++)); do
	pids=()
	for name in "${cpu_names[@]}"; do
		start_run "$name" 1
		pids+=("$name=$started")
		sleep 0.1
	done
	wait_runs "${pids[@]}"
done

# Each run's CPU ms a sample, in the order run (one line a run).
per_run_ms() { awk 'NF >= 5 { printf "%.6f\n", ($NF - $4) / (NF - 4) / 1e6 }' "$1"; }
declare -A in_run runs runs_spread
for name in "${cpu_names[@]}"; do
	# Every run of COUNT samples has a reading after each sample but the last (after it, the end).
	few=$(awk -v least=$((COUNT - 1)) 'NF - 3 < least { n++ } END { print n + 0 }' "$work/$name.$COUNT")
	((few == 0)) || echo "   warning: $few runs of $(label "$name") have fewer than $((COUNT - 1)) readings" >&2
	in_run[$name]=$(in_run_ms "$work/$name.$COUNT") || die "$name: no readings between samples"
	runs[$name]=$(calc %.6f "($(total_ms "$work/$name.$COUNT") - $(total_ms "$work/$name.1")) / ($COUNT - 1)")
	runs_spread[$name]=$(calc %.6f "($(spread_ms "$work/$name.$COUNT") + $(spread_ms "$work/$name.1")) / 2 / ($COUNT - 1)")
done
above() { calc %.3f "${in_run[$1]} - ${in_run[$2]}"; }
label() {
	case $1 in
	iolens) echo "iolens" ;; dstat) echo "dstat" ;; floor) echo "floor" ;; iolens_x) echo "iolens -x" ;;
	iostat_x) echo "iostat -x" ;; dstat_disk) echo "dstat disk" ;; floor_x) echo "floor -x" ;;
	iolens_start) echo "iolens" ;; iolens_x_start) echo "iolens -x" ;; dstat_start) echo "dstat" ;;
	iostat_start) echo "iostat -x" ;; true) echo "true" ;;
	esac
}
floor_of() { if [[ $1 == *_x || $1 == dstat_disk ]]; then echo floor_x; else echo floor; fi; }
above_floor() { if [[ $1 == floor* ]]; then echo -; else above "$1" "$(floor_of "$1")"; fi; }

echo
echo "   in run: CPU time (/proc/PID/task/*/schedstat) read 200 ms after each sample, (last - first) / samples"
echo "           between, the median of the $REPEATS runs; no start-up in it."
echo "   N vs 1: (CPU of a run of N=$COUNT - CPU of a run of 1) / (N - 1), user + system from wait4, medians;"
echo "           +- is half the spread (max - min) of the runs of N plus that of the runs of 1, over N - 1:"
echo "           a start-up that varies by more than N - 1 samples cost (dstat's, python's) drowns it."
echo "   above floor: in run, minus the floor's in run (the wake-up and the kernel's cost of the same files)."
printf '   %-11s %9s %16s %12s  %s\n' tool "in run ms" "N vs 1 ms" "above floor" command
for name in "${cpu_names[@]}"; do
	printf '   %-11s %9.3f %8.3f +-%-5.3f %12s  %s\n' "$(label "$name")" "${in_run[$name]}" "${runs[$name]}" \
		"${runs_spread[$name]}" "$(above_floor "$name")" "$(describe "$name" "$DELAY" "$COUNT")"
done
echo
echo "   ratios, peer / iolens (above 1: iolens costs less):"
printf '   %-24s %9s %9s %12s\n' "" "in run" "N vs 1" "above floor"
for pair in dstat/iolens dstat_disk/iolens_x iostat_x/iolens_x; do
	peer=${pair%/*} own=${pair#*/} fl=$(floor_of "$own")
	printf '   %-24s %9s %9s %12s\n' "$(label "$peer") / $(label "$own")" "$(ratio "${in_run[$peer]}" "${in_run[$own]}")" \
		"$(ratio "${runs[$peer]}" "${runs[$own]}")" "$(ratio "$(above "$peer" "$fl")" "$(above "$own" "$fl")")"
done

echo
echo "   limit: iolens at most 1/$CPU_LIMIT_SHARE of dstat's CPU per sample, judged on \"in run\", each run's own iolens / dstat"
for pair in dstat/iolens dstat_disk/iolens_x; do
	peer=${pair%/*} own=${pair#*/} fl=$(floor_of "$own")
	limit=$(calc %.6f "${in_run[$peer]} / $CPU_LIMIT_SHARE")
	figures=$(paste -d' ' <(per_run_ms "$work/$own.$COUNT") <(per_run_ms "$work/$peer.$COUNT") |
		awk 'NF == 2 { if ($2 > 0) printf "%.5f ", $1 / $2; else printf "nan " }')
	# shellcheck disable=SC2086 # one figure a run
	judge "<= $(calc %.4f "1 / $CPU_LIMIT_SHARE")" $figures
	printf '   %-11s %.3f ms, medians: limit %.3f ms (%s %.3f / %s): %s\n' "$(label "$own")" "${in_run[$own]}" "$limit" \
		"$(label "$peer")" "${in_run[$peer]}" "$CPU_LIMIT_SHARE" "$(sed '2,$s/^/   /' <<<"$verdict")"
	if awk -v f="${in_run[$fl]}" -v l="$limit" 'BEGIN { exit !(f > l) }'; then
		printf '   %-11s the floor alone, %.3f ms, is above the limit: no program that reads these files every %s s meets it here\n' \
			"" "${in_run[$fl]}" "$DELAY"
	fi
done

# ---- 2. Start-up ---------------------------------------------------------------------------
start_names=(iolens_start iolens_x_start dstat_start iostat_start true)
echo
echo "2. Start-up: $STARTUP_RUNS rounds of one-sample runs (the first line is printed at once), output to"
echo "   /dev/null, the tools alternating; wall time from fork to wait4, CPU from wait4; medians"
for name in "${start_names[@]}"; do # warm-up: binaries and libraries in the page cache
	set_argv "$name"
	"$runner" "$work/warmup" "${argv[@]}" >/dev/null 2>&1 || die "$(describe "$name") failed"
done
for ((run = 1; run <= STARTUP_RUNS; run++)); do
	for name in "${start_names[@]}"; do
		set_argv "$name"
		"$runner" "$work/$name.start" "${argv[@]}" >/dev/null 2>>"$work/$name.err" ||
			die "$(describe "$name") failed: $(tail -n 3 "$work/$name.err")"
	done
done
printf '   %-11s %8s %8s %12s  %s\n' tool "wall ms" "CPU ms" "above true" command
true_wall=$(wall_ms "$work/true.start")
for name in "${start_names[@]}"; do
	wall=$(wall_ms "$work/$name.start")
	printf '   %-11s %8.2f %8.2f %12.2f  %s\n' "$(label "$name")" "$wall" "$(total_ms "$work/$name.start")" \
		"$(calc %.6f "$wall - $true_wall")" "$(describe "$name")"
done
printf '   ratios of wall time: dstat / iolens %s, iostat -x / iolens %s\n' \
	"$(ratio "$(wall_ms "$work/dstat_start.start")" "$(wall_ms "$work/iolens_start.start")")" \
	"$(ratio "$(wall_ms "$work/iostat_start.start")" "$(wall_ms "$work/iolens_start.start")")"
iolens_wall=$(wall_ms "$work/iolens_start.start")
# The rounds: the runs cut into fifths in the order made (fewer runs: one a round), each one's median wall ms.
fifths=$(awk '{ print $1 / 1e3 }' "$work/iolens_start.start" | python3 -c 'import statistics, sys
v = [float(x) for x in sys.stdin]
k = min(5, len(v))
print(" ".join("%.4f" % statistics.median(v[len(v) * i // k:len(v) * (i + 1) // k]) for i in range(k)))')
# shellcheck disable=SC2086 # one figure a round
judge --format %.2f "< $STARTUP_LIMIT_MS" $fifths
printf '   limit: iolens stat -cdngylmsp 1 1 under %s ms of wall time (median %.2f ms; each fifth of the runs'"'"' median): %s\n' \
	"$STARTUP_LIMIT_MS" "$iolens_wall" "$(sed '2,$s/^/   /' <<<"$verdict")"

# ---- 3. Instructions and syscalls per sample ------------------------------------------------
echo
echo "3. Counts per sample that do not depend on the load: (count of a run of N - count of a run of 1) / (N - 1)"
per_sample() { calc %.0f "($2 - $1) / ($3 - 1)"; }
if [[ ${CALLGRIND:-1} == 0 ]]; then
	echo "   callgrind skipped (CALLGRIND=0)"
elif ! command -v valgrind >/dev/null; then
	echo "   callgrind skipped: valgrind not found (apt-get install -y valgrind)"
else
	# instructions NAME DELAY COUNT: the user-space instructions (Ir) of the whole run.
	instructions() {
		local argv out=$work/callgrind.$1.$3
		set_argv "$1" "$2" "$3"
		valgrind --tool=callgrind --callgrind-out-file="$out" "${argv[@]}" >/dev/null 2>"$work/callgrind.$1.$3.log" ||
			die "valgrind $(describe "$1" "$2" "$3") failed: $(tail -n 3 "$work/callgrind.$1.$3.log")"
		awk '/^totals:/ { print $2; found = 1 } END { if (!found) exit 1 }' "$out" || die "no totals line in $out"
	}
	echo "   user-space instructions (valgrind --tool=callgrind; the kernel's work is not in them):"
	cg_names=(iolens iolens_x floor)
	[[ ${DSTAT_CALLGRIND:-1} == 0 ]] || cg_names+=(dstat)
	declare -A ir
	for name in "${cg_names[@]}"; do
		if [[ $name == dstat ]]; then delay=$DELAY count=$DSTAT_CALLGRIND_COUNT; else delay=$CALLGRIND_DELAY count=$CALLGRIND_COUNT; fi
		one=$(instructions "$name" "$delay" 1)
		many=$(instructions "$name" "$delay" "$count")
		ir[$name]=$(per_sample "$one" "$many" "$count")
		printf '   %-11s %12s a sample  (%s at start, run of 1)  %s\n' "$(label "$name")" "${ir[$name]}" "$one" "$(describe "$name" "$delay" "$count")"
	done
	[[ -z ${ir[dstat]:-} ]] || printf '   dstat / iolens: %s\n' "$(ratio "${ir[dstat]}" "${ir[iolens]}")"
	if [[ ${ANNOTATE:-0} == 1 ]] && command -v callgrind_annotate >/dev/null; then
		echo
		echo "   callgrind_annotate --inclusive=yes, $(describe iolens "$CALLGRIND_DELAY" "$CALLGRIND_COUNT"):"
		callgrind_annotate --inclusive=yes "$work/callgrind.iolens.$CALLGRIND_COUNT" 2>/dev/null |
			awk '/file:function/ { on = 1; next } on && NF' | head -n 30 | sed 's/^/   /'
	fi
fi

if [[ ${SYSCALLS:-1} == 0 ]]; then
	echo "   syscalls skipped (SYSCALLS=0)"
elif ! command -v perf >/dev/null || ! perf stat -e raw_syscalls:sys_enter -x, -o /dev/null /bin/true 2>/dev/null; then
	echo "   syscalls skipped: perf stat -e raw_syscalls:sys_enter does not work here"
else
	# Starts perf stat on NAME DELAY COUNT in the background; the count lands in $work/syscalls.NAME.COUNT.
	start_syscalls() {
		local argv
		set_argv "$1" "$2" "$3"
		perf stat -x, -e raw_syscalls:sys_enter -o "$work/syscalls.$1.$3" "${argv[@]}" >/dev/null 2>>"$work/$1.err" &
		started=$!
	}
	syscalls_of() { awk -F, '/raw_syscalls:sys_enter/ { print $1; found = 1 } END { if (!found) exit 1 }' "$work/syscalls.$1.$2"; }
	sc_names=(iolens dstat floor iolens_x iostat_x dstat_disk floor_x)
	declare -A sc_count sc_delay
	pids=()
	for name in "${sc_names[@]}"; do
		case $name in iolens | iolens_x | floor | floor_x) delay=$CALLGRIND_DELAY count=$CALLGRIND_COUNT ;; *) delay=$DELAY count=$DSTAT_CALLGRIND_COUNT ;; esac
		start_syscalls "$name" "$delay" 1
		pids+=("$name=$started")
		start_syscalls "$name" "$delay" "$count"
		pids+=("$name=$started")
		sc_count[$name]=$count sc_delay[$name]=$delay
	done
	wait_runs "${pids[@]}"
	echo "   syscalls (perf stat -e raw_syscalls:sys_enter):"
	for name in "${sc_names[@]}"; do
		one=$(syscalls_of "$name" 1) || die "no syscall count for $name"
		many=$(syscalls_of "$name" "${sc_count[$name]}") || die "no syscall count for $name"
		printf '   %-11s %6s a sample  (%s at start, run of 1)  %s\n' "$(label "$name")" \
			"$(per_sample "$one" "$many" "${sc_count[$name]}")" "$one" "$(describe "$name" "${sc_delay[$name]}" "${sc_count[$name]}")"
	done
fi
x_whole_runs
[[ $statuses != *3* ]] || failed=3
[[ $statuses != *1* ]] || failed=1
exit "$failed"
