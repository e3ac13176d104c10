#!/usr/bin/env bash
# stat_capacity.sh: iolens stat -x's %cap (cap_pct): the load of a loop device as a share of a capacity file written for it (bench's format, known numbers), held to the arithmetic of the man page's rule on the line's own r/s, sizes and aqu-sz, and to fio's fixed rate at QD1; null and said once without a capacity.
# tests/run: alone (beside other tests its loop device once lost its capacity key mid-test: not understood)
. "$(dirname "$0")/lib.sh"

if ! is_root; then
	skip_all "a loop device needs root"
elif ! command -v fio >/dev/null || ! command -v losetup >/dev/null; then
	skip_all "needs fio and losetup"
fi
make_file "$T/cap.img" $((64 << 20))
sync "$T/cap.img"
loopdev=$(losetup -f --show "$T/cap.img" 2>"$T/losetup.err") || skip_all "losetup: $(head -1 "$T/losetup.err")"
on_exit "loop_release $loopdev $T/cap.img"
losetup --direct-io=on "$loopdev" 2>/dev/null
disk=${loopdev#/dev/}
command -v udevadm >/dev/null && udevadm settle 2>/dev/null
CAP=$T/capacity
mkdir -p "$CAP"

# Where bench keeps this disk's capacity: the path it says it looked for.
run "$IOLENS" bench --show-capacity "$loopdev" --capacity-dir "$CAP"
file=$(sed -n 's/.*: \(\/.*\.json\) does not exist$/\1/p' <<<"$ERR")
check_match "bench --show-capacity names the file of $disk's capacity under --capacity-dir" "^$CAP/model-loop-[0-9]+\.json$" "$file"
key=$(basename "$file" .json)

# cases NAME BS QD IOPS ...: bench's points, bytes/s = IOPS x bs.
python3 - "$file" "$key" "$disk" <<'PY'
import json, sys
cases = [("seq1m_q8t1_read", 1 << 20, 8, 400), ("seq1m_q8t1_write", 1 << 20, 8, 300),
         ("seq1m_q1t1_read", 1 << 20, 1, 100), ("seq1m_q1t1_write", 1 << 20, 1, 80),
         ("rnd4k_q32t1_read", 4096, 32, 16000), ("rnd4k_q32t1_write", 4096, 32, 12000),
         ("rnd4k_q1t1_read", 4096, 1, 1000), ("rnd4k_q1t1_write", 4096, 1, 900)]
points = [{"case": c, "mode": "direct", "rw": ("" if c.startswith("seq") else "rand") + c.rsplit("_", 1)[1],
           "bs": bs, "qd": qd, "iops": iops, "bytes_per_s": iops * bs, "lat_ns": {"p50": 1e9 / iops * qd, "p99": 2e9 / iops * qd}}
          for c, bs, qd, iops in cases]
json.dump({"rw": None, "sweep": "profile", "direct": True, "points": points,
           "capacity": {"key": sys.argv[2], "disk": sys.argv[3], "source": "model", "saved_s": 1700000000}},
          open(sys.argv[1], "w"))
PY
run "$IOLENS" bench --show-capacity "$loopdev" --capacity-dir "$CAP"
check_eq "bench reads the file written for $disk back" 0 "$RC"

# rule FILE: for each line with I/O, "cap_pct expected" by the man page's rule from the line's own figures.
rule() { python3 - "$1" "$disk" "$file" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[3]))
case = {p["case"]: p for p in doc["points"]}
def pos(x, a, b):
    if not x > a: return 0.0
    if x >= b: return 1.0
    return (math.log2(x) - math.log2(a)) / (math.log2(b) - math.log2(a))
