#!/usr/bin/env bash
# stat_iostat_options.sh: iostat's -p (--partitions), -z (-z, --omit-idle) and -h (--human) in iolens stat, on a
# loop device with two partitions made for the test; the truth is the reads the test made, /proc/diskstats and iostat.
. "$(dirname "$0")/lib.sh"

# Lists that name nothing are refused, not shown as nothing (any machine).
check_fails "-D '' is refused" "$IOLENS" stat -d -D '' 1 1
check_fails "--partitions=, is refused" "$IOLENS" stat -x --partitions=, 1 1
run "$IOLENS" stat -x --partitions=nosuchdisk 1 1
check_eq "--partitions=nosuchdisk: exit 2" 2 "$RC"
check_match "--partitions=nosuchdisk: says which" "disk 'nosuchdisk' not found" "$ERR"

is_root || { skip "partitions of a loop device: needs root (losetup, addpart)"; exit 0; }
for tool in losetup addpart python3; do
	command -v $tool >/dev/null || { skip "partitions of a loop device: needs $tool (make deps)"; exit 0; }
done

# keys FILE LINE: the group keys of JSON line LINE (1: the first), in order.
keys() { python3 -c 'import json,sys; print(" ".join(k for k in json.loads(open(sys.argv[1]).read().splitlines()[int(sys.argv[2]) - 1]) if k.startswith("dskext_")))' "$1" "$2"; }
# field FILE LINE KEY FIELD: one value of a JSON line ("absent" when the group is not there).
field() { python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().splitlines()[int(sys.argv[2]) - 1]); print(d[sys.argv[3]][sys.argv[4]] if sys.argv[3] in d else "absent")' "$@"; }

# A loop device with partitions 1 and 2 (added with BLKPG, as partx does: this kernel may parse no partition table).
truncate -s 64M "$T/parts.img"
loopdev=$(losetup -P -f --show "$T/parts.img" 2>"$T/losetup.err") || { skip "losetup -P: $(head -1 "$T/losetup.err")"; exit 0; }
on_exit "loop_release $loopdev $T/parts.img"
if ! addpart "$loopdev" 1 2048 32768 2>"$T/addpart.err" || ! addpart "$loopdev" 2 34816 32768 2>>"$T/addpart.err"; then
	skip "addpart on $loopdev: $(head -1 "$T/addpart.err")"
	exit 0
fi
disk=${loopdev#/dev/}
wait_until 10 test -b "${loopdev}p2"
p1=${disk}p1 p2=${disk}p2
# 10 reads of 64 KiB from partition 1 with O_DIRECT: 10 requests, counted on the partition and its disk.
dd if="${loopdev}p1" of=/dev/null bs=64k count=10 iflag=direct status=none
check_eq "the truth: /proc/diskstats counts 10 reads on $p1" 10 "$(diskstats_sum "$p1" 4)"

# --partitions=DISK: the disk, then its partitions, in that order; the first line is since boot,
# so its rate times its interval is the count of reads.
run "$IOLENS" stat --json -x --partitions="$disk" 1 1
echo "$OUT" > "$T/p.json"
check_eq "--partitions=$disk: status" 0 "$RC"
check_eq "--partitions=$disk: the disk, then its partitions" "dskext_$disk dskext_$p1 dskext_$p2" "$(keys "$T/p.json" 1)"
reads=$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); g=d["dskext_"+sys.argv[2]]; print(round(g["r_per_s"] * d["interval_ns"] / 1e9))' "$T/p.json" "$p1")
check_eq "$p1: r/s over the time since boot is the 10 reads" 10 "$reads"
check_eq "$p1: rareq-sz is the 64 KiB read" 65536 "$(field "$T/p.json" 1 "dskext_$p1" rareq_sz_bytes | cut -d. -f1)"
check_eq "$p2: no read" 0 "$(field "$T/p.json" 1 "dskext_$p2" r_per_s)"
# iostat -p DISK shows the same devices.
if command -v iostat >/dev/null; then
	theirs=$(env -u POSIXLY_CORRECT iostat -x -p "$disk" 2>/dev/null | awk -v d="$disk" 'index($1, d) == 1 { printf "%s ", $1 }')
	check_eq "iostat -p $disk lists the same devices" "$disk ${p1} ${p2} " "$theirs"
fi
# Without --partitions, -D names the disk alone.
run "$IOLENS" stat --json -x -D "$disk" 1 1
echo "$OUT" > "$T/d.json"
check_eq "-D $disk without --partitions: the disk alone" "dskext_$disk" "$(keys "$T/d.json" 1)"
# --partitions with -D: the same as --partitions=DISK; -d with -D total and a disk: its partitions follow it.
run "$IOLENS" stat --json -d -D "total,$disk" --partitions 1 1
echo "$OUT" > "$T/dd.json"
check_eq "-d -D total,$disk --partitions: the total, the disk, its partitions" \
	"dsk_total dsk_$disk dsk_$p1 dsk_$p2" \
	"$(python3 -c 'import json,sys; print(" ".join(k for k in json.loads(open(sys.argv[1]).read()) if k.startswith("dsk_")))' "$T/dd.json")"

