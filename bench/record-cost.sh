#!/usr/bin/env bash
# Measures what the flight recorder costs beside the collectors people keep running to look back: sysstat's sadc (sar's, with the disks) and atop -w; CPU time and bytes for the same samples, both per day at 10 s; and how long looking back at a day takes (iolens stat -x --from and doctor --from over a day of frames made from the store's).
set -euo pipefail

usage="usage: ${0##*/} [--samples N] [--interval S] [--doctor] [--busy N]
  Runs side by side, for N samples (default 60) every S seconds (default 1: an hour's 360 samples
  of the usual 10 s take a minute):
    iolens  iolens record --count N S                 (with --doctor: iolens record --doctor)
    sadc    /usr/lib/sysstat/sadc -S XDISK S N FILE   (sar -d's disks and partitions)
    atop    atop -w FILE S N
  With --busy N, a load runs beside them all along, as a build or a CI machine makes one: N short
  jobs a second, each a shell of its own that writes a temporary file of 256 KiB to the disk (dd,
  synced, then dropped from the page cache), reads it back (cat, from the disk) and deletes it;
  each collector's cost is then what such a machine pays (iolens keeps each process's reads and
  names the files that missed; atop looks at each process).
  Prints each one's CPU seconds (user + system, GNU time), bytes written, both per sample and
  per day at one sample every 10 s, and iolens's ratios to the peers; with --doctor, also a
  window's CPU after the eBPF programs' one load (the recorder's and its children's, read from
  /proc after two intervals and two before the end, sadc's over the same time), as an hour
  would see it. Then makes a day of frames (8640) from the store's (copied again and
  again, later each time: tests/helpers/restamp) and times iolens stat -x --from over it; with
  --doctor, doctor --from too. Goals (issue 35): CPU at most sadc's, bytes a day at most
  atop's, a day looked back at in a few seconds.
env: IOLENS (default ./iolens of this repository), SAMPLES, INTERVAL; the options win."
samples=${SAMPLES:-60} interval=${INTERVAL:-1} doctor= busy=0
while [ $# -gt 0 ]; do
	case $1 in
	--samples) samples=$2; shift 2 ;;
	--interval) interval=$2; shift 2 ;;
	--doctor) doctor=--doctor; shift ;;
	--busy) busy=$2; shift 2 ;;
	-h|--help) echo "$usage"; exit 0 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
IOLENS=${IOLENS:-$(cd "$(dirname "$0")/.." && pwd)/iolens}
SADC=/usr/lib/sysstat/sadc
[ -x "$IOLENS" ] || { echo "${0##*/}: $IOLENS: not built (make)" >&2; exit 1; }
for tool in "$SADC" atop /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "${0##*/}: $tool: not installed (make test-deps)" >&2; exit 1; }
done
T=$(mktemp -d)
load=
trap '[ -z "$load" ] || kill "$load" 2>/dev/null; rm -rf "$T"' EXIT
case $busy in ''|*[!0-9]*) echo "$usage" >&2; exit 2 ;; esac
if [ "$busy" -gt 0 ]; then
	mkdir "$T/busy"
	( i=0; while :; do
		for ((j = 0; j < busy; j++)); do
			bash -c 'dd if=/dev/zero of="$1" bs=256k count=1 conv=fdatasync status=none
				dd if="$1" iflag=nocache count=0 status=none; cat "$1" >/dev/null; rm -f "$1"' _ "$T/busy/f$((i++))"
		done
		sleep 1
	done ) &
	load=$!
fi