def at(rw, size, depth):
    out = []
    for fam, deep in (("rnd4k", "q32t1"), ("seq1m", "q8t1")):
        lo, hi = case["%s_q1t1_%s" % (fam, rw)], case["%s_%s_%s" % (fam, deep, rw)]
        t = pos(depth, lo["qd"], hi["qd"])
        out.append((lo["iops"] + t * (hi["iops"] - lo["iops"]), lo["bytes_per_s"] + t * (hi["bytes_per_s"] - lo["bytes_per_s"])))
    t = pos(size, 4096, 1 << 20)
    return [out[0][i] + t * (out[1][i] - out[0][i]) for i in (0, 1)]
for line in open(sys.argv[1]):
    d = json.loads(line)["dskext_" + sys.argv[2]]
    share = 0
    for rw, k in (("read", "r"), ("write", "w")):
        if d[k + "_per_s"] or d[rw + "_bytes_per_s"]:
            iops, bps = at(rw, d[k + "areq_sz_bytes"], d["aqu_sz"])
            share += max(d[k + "_per_s"] / iops, d[rw + "_bytes_per_s"] / bps)
    print(d["cap_pct"], 100 * share, d["r_per_s"], d["aqu_sz"])
PY
}

# stat_during OUT FIO-ARGS...: stat -x's JSON lines (1 s) over a fio run on the loop device.
stat_during() {
	local out=$1
	shift
	"$IOLENS" stat --json -x -D "$disk" --capacity-dir "$CAP" --no-boot-sample 1 >"$out" 2>"$out.err" &
	local stat=$!
	wait_until lines_at_least "$out" 1
	fio --name=cap --filename="$loopdev" --readonly --direct=1 --size=64M --randrepeat=0 "$@" >"$T/fio.out" 2>&1
	fio_rc=$?
	wait_until lines_at_least "$out" $(($(lines_of "$out") + 1))
	kill $stat
	wait $stat 2>/dev/null
}

# ---- 4 KiB random reads at QD1 (psync: one in flight at most), at most 200 a second --------------
stat_during "$T/qd1.json" --rw=randread --bs=4k --ioengine=psync --rate_iops=200 --number_ios=600
check_eq "fio ran ($(tail -c 200 "$T/fio.out"))" 0 "$fio_rc"
check_no_match "a capacity is found: no word of a missing one" "cap" "$(cat "$T/qd1.json.err")"
rule "$T/qd1.json" >"$T/qd1.rule"
sed 's/^/# cap_pct, by the rule, r\/s, aqu-sz: /' "$T/qd1.rule"
check "each line: cap_pct is the rule's share of the file's cases (within 0.01 points)" python3 -c '
import sys
rows = [l.split() for l in open(sys.argv[1])]
sys.exit(not rows or any(abs(float(a) - float(b)) > 0.01 for a, b, *_ in rows))' "$T/qd1.rule"
# At QD1 and 4 KiB the rule is r/s over rnd4k_q1t1_read's 1000 IOPS: 200 a second at most is 20 % at most.
check "each line: at QD1 (aqu-sz <= 1) and 4 KiB, cap_pct is r/s / 1000 IOPS x 100, and at most fio's rate's 20 % (+1)" python3 -c '
import sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
sys.exit(not any(r[2] > 0 for r in rows) or any(r[3] > 1 or abs(r[0] - r[2] / 10) > 0.01 or r[0] > 21 for r in rows))' "$T/qd1.rule"

# ---- 64 KiB random reads, 8 in flight (libaio): between the cases in size and depth -----------
stat_during "$T/deep.json" --rw=randread --bs=64k --ioengine=libaio --iodepth=8 --rate_iops=100 --number_ios=300
check_eq "fio ran ($(tail -c 200 "$T/fio.out"))" 0 "$fio_rc"
rule "$T/deep.json" >"$T/deep.rule"
sed 's/^/# cap_pct, by the rule, r\/s, aqu-sz: /' "$T/deep.rule"
check "each line of 64 KiB reads: cap_pct is the rule's (within 0.01 points), on lines with reads" python3 -c '
import sys
rows = [l.split() for l in open(sys.argv[1])]
sys.exit(not any(float(r[2]) > 0 for r in rows) or any(abs(float(a) - float(b)) > 0.01 for a, b, *_ in rows))' "$T/deep.rule"

