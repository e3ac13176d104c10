#!/usr/bin/env bash
# stat_latency_slots.sh: stat --latency's per-disk histograms take locked memory for the disks the machine has (those of /sys/block and 8 more, at most 32), not for 32 whatever: the maps' sizes as the kernel reports them (bpftool, by the map ids in iolens's fdinfo), and two loop devices read in one interval, each timed when there are slots, only one when there is one (IOLENS_BIO_DISKS=1), their counts held to the reads the test made (/proc/diskstats).
. "$(dirname "$0")/lib.sh"

why=$(bio_expected)
[ -z "$why" ] || skip_all "latencies by eBPF: $why"
command -v bpftool >/dev/null || skip_all "needs bpftool (make test-deps)"
command -v losetup >/dev/null || skip_all "needs losetup"

# map_entries PID NAME...: max_entries of each map NAME the process PID holds, as the kernel says
# (the ids in its fdinfo, looked up in one listing of bpftool's).
map_entries() {
	local pid=$1 fd ids=
	shift
	for fd in /proc/"$pid"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf-map" ] &&
			ids="$ids $(awk '/^map_id:/ { print $2 }' "/proc/$pid/fdinfo/${fd##*/}" 2>/dev/null)"
	done
	bpftool map show -j 2>/dev/null | python3 -c 'import json, sys
ids = set(int(i) for i in sys.argv[1].split())
size = {m["name"]: m["max_entries"] for m in json.load(sys.stdin) if m["id"] in ids}
print(" ".join(str(size.get(n, "none")) for n in sys.argv[2:]))' "$ids" "$@"
}

truncate -s 16M "$T/a.img" "$T/b.img"
a=$(loop_attach_apart "$T/a.img") || skip_all "no free loop device"
on_exit "loop_release $a $T/a.img"
b=$(loop_attach_apart "$T/b.img") || skip_all "no free loop device"
on_exit "loop_release $b $T/b.img"
a=${a#/dev/} b=${b#/dev/}

# run_interval: stat -x --latency over one interval (8 s, after its line since boot, printed once
# the program is loaded) during which the test reads 64 blocks of 4 KiB from each loop device
# with O_DIRECT; its lines in $T/lat.json, the maps' sizes in ENTRIES, the reads /proc/diskstats
# counted in READS_A and READS_B.
run_interval() {
	"$IOLENS" stat --json -x --latency -D "$a,$b" 8 2 >"$T/lat.json" 2>"$T/lat.err" &
	local stat=$! ra rb
	wait_until lines_at_least "$T/lat.json" 1
	ENTRIES=$(map_entries $stat latency latency_sum)
	ra=$(diskstats_sum "$a" 4) rb=$(diskstats_sum "$b" 4)
	dd if="/dev/$a" of=/dev/null bs=4k count=64 iflag=direct status=none
	dd if="/dev/$b" of=/dev/null bs=4k count=64 iflag=direct status=none
	READS_A=$(($(diskstats_sum "$a" 4) - ra)) READS_B=$(($(diskstats_sum "$b" 4) - rb))
	wait $stat
}
# counts: the r_lat_count of a, then of b, in the interval's line.
counts() { python3 -c 'import json, sys
line = json.loads(open(sys.argv[1]).read().splitlines()[1])
print(" ".join(str(line["dskext_" + d]["r_lat_count"]) for d in sys.argv[2:]))' "$T/lat.json" "$a" "$b"; }

disks=$(ls /sys/block | wc -l)
want=$((disks + 8 > 32 ? 32 : disks + 8))
run_interval
check_eq "--latency: the maps hold the $disks disks of /sys/block and 8 more, at most 32, 12 histograms each (bpftool)" \
	"$((want * 12)) $((want * 12))" "$ENTRIES"
check_eq "… each loop device's 64 reads timed, as /proc/diskstats counted them" "$READS_A $READS_B" "$(counts)"

IOLENS_BIO_DISKS=1 run_interval
check_eq "IOLENS_BIO_DISKS=1: one disk's 12 histograms (bpftool)" "12 12" "$ENTRIES"
read -r ca cb <<<"$(counts)"
# The one slot goes to the first disk with a request: another of the machine's, or one of the two.
check "… at most one of the two timed, and that one whole ($ca of $READS_A, $cb of $READS_B)" \
	test "$((ca == 0 || cb == 0))" = 1 -a "$((ca == 0 || ca == READS_A))" = 1 -a "$((cb == 0 || cb == READS_B))" = 1

echo "1..$t_count"
