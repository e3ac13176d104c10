#!/usr/bin/env bash
# bench_profile.sh: iolens bench --profile runs CrystalDiskMark's set, each case's numbers its own repeats'; --compare tells noise from a change; a capacity is saved by the disk's identity and read back.
. "$(dirname "$0")/lib.sh"

case "$(fs_type "$T")" in
tmpfs|ramfs) skip_all "the scratch directory is on $(fs_type "$T"): no disk to measure with O_DIRECT" ;;
esac

# py SCRIPT ARGS...: a check in python3 on bench's JSON; prints "ok" or what is wrong.
py() { python3 -c "$@" 2>&1; }
export IOLENS_CAPACITY_DIR=$T/capacity
D=$T/d
mkdir -p "$D"
SMALL=(--size 4m --runtime 30 --repeat 3) # each run ends when 4 MiB have moved (the runtime only bounds it)
CASES="seq1m_q8t1_read seq1m_q8t1_write seq1m_q1t1_read seq1m_q1t1_write rnd4k_q32t1_read rnd4k_q32t1_write rnd4k_q1t1_read rnd4k_q1t1_write"

# ---- The set, its JSON, and each case against its own runs -----------------------------------

run "$IOLENS" bench --profile "${SMALL[@]}" --json "$D"
check_eq "bench --profile --json: exit 0" 0 "$RC"
[ "$RC" = 0 ] || sed "s/^/# /" <<<"$ERR" # why, as TAP comments
printf '%s\n' "$OUT" >"$T/a.json"
check_eq "… the cases, in CrystalDiskMark's order" "$CASES" \
	"$(py 'import json, sys; print(" ".join(p["case"] for p in json.load(open(sys.argv[1]))["points"]))' "$T/a.json")"
check_eq "… each case's block size, queue depth and direction, direct" "ok" "$(py '
import json, sys
doc = json.load(open(sys.argv[1]))
bad = [p["case"] for p in doc["points"]
       if (p["bs"], p["qd"], p["rw"], p["mode"]) != ((1 << 20) if p["case"].startswith("seq1m") else 4096,
            int(p["case"].split("_")[1][1:-2]),
            ("" if p["case"].startswith("seq") else "rand") + p["case"].rsplit("_", 1)[1], "direct")]
print("ok" if not bad and doc["sweep"] == "profile" and doc["direct"] is True and doc["rw"] is None else bad)' "$T/a.json")"
# Each run moves --size (4 MiB): the I/O count is one we caused.
check_eq "… each case moved 4 MiB in its own direction only (ios x bs)" "ok" "$(py '
import json, sys
bad = []
for p in json.load(open(sys.argv[1]))["points"]:
    mine, other = (p["read"], p.get("write")) if p["rw"].endswith("read") else (p["write"], p.get("read"))
    if mine["ios"] * p["bs"] != 4 << 20 or mine["bytes"] != 4 << 20 or (other and other["ios"]):
        bad.append(p["case"])