# A recorded tree (tests/fixtures/stat/record.sh) knows the partitions too.
bash "$TOP/tests/fixtures/stat/record.sh" "$T/rec" 2 0.1
run env IOLENS_REPLAY="$T/rec" "$IOLENS" stat --json -x --partitions="$disk" 1 2
echo "$OUT" > "$T/rec.json"
check_eq "--partitions=$disk on a recording: the same groups" "dskext_$disk dskext_$p1 dskext_$p2" "$(keys "$T/rec.json" 2)"

# -z on the first line: since boot, partition 2 never did I/O and is left out.
run "$IOLENS" stat --json -x -z --partitions="$disk" 1 1
echo "$OUT" > "$T/z.json"
check_eq "-z since boot: $p2 (no I/O) left out" "dskext_$disk dskext_$p1" "$(keys "$T/z.json" 1)"

# -z over intervals: a partition shows on a line exactly when it did I/O in that line's
# interval. Partition 2 is read once the run is under way; partition 1 is left alone.
"$IOLENS" stat --json -x -z --partitions="$disk" --no-boot-sample 0.2 > "$T/zl.json" 2>"$T/zl.err" &
stat_pid=$!
on_exit "kill $stat_pid 2>/dev/null"
wait_until lines_at_least "$T/zl.json" 2
before=$(diskstats_sum "$p2" 4)
dd if="${loopdev}p2" of=/dev/null bs=64k count=7 iflag=direct status=none
check_eq "the truth: /proc/diskstats counts 7 more reads on $p2" $((before + 7)) "$(diskstats_sum "$p2" 4)"
shown_p2() { grep -q "\"dskext_$p2\"" "$T/zl.json"; }
wait_until shown_p2
n=$(lines_of "$T/zl.json")
wait_until lines_at_least "$T/zl.json" $((n + 2))
kill $stat_pid 2>/dev/null
wait $stat_pid 2>/dev/null
python3 - "$T/zl.json" "$p1" "$p2" > "$T/zl.out" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
p1, p2 = "dskext_" + sys.argv[2], "dskext_" + sys.argv[3]
reads = sum(round(l[p2]["r_per_s"] * l["interval_ns"] / 1e9) for l in lines if p2 in l)
idle_shown = sum(1 for l in lines if p2 in l and l[p2]["r_per_s"] == 0 and l[p2]["util_pct"] == 0)
print(reads, idle_shown, sum(1 for l in lines if p1 in l), sum(1 for l in lines if p2 not in l))
EOF
read -r p2_reads p2_idle_shown p1_lines p2_absent < "$T/zl.out"
check_eq "-z: the lines that show $p2 add up to the 7 reads made" 7 "$p2_reads"
check_eq "-z: no line shows $p2 idle" 0 "$p2_idle_shown"
check_eq "-z: $p1, idle all along, is on no line" 0 "$p1_lines"
check "-z: lines without $p2's reads leave it out ($p2_absent)" [ "$p2_absent" -ge 2 ]

# CSV with -z: the header again when the disks shown change.
"$IOLENS" stat --csv -x -z -D "$p2" --no-boot-sample 0.2 > "$T/z.csv" 2>"$T/zc.err" &
stat_pid=$!
on_exit "kill $stat_pid 2>/dev/null"
wait_until lines_at_least "$T/z.csv" 2
dd if="${loopdev}p2" of=/dev/null bs=64k count=3 iflag=direct status=none
csv_shown() { grep -q "dskext_$p2" "$T/z.csv"; }
wait_until csv_shown
kill $stat_pid 2>/dev/null
wait $stat_pid 2>/dev/null
check "-z --csv: a header naming $p2 comes when it does I/O" grep -q "^time.*dskext_${p2}_r_per_s" "$T/z.csv"

# --human: sizes with their unit in the table (k, M: powers of 1024, as iostat -h), KiB without it; JSON the same either way.
unset COLUMNS # off a terminal: every column
run "$IOLENS" stat -x -D "$p1" --human --nocolor 1 1
echo "$OUT" > "$T/human.txt"
check_match "--human: the header has rB/s and wB/s" "^Device +r/s +rB/s .* w/s +wB/s " "$(sed -n 1p "$T/human.txt")"
# rareq-sz, found by its header, is 64 KiB.
column() { awk -v name="$2" -v row="$3" '$1 == "Device" { for (i = 1; i <= NF; i++) if ($i == name) c = i } $1 == row { print $c }' "$1"; }
rareq=$(column "$T/human.txt" rareq-sz "$p1")
bytes=$(awk -v v="$rareq" 'BEGIN { n = v + 0; u = substr(v, length(v)); m = u == "k" ? 1024 : u == "M" ? 1048576 : 1; print n * m }')
check_eq "--human: rareq-sz of $p1 is 65536 bytes ($rareq)" 65536 "$bytes"
run "$IOLENS" stat -x -D "$p1" --nocolor 1 1
echo "$OUT" > "$T/plain.txt"
check_eq "without --human: rareq-sz of $p1 in KiB, two decimals" 64.00 "$(column "$T/plain.txt" rareq-sz "$p1")"
run "$IOLENS" stat -x -D "$p1" --human --json 1 1
check_eq "--human leaves JSON in bytes" 65536 "$(echo "$OUT" > "$T/hj.json"; field "$T/hj.json" 1 "dskext_$p1" rareq_sz_bytes | cut -d. -f1)"
exit 0