# ---- The table: %cap after the other columns, as JSON's -------------------------------------------
run "$IOLENS" stat -x -D "$disk" --capacity-dir "$CAP" 1 1
check_match "the table ends with %cap for a disk with a capacity" "^Device .* %cap$" "$(sed -n 1p <<<"$OUT")"
check_eq "… and shows 0 for an idle one (the line since boot: its few reads are this test's)" 1 \
	"$(awk -v d="$disk" '$1 == d { print ($NF >= 0) }' <<<"$OUT")"
check_match "… with two decimals, as iostat's percentages" "^[0-9]+\.[0-9][0-9]$" "$(awk -v d="$disk" '$1 == d { print $NF }' <<<"$OUT")"

# ---- Without a capacity: null, said once when asked for; no column in the table -------------------
run "$IOLENS" stat --json -x -D "$disk" --capacity-dir "$T/none" 0.1 2
check_eq "no capacity: cap_pct null on each line" "None None" "$(python3 -c '
import json, sys
print(*[json.loads(l)["dskext_" + sys.argv[1]]["cap_pct"] for l in sys.stdin])' "$disk" <<<"$OUT")"
check_eq "… --capacity-dir given: said once, in one line of at most 100 characters" \
	"iolens stat: %cap of $disk is '-': no capacity saved (iolens bench --profile --save-capacity)" "$ERR"
run "$IOLENS" stat --json -x -D "$disk" --capacity-dir "$T/none" --verbose 0.1 2
check_eq "… --verbose names the file looked for" 1 "$(grep -c "^iolens stat: %cap of $disk is '-': .*$T/none/$key.json does not exist$" <<<"$ERR")"
run "$IOLENS" stat -x -D "$disk" --capacity-dir "$T/none" 1 1
check_no_match "… and no %cap column in the table" "%cap" "$OUT"
# Not asked for (no --capacity-dir, no \$IOLENS_CAPACITY_DIR): nothing said of %cap, shown or not.
run env -u IOLENS_CAPACITY_DIR "$IOLENS" stat -x -D "$disk" 0.1 2
check_eq "%cap not asked for: not a word on stderr" "" "$ERR"
echo '{"points": 3}' >"$T/bad.json"
mkdir -p "$T/bad" && cp "$T/bad.json" "$T/bad/$key.json"
run "$IOLENS" stat --json -x -D "$disk" --capacity-dir "$T/bad" 0.1 1
check_eq "a file that is not bench's: exit 0, null" "0 None" "$RC $(python3 -c '
import json, sys
print(json.loads(sys.stdin.readline())["dskext_" + sys.argv[1]]["cap_pct"])' "$disk" <<<"$OUT")"
check_eq "… said in one line" "iolens stat: %cap of $disk is '-': its capacity cannot be read (--verbose says why)" "$ERR"
run "$IOLENS" stat --json -x -D "$disk" --capacity-dir "$T/bad" --verbose 0.1 1
check_match "… --verbose names the file" "^iolens stat: %cap of $disk is '-': $T/bad/$key.json" "$ERR"
run env IOLENS_REPLAY="$TOP/tests/fixtures/stat/vm1" "$IOLENS" stat --json -x 1 2
check_no_match "a recording: %cap not asked for, nothing said of it" "%cap" "$ERR"
check_match "… null in its JSON" '"cap_pct":null' "$OUT"
run env IOLENS_REPLAY="$TOP/tests/fixtures/stat/vm1" "$IOLENS" stat --json -x --verbose 1 2
check_match "… --verbose says why: its disks are another machine's" \
	"^iolens stat: %cap is '-': a recording's disks are another machine's \(give --capacity-dir\)$" "$ERR"
check_fails "--capacity-dir '' is refused" "$IOLENS" stat -x --capacity-dir "" 1 1

echo "1..$t_count"
