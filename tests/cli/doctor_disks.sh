#!/usr/bin/env bash
# doctor_disks.sh: doctor's snapshot keeps the disks it may judge and leaves out the idle ones (a machine's unused loop devices are dozens): a disk read during the window is in it with the reads /proc/diskstats counted, one read with its statistics off (eBPF timing its reads) is, one with a request stuck in flight is in it however little it completes, one that did nothing (its /proc/diskstats line the same before and after) is not.
. "$(dirname "$0")/lib.sh"

is_root || skip_all "loop devices need root"
command -v losetup >/dev/null || skip_all "no losetup"
case "$(fs_type "$T")" in
tmpfs|ramfs) skip_all "the scratch directory is on $(fs_type "$T"): no direct I/O for a loop device over it" ;;
esac

truncate -s 16M "$T/idle.img" "$T/busy.img" "$T/quiet.img"
IDLE=$(losetup -f --show "$T/idle.img") || skip_all "losetup failed"
on_exit "loop_release $IDLE $T/idle.img"
BUSY=$(losetup -f --show --direct-io=on "$T/busy.img") || skip_all "losetup failed"
on_exit "loop_release $BUSY $T/busy.img"
# One whose queue keeps no statistics (iostats 0): /proc/diskstats never moves; eBPF times its reads.
QUIET=$(losetup -f --show --direct-io=on "$T/quiet.img") || skip_all "losetup failed"
# (the loop device outlives its file, and its queue's settings with it: given back before it is
# let go, or the next test to get it sees its reads counted nowhere)
on_exit "echo 1 >/sys/block/${QUIET#/dev/}/queue/iostats; loop_release $QUIET $T/quiet.img"
echo 0 >"/sys/block/${QUIET#/dev/}/queue/iostats"
# A device whose reads take 60 s each once SIGUSR2 turns them slow (FUSE below a loop device): one
# stays in flight for all of a window however slow the machine (the server's end ends it).
slow_device "$T/slow" 1M --slow-op FUSE_READ:60000 || skip_all "$SLOW_WHY"

counters() { awk -v d="${1#/dev/}" '$3 == d { $1 = $2 = ""; print }' /proc/diskstats; }
inflight() { awk -v d="${1#/dev/}" '$3 == d { print $12 }' /proc/diskstats; }
stuck() { [ "$(inflight "$SLOW_LOOP")" -ge 1 ] 2>/dev/null; }

kill -USR2 "$SLOW_SERVER"
# (a read that came as the server took the signal may not be slowed: another one, then)
STUCK=()
on_exit 'kill "${STUCK[@]}" 2>/dev/null'
for try in 1 2 3; do
	dd if="$SLOW_LOOP" of=/dev/null bs=4k count=1 skip=$((100 + try)) iflag=direct 2>/dev/null &
	STUCK+=($!)
	wait_until 10 stuck && break
done
check "a read stuck on ${SLOW_LOOP#/dev/} (/proc/diskstats' in flight: $(inflight "$SLOW_LOOP"); $(tail -c 200 "$T/slow/fpt.log"))" \
	stuck
idle_before=$(counters "$IDLE") busy_before=$(counters "$BUSY") quiet_before=$(counters "$QUIET")
timeout 60 bash -c 'while :; do dd if="$1" of=/dev/null bs=4k count=64 iflag=direct 2>/dev/null;
	dd if="$2" of=/dev/null bs=4k count=64 iflag=direct 2>/dev/null; sleep 0.05; done' _ "$BUSY" "$QUIET" &
READER=$!
on_exit "kill $READER 2>/dev/null"
run "$IOLENS" doctor --no-config --json --record "$T/snap" 2
kill "$READER"
wait "$READER" 2>/dev/null
idle_after=$(counters "$IDLE") busy_after=$(counters "$BUSY") quiet_after=$(counters "$QUIET")
check "doctor ran: exit 0, 3 or 4 ($RC; $(head -c 200 <<<"$ERR"))" test "$RC" -eq 0 -o "$RC" -eq 3 -o "$RC" -eq 4

# disk NAME: its samples in the snapshot, "start|mid|end FIELDS..." (FIELDS: /proc/diskstats' after the name).
disk() { python3 - "$T/snap" "${1#/dev/}" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1])]
for i, l in enumerate(lines):
    if l[:2] == ["disk", sys.argv[2]]:
        for s in lines[i + 1:]:
            if s[0] == "disk_sample":
                print(" ".join([s[1]] + s[3:]))
            elif not s[0].startswith("disk_"):
                break
PY
}
check "the idle loop device did nothing: /proc/diskstats the same before and after" test "$idle_before" = "$idle_after"
check_eq "… and is not in the snapshot" "" "$(disk "$IDLE")"
check "the loop device read in the window is in it" test -n "$(disk "$BUSY")"
read -r -a start <<<"$(disk "$BUSY" | awk '$1 == "start"')"
read -r -a end <<<"$(disk "$BUSY" | awk '$1 == "end"')"
read -r -a before <<<"$busy_before"
read -r -a after <<<"$busy_after"
reads=$(( ${end[1]:-0} - ${start[1]:-0} ))
check "… with the reads of the window, within those /proc/diskstats counted around it ($reads of $(( ${after[1]:-0} - ${before[1]:-0} )))" \
	test "$reads" -gt 0 -a "$reads" -le $(( ${after[1]:-0} - ${before[1]:-0} ))
bio=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["bio_mode"])' <<<"$OUT" 2>/dev/null)
if [ "$bio" = ebpf ]; then
	check "the loop device read without statistics: /proc/diskstats the same before and after" \
		test "$quiet_before" = "$quiet_after"
	check "… is in it all the same (its reads timed by eBPF: $(grep -A4 "^disk ${QUIET#/dev/} " "$T/snap" | grep -c '^disk_latency'))" \
		test -n "$(disk "$QUIET")"
else
	skip "a disk without statistics, its reads timed by eBPF: block requests are not timed by eBPF here ($bio)"
fi
check "the loop device with a read stuck in flight is in it" test -n "$(disk "$SLOW_LOOP")"
check "… in flight at its end (${SLOW_LOOP#/dev/} $(disk "$SLOW_LOOP" | awk '$1 == "end" { print $10 }'))" \
	test "$(disk "$SLOW_LOOP" | awk '$1 == "end" { print $10 }')" -ge 1
kill -USR2 "$SLOW_SERVER"

echo "1..$t_count"
