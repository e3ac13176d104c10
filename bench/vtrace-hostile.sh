#!/usr/bin/env bash
# Times root's vtrace readers (vstat, export --once, doctor 1) without and with 100 segments another user made to stall them, and prints the difference and what the tmpfs used before and after.
set -uo pipefail

usage="usage: ${0##*/}
  Needs root. Mounts a tmpfs (its own, 1 GiB at most) as VTRACE_DIR, starts one real libvtrace
  server (vtload), and times each reader RUNS times (median): iolens vstat --json, iolens export
  --once and iolens doctor 1. Then, as nobody, makes 100 hostile segments beside it:
    2 held open, 1024 ops x 17 shards, every snapshot counter odd (the issue's stall: 85 s before)
    8 held open, 64 ops x 64 shards, every snapshot counter odd
    10 held open, 1024 ops x 64 shards, sparse (only their heads written)
    80 nobody holds, with the names of other pids, sparse
  and times the readers again, reading the tmpfs's usage (df) before and after each, and each
  reader's peak memory (VmHWM) with them.
  Exit status 1 when a reader takes more than a second longer with them, or the tmpfs grew.
env: IOLENS (default ./iolens), RUNS (default 3)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
[[ $# -eq 0 ]] || { echo "$usage" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "${0##*/}: needs root (the hostile user is nobody, the tmpfs is mounted)" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
RUNS=${RUNS:-3}
BUILD=${BUILD:-$repo/build}
make -s -C "$repo" all "$BUILD/tests/helpers/vtload" "$BUILD/tests/helpers/vtforge" >/dev/null || exit 1
VTLOAD=$BUILD/tests/helpers/vtload VTFORGE=$BUILD/tests/helpers/vtforge

work=$(mktemp -d "${TMPDIR:-/tmp}/vtrace-hostile.XXXXXX")
chmod 755 "$work"
export VTRACE_DIR=$work/shm
mkdir "$VTRACE_DIR"
mount -t tmpfs -o size=1g,mode=1777 vtrace-hostile "$VTRACE_DIR" || exit 1
mkfifo "$work/hold"
exec {keep}<>"$work/hold" # the held segments live until this, their stdin's only writer, closes
held=()
cleanup() {
	exec {keep}>&-
	for p in "${held[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	umount -l "$VTRACE_DIR"
	rm -rf "$work"
}
trap cleanup EXIT

nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
ms() { echo $(( $(date +%s%N) / 1000000 )); }
used() { df --output=used -B1 "$VTRACE_DIR" | tail -1 | tr -d ' '; }
# median_ms CMD...: the median wall time of RUNS runs, in ms; GREW is set when the tmpfs grew in
# any; PEAK_KB is the largest peak resident memory of the runs (from the last status line of the
# process, read by a watcher while it runs: VmHWM).
median_ms() {
	local times=() t0 before pid hwm
	PEAK_KB=0
	for _ in $(seq "$RUNS"); do
		before=$(used)
		t0=$(ms)
		timeout 300 "$@" >/dev/null 2>&1 &
		pid=$!
		while kill -0 "$pid" 2>/dev/null; do
			hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$(pgrep -P "$pid" | head -1)/status" 2>/dev/null)
			[[ -n $hwm && $hwm -gt $PEAK_KB ]] && PEAK_KB=$hwm
			sleep 0.01
		done
		wait "$pid"
		times+=($(( $(ms) - t0 )))
		[[ $(used) -gt $before ]] && GREW="$GREW ${1##*/} ${2:-}"
	done
	printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
}

mkfifo "$work/load.in"
"$VTLOAD" real OPA OPB < "$work/load.in" > "$work/load.out" &
held+=($!)
exec {load}>"$work/load.in"
echo "run OPA 1000" >&$load

readers=("vstat --json" "export --once" "doctor 1")
declare -A without with
GREW=
for r in "${readers[@]}"; do median_ms "$IOLENS" $r > "$work/t"; without[$r]=$(cat "$work/t"); done

hold() { "${nobody[@]}" "$VTFORGE" "$@" --hold <"$work/hold" >/dev/null {keep}>&- & held+=($!); }
for i in 1 2; do hold "$VTRACE_DIR/vtrace.odd$i.%p" --service odd$i --ops 1024 --shards 17 --odd; done
for i in $(seq 8); do hold "$VTRACE_DIR/vtrace.oddsmall$i.%p" --service oddsmall$i --ops 64 --shards 64 --odd; done
for i in $(seq 10); do hold "$VTRACE_DIR/vtrace.sparse$i.%p" --service sparse$i --ops 1024 --shards 64 --sparse; done
for i in $(seq 80); do "${nobody[@]}" "$VTFORGE" "$VTRACE_DIR/vtrace.h$i.$((200000 + i))" --service h$i --ops 1024 --shards 64 --sparse; done
for _ in $(seq 600); do [[ $(ls "$VTRACE_DIR" | wc -l) -ge 101 ]] && break; sleep 0.1; done
sleep 1 # the held ones finish writing their counters
live=$("$IOLENS" vstat --json 2>/dev/null | python3 -c 'import json,sys; print(sum(s["state"] == "live" for s in json.load(sys.stdin)["services"]))')
echo "hostile segments: $(( $(ls "$VTRACE_DIR" | wc -l) - 1 )) ($(( live - 1 )) of them live), tmpfs used $(( $(used) / 1048576 )) MiB"

status=0
GREW=
printf '%-16s %12s %12s %10s %12s\n' reader "without/ms" "with/ms" "more/ms" "peak/MiB"
for r in "${readers[@]}"; do
	median_ms "$IOLENS" $r > "$work/t"
	with[$r]=$(cat "$work/t")
	more=$(( ${with[$r]} - ${without[$r]} ))
	printf '%-16s %12d %12d %10d %12d%s\n' "$r" "${without[$r]}" "${with[$r]}" "$more" $(( PEAK_KB / 1024 )) \
		"$([[ $more -gt 1000 ]] && echo '  MORE THAN 1 s')"
	[[ $more -gt 1000 ]] && status=1
done
if [[ -n $GREW ]]; then
	echo "tmpfs usage grew while read by:$GREW"
	status=1
else
	echo "tmpfs usage: unchanged by every reader run"
fi
exit $status