print("ok" if not bad else bad)' "$T/a.json")"
check_eq "… each case's MB/s is the median of its 3 runs, its spread (highest - lowest) / median" "ok" "$(py '
import json, sys
bad = []
for p in json.load(open(sys.argv[1]))["points"]:
    runs = p["runs"]["bytes_per_s"]
    median = sorted(runs)[(len(runs) - 1) // 2]
    if p["runs"]["count"] != 3 or len(runs) != 3 or abs(p["bytes_per_s"] - median) > 1e-6 * median \
       or abs(p["runs"]["spread"] - (max(runs) - min(runs)) / median) > 5e-4: # JSON writes 3 decimals
        bad.append(p["case"])
print("ok" if not bad else bad)' "$T/a.json")"
check_eq "… IOPS x block size is MB/s, p50 <= p99 <= max" "ok" "$(py '
import json, sys
bad = [p["case"] for p in json.load(open(sys.argv[1]))["points"]
       if abs(p["iops"] * p["bs"] - p["bytes_per_s"]) > 0.0005 * p["bs"] + 1e-6 * p["bytes_per_s"] # iops: 3 decimals
       or not (0 < p["lat_ns"]["p50"] <= p["lat_ns"]["p99"] <= p["lat_ns"]["max"] * 1.01)]
print("ok" if not bad else bad)' "$T/a.json")"
check "… the test file is removed" test -z "$(ls -A "$D")"

run "$IOLENS" bench --profile --size 4m --runtime 30 --repeat 2 "$D"
check_eq "the table: exit 0" 0 "$RC"
check_match "… its columns: case, MB/s, IOPS, p50, p99, spread" "^CASE +MB/s +IOPS +P50/us +P99/us +SPREAD%" "$OUT"
check_eq "… under its title: direct, what it ran" "CrystalDiskMark set (seq 1M, random 4K; read, write), O_DIRECT, QD1-32, 4M test file" \
	"$(head -1 <<<"$OUT" | sed 's/ on .*//')"
check_eq "… a row per case" "$CASES" "$(awk '$1 ~ /_(read|write)$/ { printf "%s%s", s, $1; s = " " }' <<<"$OUT")"

# ---- --compare -------------------------------------------------------------------------------

cp "$T/a.json" "$T/same.json"
run "$IOLENS" bench --compare "$T/a.json" "$T/same.json"
check_eq "--compare of a result with itself: exit 0" 0 "$RC"
check_eq "… 'no difference' in every case" 8 "$(grep -c ' no difference$' <<<"$OUT")"
check_match "… and said overall" "^no difference" "$OUT"

# doctor FACTOR CASE IN OUT: every run of CASE (all: every case) set to its median times FACTOR.
doctor() {
	py 'import json, sys
factor, which, src, dst = float(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
doc = json.load(open(src))
for p in doc["points"]:
    if which in ("all", p["case"]):
        p["bytes_per_s"] *= factor
        p["iops"] *= factor
        p["runs"]["bytes_per_s"] = [p["bytes_per_s"]] * len(p["runs"]["bytes_per_s"])
        p["runs"]["spread"] = 0
json.dump(doc, open(dst, "w"))' "$@"
}
doctor 1 all "$T/a.json" "$T/flat.json"
doctor 0.5 all "$T/a.json" "$T/half.json"
run "$IOLENS" bench --compare "$T/flat.json" "$T/half.json"
check_eq "a 50 % drop in every case: exit 3 (slower)" 3 "$RC"
check_eq "… each case 'slower' by -50.0 %" 8 "$(grep -cE ' -50\.0% +3/3  slower$' <<<"$OUT")"
check_match "… and counted" "in 8 of 8 cases \(8 slower, 0 faster\)" "$OUT"
run "$IOLENS" bench --compare --json "$T/flat.json" "$T/half.json"
check_eq "… --json: exit 3, verdict slower, change_percent -50" "3 ok" "$RC $(py 'import json, sys
d = json.loads(sys.stdin.read())
print("ok" if d["verdict"] == "slower" and all(abs(c["change_percent"] + 50) < 1e-9 and c["verdict"] == "slower" for c in d["cases"]) else d)' <<<"$OUT")"
run "$IOLENS" bench --compare "$T/half.json" "$T/flat.json"
check_eq "the other way round: exit 4 (only faster), +100.0 %" "4 8" "$RC $(grep -cE ' \+100\.0% +3/3  faster$' <<<"$OUT")"
doctor 0.5 rnd4k_q1t1_write "$T/flat.json" "$T/one.json"
run "$IOLENS" bench --compare "$T/flat.json" "$T/one.json"
check_eq "one case down by half: exit 3, that case slower, 7 with no difference" "3 rnd4k_q1t1_write 7" \
	"$RC $(awk '/ slower$/ { print $1 }' <<<"$OUT") $(grep -c ' no difference$' <<<"$OUT")"
# Within the spread: B's runs inside A's range is noise, even when its median moved.
py 'import json, sys
doc = json.load(open(sys.argv[1]))
for p in doc["points"]:
    med = p["bytes_per_s"]
    p["runs"]["bytes_per_s"] = [med * 0.8, med, med * 1.2]
json.dump(doc, open(sys.argv[2], "w"))
for p in doc["points"]:
    p["bytes_per_s"] *= 1.1; p["iops"] *= 1.1
    p["runs"]["bytes_per_s"] = [p["bytes_per_s"] * 0.95, p["bytes_per_s"], p["bytes_per_s"] * 1.05]
json.dump(doc, open(sys.argv[3], "w"))' "$T/flat.json" "$T/wide.json" "$T/within.json" >/dev/null
run "$IOLENS" bench --compare "$T/wide.json" "$T/within.json"
check_eq "a 10 % move within A's spread (runs 0.8-1.2 x): no difference, exit 0" "0 8" "$RC $(grep -c ' no difference$' <<<"$OUT")"
# A drifting machine: each case's runs narrow (0.5 % apart), B's all a little lower, out of A's range.
# drift FACTOR IN OUT: every case's median times FACTOR, its runs 0.5 % below, at and above it.
drift() {
	py 'import json, sys
factor, src, dst = float(sys.argv[1]), sys.argv[2], sys.argv[3]
doc = json.load(open(src))
for p in doc["points"]:
    p["bytes_per_s"] *= factor; p["iops"] *= factor
    p["runs"]["bytes_per_s"] = [p["bytes_per_s"] * 0.995, p["bytes_per_s"], p["bytes_per_s"] * 1.005]
json.dump(doc, open(dst, "w"))' "$@" >/dev/null
}
drift 1 "$T/flat.json" "$T/narrow.json"
drift 0.98 "$T/flat.json" "$T/drift2.json"
drift 0.7 "$T/flat.json" "$T/drop30.json"
run "$IOLENS" bench --compare "$T/narrow.json" "$T/narrow.json"
check_eq "identical narrow inputs: exit 0, no difference in all 8 cases" "0 8" "$RC $(grep -c ' no difference$' <<<"$OUT")"
run "$IOLENS" bench --compare "$T/narrow.json" "$T/drift2.json"
check_eq "a 2 % drop, B's runs all below A's: within the default 5 % margin, no difference, exit 0" "0 8" \
	"$RC $(grep -c ' no difference$' <<<"$OUT")"
check_match "… the margin said" "within the spread of the runs or the 5 % margin" "$OUT"
run "$IOLENS" bench --compare --margin 1% "$T/narrow.json" "$T/drift2.json"
check_eq "… with --margin 1%: slower in all 8 cases by -2.0 %, exit 3" "3 8" "$RC $(grep -cE ' -2\.0% +3/3  slower$' <<<"$OUT")"
run "$IOLENS" bench --compare "$T/narrow.json" "$T/drop30.json"
check_eq "a 30 % drop: slower in all 8 cases by -30.0 %, exit 3" "3 8" "$RC $(grep -cE ' -30\.0% +3/3  slower$' <<<"$OUT")"
run "$IOLENS" bench --compare --json --margin 2.5 "$T/narrow.json" "$T/drop30.json"
check_eq "… --json: the margin given, verdict slower" "3 ok" "$RC $(py 'import json, sys
d = json.loads(sys.stdin.read())
print("ok" if d["margin_percent"] == 2.5 and d["verdict"] == "slower" else d)' <<<"$OUT")"
# The medians no further apart than A's range is wide: noise, though the ranges miss each other.
py 'import json, sys
doc = json.load(open(sys.argv[1]))
for p in doc["points"]:
    med = p["bytes_per_s"]
    p["runs"]["bytes_per_s"] = [med * 0.85, med, med * 1.15]
json.dump(doc, open(sys.argv[2], "w"))
for p in doc["points"]:
    p["bytes_per_s"] *= 0.75; p["iops"] *= 0.75
    p["runs"]["bytes_per_s"] = [p["bytes_per_s"] * 0.99, p["bytes_per_s"], p["bytes_per_s"] * 1.01]
json.dump(doc, open(sys.argv[3], "w"))' "$T/flat.json" "$T/wide30.json" "$T/below.json" >/dev/null
run "$IOLENS" bench --compare "$T/wide30.json" "$T/below.json"
check_eq "a 25 % drop whose runs miss A's (0.85-1.15 x) but move less than A's range is wide: no difference" "0 8" \
	"$RC $(grep -c ' no difference$' <<<"$OUT")"

# ---- --compare: bad input ----------------------------------------------------------------------

run "$IOLENS" bench --compare "$T/a.json" "$T/missing.json"
check_eq "a missing file: exit 1" 1 "$RC"
check_match "… named, with the reason" "$T/missing.json: No such file or directory" "$ERR"
echo 'CASE MB/s' >"$T/text.json"
run "$IOLENS" bench --compare "$T/a.json" "$T/text.json"
check_eq "not JSON: exit 1, said" "1 yes" "$RC $(grep -q "text.json: not JSON" <<<"$ERR" && echo yes)"
echo '{"points": 3}' >"$T/other.json"
run "$IOLENS" bench --compare "$T/other.json" "$T/a.json"
check_eq "JSON, not bench's: exit 1, said" "1 yes" "$RC $(grep -q "other.json: not a bench --json document" <<<"$ERR" && echo yes)"
py 'import json, sys; d = json.load(open(sys.argv[1])); d["points"].pop(); json.dump(d, open(sys.argv[2], "w"))' \
	"$T/a.json" "$T/seven.json" >/dev/null
run "$IOLENS" bench --compare "$T/a.json" "$T/seven.json"
check_eq "different cases: exit 1, the case named" "1 yes" \
	"$RC $(grep -q "has case rnd4k_q1t1_write, .*seven.json has not: not the same cases" <<<"$ERR" && echo yes)"
py 'import json, sys; d = json.load(open(sys.argv[1])); d["points"][0]["bytes_per_s"] = 1e15; json.dump(d, open(sys.argv[2], "w"))' \
	"$T/a.json" "$T/outside.json" >/dev/null
run "$IOLENS" bench --compare "$T/a.json" "$T/outside.json"
check_eq "a point outside its own runs (edited): exit 1, said" "1 yes" \
	"$RC $(grep -q "points\[0\]: bytes_per_s .* is outside its runs" <<<"$ERR" && echo yes)"
head -c 300 "$T/a.json" >"$T/cut.json"
run "$IOLENS" bench --compare "$T/a.json" "$T/cut.json"
check_eq "a cut file: exit 1, said" "1 yes" "$RC $(grep -q "cut.json: not JSON" <<<"$ERR" && echo yes)"
# A sweep's document compares too, its points named by mode, rw, size and depth.
run "$IOLENS" bench --bs 64k,128k --size 1m --runtime 30 --json "$D"
printf '%s\n' "$OUT" >"$T/sweep.json"
run "$IOLENS" bench --compare "$T/sweep.json" "$T/sweep.json"
check_eq "two sweeps compare, named by their points (single runs: said)" "0 direct-read-64K-qd1 yes" \
	"$RC $(awk 'NR == 2 { print $1 }' <<<"$OUT") $(grep -q 'no spread' <<<"$ERR" && echo yes)"

# ---- Capacity: saved by the disk's identity, read back -----------------------------------------

# expected_key DEV: the key sysfs gives, by the documented rule (WWN, serial, else model and size).
expected_key() {
	py 'import os, re, sys
d = os.path.realpath("/sys/dev/block/" + sys.argv[1])
if os.path.exists(d + "/partition"):
    d = os.path.dirname(d)
name = os.path.basename(d)
def read(p):
    try: return open("/sys/block/%s/%s" % (name, p)).read().strip()
    except OSError: return ""
def key(prefix, value):
    return (prefix + "-" + re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9._-]", "_", value))).rstrip("_")
for p in ("wwid", "device/wwid", "device/serial", "serial"):
    if read(p):
        print(key("wwid" if "wwid" in p else "serial", read(p))); break
else:
    print(key("model", (read("device/model") or name.rstrip("0123456789")) + "-%d" % (int(read("size")) * 512)))' "$1"
}
mm=$(stat -c '%Hd:%Ld' "$T")
if [ "${mm%%:*}" = 0 ] || [ ! -e "/sys/dev/block/$mm" ]; then
	skip "capacity of the scratch directory's disk: it is on no block device ($mm)"
else
	key=$(expected_key "$mm")
	run "$IOLENS" bench --profile --size 4m --runtime 30 --repeat 2 --save-capacity --json "$D"
	check_eq "--save-capacity: exit 0" 0 "$RC"
	check "… saved as \$IOLENS_CAPACITY_DIR/$key.json (the key sysfs gives)" test -f "$T/capacity/$key.json"
	check_eq "… only that file (the temporary one renamed)" "$key.json" "$(ls -A "$T/capacity")"
	check_eq "… the run's document with its capacity object" "ok" "$(py 'import json, sys
saved, printed = json.load(open(sys.argv[1])), json.loads(sys.stdin.read())
c = saved.pop("capacity")
ok = c["key"] == sys.argv[2] and c["source"] == sys.argv[2].split("-")[0] and saved == printed
print("ok" if ok else c)' "$T/capacity/$key.json" "$key" <<<"$OUT")"
	run "$IOLENS" bench --show-capacity "$T"
	check_eq "--show-capacity of a directory on the disk: exit 0" 0 "$RC"
	check_match "… says whose and where from" "^capacity of [^ ]+ \($key\), measured .* UTC, from $T/capacity/$key.json" "$OUT"
	check_eq "… each case's MB/s as saved" "$(py 'import json, sys
print(" ".join("%s=%.1f" % (p["case"], p["bytes_per_s"] / 1e6) for p in json.load(open(sys.argv[1]))["points"]))' "$T/capacity/$key.json")" \
		"$(awk 'NR > 2 { printf "%s%s=%s", (NR > 3 ? " " : ""), $1, $4 }' <<<"$OUT")"
	run "$IOLENS" bench --show-capacity "$T" --json
	check_eq "… --json: the file as saved" "$(cat "$T/capacity/$key.json")" "$OUT"
	run "$IOLENS" bench --show-capacity "$T" --capacity-dir "$T/elsewhere"
	check_eq "--capacity-dir over the variable: none saved there, exit 1" 1 "$RC"
	check_match "… where it looked, said" "no capacity saved for .*: $T/elsewhere/$key.json does not exist" "$ERR"
	# Saved again: replaced whole, nothing left beside it.
	run "$IOLENS" bench --profile --size 4m --runtime 30 --repeat 2 --save-capacity --capacity-dir "$T/elsewhere" "$D"
	check_eq "--save-capacity --capacity-dir: made the directory, one file" "0 $key.json" "$RC $(ls -A "$T/elsewhere")"
	run "$IOLENS" bench --compare "$T/capacity/$key.json" "$T/elsewhere/$key.json"
	check "… two saved capacities compare (exit 0, 3 or 4: $RC)" test "$RC" = 0 -o "$RC" = 3 -o "$RC" = 4
	echo '{"points": []}' >"$T/elsewhere/$key.json"
	run "$IOLENS" bench --show-capacity "$T" --capacity-dir "$T/elsewhere"
	check_eq "a damaged capacity file: exit 1, said" "1 yes" "$RC $(grep -q "$key.json: no points" <<<"$ERR" && echo yes)"
fi
run "$IOLENS" bench --show-capacity /dev/shm
check_eq "--show-capacity of a memory filesystem: exit 1, said" "1 yes" "$RC $(grep -q "on no block device" <<<"$ERR" && echo yes)"

loop=
if is_root && command -v losetup >/dev/null; then
	truncate -s 24m "$T/disk.img"
	loop=$(losetup -f --show "$T/disk.img" 2>/dev/null)
fi
if [ -n "$loop" ]; then
	# (Detached at the end only if still ours: once detached below, its number may be another
	# test's device.)
	on_exit 'loop_release "$loop" "$T/disk.img"'
	run "$IOLENS" bench --profile "${SMALL[@]}" "$loop"
	check_eq "--profile writes: a block device needs --force (exit 1)" 1 "$RC"
	key=$(expected_key "$(stat -c '%Hr:%Lr' "$loop")")
	run "$IOLENS" bench --profile --size 4m --runtime 30 --repeat 2 --force --save-capacity "$loop"
	check_eq "a loop device (no WWN, no serial in sysfs): saved as $key.json" "0 yes" \
		"$RC $(test -f "$T/capacity/$key.json" && echo yes)"
	run "$IOLENS" bench --show-capacity "$loop"
	check_match "… read back by its device" "^capacity of ${loop#/dev/} \($key\)" "$OUT"
	losetup -d "$loop" && loop=
	truncate -s 20m "$T/disk.img"
	loop=$(losetup -f --show "$T/disk.img")
	run "$IOLENS" bench --show-capacity "$loop"
	check_eq "… another size is another disk: none saved, exit 1" "1 yes" "$RC $(grep -q "no capacity saved" <<<"$ERR" && echo yes)"
else
	skip "capacity of a loop device: needs root and losetup"
fi

# ---- Usage errors ------------------------------------------------------------------------------

for args in "--profile --jobs 2" "--profile --bs 4k" "--profile --rw write" "--profile --qd 4" "--profile --qd-sweep" "--profile --buffered" \
	"--profile --engine psync" "--save-capacity" "--compare $T/a.json" "--compare $T/a.json $T/a.json $T/a.json" \
	"--compare --profile $T/a.json $T/a.json" "--show-capacity $T $T" "--margin 5 $D" \
	"--compare --margin -1 $T/a.json $T/a.json" "--compare --margin 101 $T/a.json $T/a.json" \
	"--compare --margin 5x $T/a.json $T/a.json" "--compare --margin % $T/a.json $T/a.json"; do
	run "$IOLENS" bench $args
	check_eq "bench $args: exit 2" 2 "$RC"
done

echo "1..$t_count"