# A process's CPU time in ns so far with its children's: their threads running (schedstat), and the
# children they reaped (cutime and cstime, in clock ticks).
cpu_ns() {
	local pid=$1 ns=0 kid task
	for kid in $pid $(pgrep -P "$pid"); do
		for task in /proc/$kid/task/*/schedstat; do
			ns=$((ns + $(cut -d ' ' -f 1 "$task" 2>/dev/null || echo 0)))
		done
		ns=$(awk -v ns=$ns -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%d", ns + ($14 + $15) * 1e9 / hz }' \
			"/proc/$kid/stat" 2>/dev/null || echo $ns)
	done
	echo $ns
}
begin=$(date +%s) windows=
/usr/bin/time -f "%U %S" -o "$T/iolens.time" "$IOLENS" record $doctor --dir "$T/store" --count "$samples" "$interval" \
	2>"$T/iolens.err" &
timer=$!
/usr/bin/time -f "%U %S" -o "$T/sadc.time" "$SADC" -S XDISK "$interval" "$samples" "$T/sa" 2>"$T/sadc.err" &
sadc_timer=$!
/usr/bin/time -f "%U %S" -o "$T/atop.time" atop -w "$T/atop.raw" "$interval" "$samples" >/dev/null 2>"$T/atop.err" &
atop_timer=$!
# With --doctor, the CPU of the windows after the first two (the first: the eBPF programs' load),
# over whole intervals timed by the clock, not by polling the store: a process started at each look
# (iolens record --list, even sleep) would be a process the recorder watches start, read and end,
# and accounts for.
if [ -n "$doctor" ] && [ "$samples" -gt 5 ]; then
	child() {
		local kid=
		while [ -z "$kid" ] && kill -0 "$1" 2>/dev/null; do kid=$(pgrep -P "$1" || true); sleep 0.05; done
		echo "$kid"
	}
	recorder=$(child $timer) sadc=$(child $sadc_timer)
	sleep $((2 * interval))
	t0=$(date +%s%N) from="$(cpu_ns "$recorder") $(cpu_ns "$sadc")"
	sleep $(((samples - 4) * interval))
	t1=$(date +%s%N) to="$(cpu_ns "$recorder") $(cpu_ns "$sadc")"
	windows=$(awk -v ns=$((t1 - t0)) -v i="$interval" 'BEGIN { printf "%.2f", ns / 1e9 / i }')
fi
wait "$timer" "$sadc_timer" "$atop_timer" # (not the load, which runs until the end)

cpu() { awk '{ printf "%.3f", $1 + $2 }' "$T/$1.time"; }
bytes() { du -sb "$1" | cut -f 1; }
printf '%-8s %12s %12s %14s %14s\n' tool "CPU s" bytes "CPU s/day" "MB/day"
for tool in iolens sadc atop; do
	case $tool in iolens) b=$(bytes "$T/store") ;; sadc) b=$(bytes "$T/sa") ;; atop) b=$(bytes "$T/atop.raw") ;; esac
	c=$(cpu $tool)
	eval "${tool}_cpu=$c ${tool}_bytes=$b"
	awk -v t=$tool -v c="$c" -v b="$b" -v n="$samples" \
		'BEGIN { printf "%-8s %12.3f %12d %14.1f %14.1f\n", t, c, b, c / n * 8640, b / n * 8640 / 1e6 }'
done
awk -v ic="$iolens_cpu" -v sc="$sadc_cpu" -v ib="$iolens_bytes" -v ab="$atop_bytes" 'BEGIN {
	if (sc > 0) printf "iolens/sadc CPU: %.2f (goal: at most 1)\n", ic / sc
	else print "iolens/sadc CPU: sadc took less than the 10 ms that time(1) counts in"
	printf "iolens/atop bytes: %.2f (goal: at most 1)\n", (ab > 0 ? ib / ab : 0) }'
# With --doctor the eBPF programs are loaded once (half a second or more): what each window costs
# after it, as an hour's run would see it, is the run less one of a single window, alone.
if [ -n "$windows" ]; then
	awk -v from="$from" -v to="$to" -v w="$windows" 'BEGIN {
		split(from, a, " "); split(to, b, " ")
		c = (b[1] - a[1]) / 1e9 / w; s = (b[2] - a[2]) / 1e9 / w
		printf "iolens --doctor after its start: %.4f CPU s a window (%.1f windows), sadc %.4f a sample: %.1fx\n",
			c, w, s, (s > 0 ? c / s : 0) }'
fi

# Looking back at a day: the store's frames written again and again, each copy later than the last
# (tests/helpers/restamp, made here if need be), until it holds a day of them at 10 s (8640),
# played back whole through stat -x and, with --doctor, judged by doctor --from.
RESTAMP=$(dirname "$IOLENS")/build/tests/helpers/restamp
[ -x "$RESTAMP" ] || make -s -C "$(dirname "$IOLENS")" build/tests/helpers/restamp >/dev/null 2>&1 ||
	{ echo "${0##*/}: $RESTAMP: not built (make check builds it)" >&2; exit 1; }
span=$(( $(date +%s) - begin + 10 ))
"$RESTAMP" --repeat $(( (8640 + samples - 1) / samples )) "$span" "$T/store" "$T/day" >/dev/null
to=@$(( begin + span * ((8640 + samples - 1) / samples) + 60 ))
t0=$(date +%s%N)
lines=$("$IOLENS" stat -x --json --record-dir "$T/day" --from "@$begin" --to "$to" 0.01 2>/dev/null | wc -l)
t1=$(date +%s%N)
awk -v f="$lines" -v ns=$((t1 - t0)) 'BEGIN {
	if (f < 1) { print "replay: no line"; exit 1 }
	printf "stat -x --from a day: %d lines in %.2f s (%.2f ms a frame; goal: a few seconds)\n", f, ns / 1e9, ns / 1e6 / f }'
if [ -n "$doctor" ]; then
	t0=$(date +%s%N)
	"$IOLENS" doctor --json --record-dir "$T/day" --from "@$begin" --to "$to" >"$T/doctor.json" 2>/dev/null || true
	t1=$(date +%s%N)
	judged=$(python3 -c 'import json, sys; print(round(json.load(sys.stdin)["seconds"] / float(sys.argv[1])))' \
		"$interval" <"$T/doctor.json" 2>/dev/null || echo "?")
	awk -v w="$judged" -v ns=$((t1 - t0)) 'BEGIN {
		printf "doctor --from a day: about %s windows judged in %.2f s (goal: a few seconds)\n", w, ns / 1e9 }'
fi
