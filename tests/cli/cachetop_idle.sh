#!/usr/bin/env bash
# cachetop_idle.sh: cachetop's rows are of what counted pages in the interval, as bcc's: a sleep the test started (idle, yet running) has no row piped, in plain rows or JSON, and has one of 0s with -a (--all); a reader the test makes read a cached file of N pages has its row, its hits and misses adding up to N; by eBPF and without it (IOLENS_CACHE_MECHANISM=procfs, /proc/PID/io).
. "$(dirname "$0")/lib.sh"

N=256 # pages of the file the reader reads, whole, once
make_file "$T/f" $((N * PAGE))
sync "$T/f"
cat "$T/f" >/dev/null

sleep 100000 &
IDLE=$!
on_exit "kill $IDLE 2>/dev/null"

# plain_pages FILE PID: the HITS and MISSES of PID's rows of plain rows FILE, summed over its intervals,
# and how many rows it had.
plain_pages() { awk -v pid="$2" '$1 == pid && $4 ~ /^[0-9]+$/ { pages += $4 + $5; rows++ } END { print pages + 0, rows + 0 }' "$1"; }
# json_pages FILE PID: the same of JSON lines.
json_pages() {
	python3 -c 'import json, sys
rows = [r for l in open(sys.argv[1]).read().splitlines() for r in json.loads(l)["processes"] if r["pid"] == int(sys.argv[2])]
print(sum(r["hits"] + r["misses"] for r in rows), len(rows))' "$@"
}
# json_idle_rows FILE: the rows of JSON lines FILE whose counts are all 0.
json_idle_rows() {
	python3 -c 'import json, sys
keys = ("hits", "misses", "dirties", "accesses", "reads", "maps", "write_misses", "evictions", "refaults")
print(sum(1 for l in open(sys.argv[1]).read().splitlines() for r in json.loads(l)["processes"]
          if not any(r[k] for k in keys)))' "$1"
}
# read_all FILE PID: PID's pages in FILE are the reader's N.
read_all() { [ "$(plain_pages "$1" "$2" | cut -d' ' -f1)" = "$N" ]; }
json_read_all() { [ "$(json_pages "$1" "$2" | cut -d' ' -f1)" = "$N" ]; }

MODES=(procfs)
if why=$(ebpf_expected); then MODES=(ebpf procfs); else skip "by eBPF: $why"; fi
for mode in "${MODES[@]}"; do
	env=()
	[ "$mode" = ebpf ] || env=(IOLENS_CACHE_MECHANISM=procfs)
	# The reader: started (its interpreter's own reads done before cachetop starts), says so on a
	# FIFO, then waits on another (reading no page) until told to read the file; then waits again
	# until told to end.
	rm -f "$T/ready" "$T/go" "$T/end"
	mkfifo "$T/ready" "$T/go" "$T/end"
	python3 -c 'import os, sys
with open(sys.argv[1] + "/ready", "w") as ready:
    ready.write("%d\n" % os.getpid())
open(sys.argv[1] + "/go").read()
fd = os.open(sys.argv[1] + "/f", os.O_RDONLY)
while os.read(fd, 1 << 20):
    pass
os.close(fd)
open(sys.argv[1] + "/end").read()' "$T" &
	job=$!
	read -r reader <"$T/ready"
	on_exit "kill $reader 2>/dev/null"
	env "${env[@]}" "$IOLENS" cachetop 0.3 >"$T/$mode.plain" 2>"$T/$mode.plain.err" &
	tops=$!
	env "${env[@]}" "$IOLENS" cachetop -a 0.3 >"$T/$mode.all" 2>"$T/$mode.all.err" &
	tops+=" $!"
	env "${env[@]}" "$IOLENS" cachetop --json 0.3 >"$T/$mode.json" 2>"$T/$mode.json.err" &
	tops+=" $!"
	for f in plain all; do wait_until grep -q "Order: descending" "$T/$mode.$f"; done
	wait_until lines_at_least "$T/$mode.json" 1
	echo go >"$T/go"
	wait_until read_all "$T/$mode.plain" "$reader"
	wait_until read_all "$T/$mode.all" "$reader"
	wait_until json_read_all "$T/$mode.json" "$reader"
	# The idle process: an interval printed after the reads ended, by each.
	wait_until grep -qE "^$IDLE +" "$T/$mode.all"
	kill -INT $tops
	for pid in $tops; do wait "$pid"; done
	echo end >"$T/end"
	wait "$job"

	read -r pages rows < <(plain_pages "$T/$mode.plain" "$reader")
	check_eq "[$mode] piped: the reader has its row, its hits and misses its $N pages" "$N" "$pages"
	check_eq "[$mode] … and the sleep started, idle but running, has none" "" "$(grep -E "^$IDLE " "$T/$mode.plain")"
	check_match "[$mode] -a: the sleep has its row, of 0s" "^$IDLE +[^ ]+ +sleep +0 +0 +0 +- +- +(0|-)( |$)" "$(cat "$T/$mode.all")"
	read -r pages rows < <(plain_pages "$T/$mode.all" "$reader")
	check_eq "[$mode] … the reader its $N pages" "$N" "$pages"
	read -r pages rows < <(json_pages "$T/$mode.json" "$reader")
	check_eq "[$mode] --json: the reader's row, its $N pages" "$N" "$pages"
	read -r pages rows < <(json_pages "$T/$mode.json" "$IDLE")
	check_eq "[$mode] … no row of the sleep" 0 "$rows"
	check_eq "[$mode] … nor any row all 0" 0 "$(json_idle_rows "$T/$mode.json")"
done
echo "1..$t_count"
