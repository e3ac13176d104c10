#!/usr/bin/env bash
# Measures what a running iolens doctor costs the rest of the machine: a program making system calls back to back (dd bs=1: a read and a write a byte), with no doctor, with doctor watching (its O_DIRECT opens are seen by eBPF on the raw syscall tracepoints), and with doctor --disable odirect; alternating, medians, ratios and ns per system call against no doctor.
set -euo pipefail

usage="usage: ${0##*/} [--calls N] [--rounds N]
  ROUNDS times (default 5), the configurations alternating (which goes first moves on by one every
  round), times dd if=/dev/zero of=/dev/null bs=1 count=N/2 (N system calls, default 2000000):
    none       no doctor
    doctor     iolens doctor 600, started before and stopped after (SIGINT)
    no-odirect iolens doctor --disable odirect 600: no eBPF program on the system calls
  A doctor is let attach before dd starts (its programs are listed by bpftool with its pid, or
  2 s pass when bpftool is missing). Prints the median wall seconds of each, the ratio to none and
  the cost per system call in ns, then each round's own ratio and their spread ((max - min) /
  median). No goal: no verdict. Needs root (eBPF). About a minute with the defaults.
env: IOLENS (default ./iolens of this repository), CALLS, ROUNDS; the options win."
calls=${CALLS:-2000000} rounds=${ROUNDS:-5}
while [ $# -gt 0 ]; do
	case $1 in
	--calls) calls=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	-h|--help) echo "$usage"; exit 0 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
IOLENS=${IOLENS:-$(cd "$(dirname "$0")/.." && pwd)/iolens}
[ "$(id -u)" = 0 ] || { echo "${0##*/}: needs root (doctor's eBPF)" >&2; exit 1; }
[ -x "$IOLENS" ] || { echo "${0##*/}: $IOLENS: not built (make)" >&2; exit 1; }

doctor_pid=
stop_doctor() {
	if [ -n "$doctor_pid" ]; then kill -INT "$doctor_pid" 2>/dev/null; wait "$doctor_pid" 2>/dev/null || true; fi
	doctor_pid=
}
trap stop_doctor EXIT
start_doctor() {
	"$IOLENS" doctor --no-config "$@" 600 >/dev/null 2>&1 &
	doctor_pid=$!
	if command -v bpftool >/dev/null; then
		for _ in $(seq 200); do bpftool prog show 2>/dev/null | grep -q "iolens($doctor_pid)" && break; sleep 0.05; done
		sleep 0.3 # its programs listed: the last of them attaching
	else
		sleep 2
	fi
}
run_dd() { # seconds of wall time
	local t0 t1
	t0=$(date +%s%N)
	dd if=/dev/zero of=/dev/null bs=1 count=$((calls / 2)) status=none
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }'
}
configs=(none doctor no-odirect)
declare -A times
for ((r = 0; r < rounds; r++)); do
	for ((k = 0; k < ${#configs[@]}; k++)); do
		c=${configs[$(((k + r) % ${#configs[@]}))]}
		case $c in
		doctor) start_doctor ;;
		no-odirect) start_doctor --disable odirect ;;
		esac
		times[$c]+="$(run_dd) "
		stop_doctor
	done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
base=$(median <<<"${times[none]}")
printf '%-11s %9s %7s %12s   (%d system calls, median of %d rounds)\n' config seconds ratio "ns/syscall" "$calls" "$rounds"
for c in "${configs[@]}"; do
	m=$(median <<<"${times[$c]}")
	awk -v c="$c" -v m="$m" -v b="$base" -v n="$calls" 'BEGIN { printf "%-11s %9.3f %7.2f %12.1f\n", c, m, m / b, (m - b) * 1e9 / n }'
done
# No goal here (what it costs, not a limit): each round's own ratio and their spread, so that a
# reader sees whether the rounds agree (bench/verdict.py's spread, (max - min) / median).
echo "each round's ratio to none (its runs a few seconds apart), and their spread:"
for c in doctor no-odirect; do
	ratios=$(paste -d' ' <(tr ' ' '\n' <<<"${times[$c]}" | grep .) <(tr ' ' '\n' <<<"${times[none]}" | grep .) |
		awk '{ printf "%.3f ", $1 / $2 }')
	printf '  %-11s %s(spread %s)\n' "$c" "$ratios" "$(python3 -c 'import sys
sys.path.insert(0, sys.argv[1])
import verdict
print("%.1f %%" % (100 * verdict.spread([float(x) for x in sys.argv[2:]])))' "$(dirname "$0")" $ratios)"
done
