#!/usr/bin/env bash
# bench.sh: iolens bench moves exactly what it says, sweeps and finds the knee, compares the page cache's states, and is safe with what it must not write.
. "$(dirname "$0")/lib.sh"

case "$(fs_type "$T")" in
tmpfs|ramfs) skip_all "the scratch directory is on $(fs_type "$T"): no disk to measure with O_DIRECT" ;;
esac
pause_damon # warm reads are held to a hit ratio of exactly 1: no pageout in between

# What the JSON document of `bench --json` (stdin) says: jq-like, with python3.
cat >"$T/bq.py" <<'EOF'
import json, sys
doc = json.load(sys.stdin)
what, args = sys.argv[1], sys.argv[2:]
def get(obj, path):
    for key in path.split("."):
        obj = obj[int(key)] if isinstance(obj, list) else obj.get(key) if obj is not None else None
    return obj
if what == "get":          # get PATH: a value, "null" for None
    v = get(doc, args[0])
    print("null" if v is None else str(v).lower() if isinstance(v, bool) else v)
elif what == "each":       # each KEY: that key of every point, space-separated
    print(" ".join(str(get(p, args[0])) for p in doc["points"]))
elif what == "ordered":    # ordered: every point's latencies in order, min <= mean <= max too
    bad = []
    for p in doc["points"]:
        l = p["lat_ns"]
        seq = [l["min"], l["p50"], l["p90"], l["p99"], l["p99_9"], l["max"]]
        if seq != sorted(seq) or not (l["min"] <= l["mean"] <= l["max"]) or l["min"] <= 0:
            bad.append(p["bs"])
    print("ok" if not bad else "out of order at %s" % bad)
elif what == "knee":       # knee: the point a sweep marks and whether confirmed, and what they should be
    bw = [p["bytes_per_s"] for p in doc["points"]]
    marked = [i for i, p in enumerate(doc["points"]) if p["knee"]]
    want = next(i for i, b in enumerate(bw) if b >= 0.95 * max(bw))
    peak = bw.index(max(bw))
    spread = (doc["points"][peak]["runs"] or {}).get("spread")
    reason = None     # iolens-bench(1), KNEE: a knee that is the peak itself is not confirmed when...
    if want == peak and want == len(bw) - 1:
        reason = "last_point"   # ... it is the last point
    elif want == peak and (spread > 0.05 if spread is not None else all(b < 0.95 * bw[peak] for b in bw[peak + 1:])):
        reason = "noise"        # ... its runs spread over 5 %, or (one run) no larger point comes within 95 %
    k = doc["knee"]
    print(marked, k["confirmed"], k["unconfirmed_reason"], [want], reason is None, reason)
EOF
bq() { python3 "$T/bq.py" "$@" 2>>"$T/bq.err"; }
# keep_json NAME: the output of the last run, for the check of its keys against the man page.
mkdir -p "$T/json"
keep_json() { printf '%s\n' "$OUT" >"$T/json/$1"; }
# Interval lines (stdin): the sum of read ios over the "interval" lines, and the result's.
interval_sums() {
	python3 -c 'import json, sys
lines = [json.loads(l) for l in sys.stdin if l.strip()]
iv = [l for l in lines if l["type"] == "interval"]
res = [l for l in lines if l.get("type") == "result"]
print(len(iv), sum(l["read"]["ios"] for l in iv), res[0]["points"][0]["read"]["ios"] if res else "none", lines[-1].get("type"))'
}
# The device under a directory, as /proc/diskstats names it, and its sectors read and written.
disk_of() { local mm; mm=$(stat -c '%Hd:%Ld' "$1"); sed -n 's/^DEVNAME=//p' "/sys/dev/block/$mm/uevent" 2>/dev/null; }
disk_sectors() { diskstats_sum "$1" 6 10; }
empty_dir() { [ -z "$(ls -A "$1")" ]; }

D=$T/d
mkdir -p "$D"
# Runs whose checks count what a whole --size moved end by their size, never by the default 5 s
# runtime, which a busy machine's disk can take for a few MiB of 4 KiB requests.
SIZED="--runtime 600"

# ---- A run moves exactly what it says, and leaves nothing behind ------------------------

run "$IOLENS" bench $SIZED --bs 4k --size 4m --json "$D"
keep_json read
check_eq "bench --bs 4k --size 4m --json DIR: exit 0" 0 "$RC"
check_eq "… one point" "4096" "$(bq each bs <<<"$OUT")"
check_eq "… 1024 reads of 4 KiB, 4 MiB: the whole file once" "1024 4194304" \
	"$(bq get points.0.read.ios <<<"$OUT") $(bq get points.0.read.bytes <<<"$OUT")"
check_eq "… no writes" "null" "$(bq get points.0.write <<<"$OUT")"
check_eq "… direct, psync, qd 1 by default" "true psync 1" \
	"$(bq get direct <<<"$OUT") $(bq get points.0.engine <<<"$OUT") $(bq get points.0.qd <<<"$OUT")"
check_match "… on a test file it made in DIR" "^$D/iolens-bench\." "$(bq get target <<<"$OUT")"
check_eq "… and removed" "true" "$(bq get created <<<"$OUT")"
check "… DIR is empty again" empty_dir "$D"
check_eq "latencies in order: min <= p50 <= p90 <= p99 <= p99.9 <= max" ok "$(bq ordered <<<"$OUT")"
check "CPU time per I/O is measured (user + system > 0)" awk -v u="$(bq get points.0.cpu.user_ns_per_io <<<"$OUT")" \
	-v s="$(bq get points.0.cpu.sys_ns_per_io <<<"$OUT")" 'BEGIN { exit !(u + s > 0) }'
check "throughput and IOPS agree: bytes_per_s = iops * 4096" awk -v b="$(bq get points.0.bytes_per_s <<<"$OUT")" \
	-v i="$(bq get points.0.iops <<<"$OUT")" 'BEGIN { d = b - i * 4096; if (d < 0) d = -d; exit !(b > 0 && d < b / 1e6) }'

run "$IOLENS" bench $SIZED --rw randread --bs 4k --qd 8 --jobs 2 --size 4m --json "$D"
check_eq "--rw randread --qd 8 --jobs 2: still 1024 reads, the size split over the jobs" "1024 io_uring 8 2" \
	"$(bq get points.0.read.ios <<<"$OUT") $(bq get points.0.engine <<<"$OUT") $(bq get points.0.qd <<<"$OUT") $(bq get points.0.jobs <<<"$OUT")"
check_eq "… latencies in order" ok "$(bq ordered <<<"$OUT")"

# More jobs than blocks: never the same block twice (the truth: the bytes the size allows).
run "$IOLENS" bench $SIZED --jobs 4 --bs 1m --size 1m --json "$D"
check_eq "--jobs 4 --bs 1m --size 1m: 1 MiB read by 1 job, not 4 MiB" "1048576 1" \
	"$(bq get points.0.read.bytes <<<"$OUT") $(bq get points.0.jobs <<<"$OUT")"
check_match "… said" "--jobs 4 with 1 block of 1M to do: 1 job at this block size" "$ERR"
run "$IOLENS" bench $SIZED --jobs 8 --bs 512k-2m --size 2m --csv -o bs,jobs "$D"
check_eq "--jobs 8 --bs 512k-2m --size 2m: 4, 2 and 1 jobs" "bs,jobs 512K,4 1M,2 2M,1" "$(tr '\n' ' ' <<<"$OUT" | sed 's/ $//')"
check_eq "… said once for the three sizes" "iolens bench: --jobs 8 with fewer blocks to do at 512K-2M: as few as 1 job there (the JOBS column)" \
	"$(grep -e --jobs <<<"$ERR")"
run "$IOLENS" bench $SIZED --jobs 4 --bs 4k,1m --size 2m --csv -o bs,jobs "$D"
check_eq "… per block size: 4 jobs at 4K, 2 at 1M (2 blocks)" "bs,jobs 4K,4 1M,2" "$(tr '\n' ' ' <<<"$OUT" | sed 's/ $//')"

run "$IOLENS" bench $SIZED --rw randrw --mix 70 --bs 4k --size 4m --json "$D"
keep_json randrw
check_eq "--rw randrw --mix 70: 1024 I/O in all" 1024 \
	$(( $(bq get points.0.read.ios <<<"$OUT") + $(bq get points.0.write.ios <<<"$OUT") ))
check "… about 70 % of them reads ($(bq get points.0.read.ios <<<"$OUT") of 1024)" \
	awk -v r="$(bq get points.0.read.ios <<<"$OUT")" 'BEGIN { exit !(r >= 600 && r <= 830) }'

# The device's own view: a direct read reaches the disk, all of it.
disk=$(disk_of "$D")
if [ -n "$disk" ] && grep -q " $disk " /proc/diskstats; then
	before=$(disk_sectors "$disk")
	run "$IOLENS" bench $SIZED --bs 64k --size 8m --json "$D"
	after=$(disk_sectors "$disk")
	check_eq "the device view is the disk under DIR ($disk)" "$disk" "$(bq get points.0.device.name <<<"$OUT")"
	dev=$(bq get points.0.device.read_bytes <<<"$OUT")
	check "… it read at least the 8 MiB bench read directly ($dev bytes)" test "$dev" -ge $((8 << 20))
	check "… and no more than /proc/diskstats says around the whole command" \
		test "$dev" -le $(( (after - before) * 512 ))
	check "… %util within 0-100" awk -v u="$(bq get points.0.device.util <<<"$OUT")" 'BEGIN { exit !(u >= 0 && u <= 100) }'
else
	skip "no /proc/diskstats line for the disk under $D"
fi

# ---- Buffered writes are synced before the clock stops ----------------------------------

run "$IOLENS" bench $SIZED --buffered --rw write --bs 64k --size 8m --json "$D"
keep_json synced
check_eq "--buffered --rw write: exit 0" 0 "$RC"
check_eq "… synced before the clock stopped" true "$(bq get points.0.synced <<<"$OUT")"
check "… the sync took time, inside the measured time" awk -v s="$(bq get points.0.sync_ns <<<"$OUT")" \
	-v e="$(bq get points.0.elapsed_ns <<<"$OUT")" 'BEGIN { exit !(s > 0 && s <= e) }'
if [ -n "$disk" ]; then
	check "… the device wrote at least the 8 MiB" test "$(bq get points.0.device.write_bytes <<<"$OUT")" -ge $((8 << 20))
fi
run "$IOLENS" bench $SIZED --buffered --rw write --bs 64k --size 8m "$D"
check_match "… and the table says so" "synced \(fdatasync\) before the clock stopped" "$OUT"
check_eq "… its title: a buffered write, synced" "Sequential write, buffered (synced), psync QD1, bs 64K, 8M test file" \
	"$(head -1 <<<"$OUT" | sed 's/ on .*//')"
run "$IOLENS" bench $SIZED --rw write --bs 64k --size 8m --json "$D"
check_eq "direct writes: no sync needed" false "$(bq get points.0.synced <<<"$OUT")"
check_eq "… the JSON's title: a direct write" "Sequential write, O_DIRECT, psync QD1, bs 64K, 8M test file" \
	"$(bq get title <<<"$OUT" | sed 's/ on .*//')"

# ---- Sweeps and the knee ----------------------------------------------------------------

# (--runtime long enough that each point ends by its size: on a busy machine 8 MiB of 8 KiB reads
# took more than the default 5 s.)
run "$IOLENS" bench --size 8m --runtime 600 --json "$D"
keep_json bs-sweep
check_eq "no --bs: the sweep 4k to 4m, doubling" "4096 8192 16384 32768 65536 131072 262144 524288 1048576 2097152 4194304" \
	"$(bq each bs <<<"$OUT")"
check_eq "… each point moved the 8 MiB" "8388608 8388608 8388608 8388608 8388608 8388608 8388608 8388608 8388608 8388608 8388608" \
	"$(bq each read.bytes <<<"$OUT")"
knee=$(bq knee <<<"$OUT")
check_eq "… the knee marked is the smallest at 95 % of the peak, confirmed or not as the page's rule says" \
	"$(cut -d' ' -f4- <<<"$knee")" "$(cut -d' ' -f1-3 <<<"$knee")"
want=$(awk '{ print $4 }' <<<"$knee" | tr -d '[]')
check_eq "… and the document names it" "$(bq each bs <<<"$OUT" | cut -d' ' -f$((want + 1)))" "$(bq get knee.bs <<<"$OUT")"
dev=$(bq get points.0.device.name <<<"$OUT") fs=$(bq get fs_type <<<"$OUT")
[ "$dev" = null ] && where=$fs || where="$dev ($fs)"
check_eq "… the title says what was measured" "Sequential read, O_DIRECT, psync QD1, bs 4K-4M, 8M test file on $where" \
	"$(bq get title <<<"$OUT")"
check_eq "… latencies in order at every size" ok "$(bq ordered <<<"$OUT")"
check_eq "sweep: bs" bs "$(bq get sweep <<<"$OUT")"
# stderr: one line per cause whatever the points (a busy machine's device moves more than bench at many).
stderr_bounds() { awk 'length($0) > 100 { long++ } seen[$0]++ { again++ } END { printf "%d long, %d repeated", long, again }'; }
check_eq "… its stderr lines at most 100 characters, none repeated" "0 long, 0 repeated" "$(stderr_bounds <<<"$ERR")"

run "$IOLENS" bench $SIZED --bs 4k-48k --size 2m --svg "$T/sweep.svg" "$D"
check_eq "--bs 4k-48k: a range ends at its bound" "4K 8K 16K 32K 48K" "$(awk 'NR > 1 && $1 ~ /^[0-9]+K$/ { printf "%s%s", s, $1; s = " " }' <<<"$OUT")"
check_eq "… the title, above the table: what the options asked" \
	"Sequential read, O_DIRECT, psync QD1, bs 4K-48K, 2M test file" "$(head -1 <<<"$OUT" | sed 's/ on .*//')"
check_match "… says which is the knee, and why when it is not confirmed" \
	"^knee: [0-9]+K, .* MB/s(: the smallest block size to reach 95 % of the peak| \(not confirmed: the peak (is the last point; sweep larger sizes|may be noise, no larger point is near it; use --repeat 3)\))" "$OUT"
if grep -q "^knee: .*not confirmed" <<<"$OUT"; then
	check_eq "… the table marks it knee?" 1 "$(grep -cE ' knee\?$' <<<"$OUT")"
else
	check_eq "… the table marks it" 1 "$(grep -cE ' knee$' <<<"$OUT")"
fi
check "--svg: a well-formed SVG" python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$T/sweep.svg"
check_eq "… two lines of five points each (MB/s and IOPS)" "5 5" \
	"$(python3 -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
print(" ".join(str(len(p.get("points").split())) for p in r.iter("{http://www.w3.org/2000/svg}polyline")))' "$T/sweep.svg")"
check_match "… the knee marked" "knee: [0-9]+K" "$(cat "$T/sweep.svg")"

run "$IOLENS" bench $SIZED --qd-sweep --qd 4 --size 2m --json "$D"
keep_json qd-sweep
check_eq "--qd-sweep --qd 4: queue depths 1, 2, 4 at 4k" "1 2 4|4096 4096 4096" "$(bq each qd <<<"$OUT")|$(bq each bs <<<"$OUT")"
check_eq "… io_uring throughout" "io_uring io_uring io_uring" "$(bq each engine <<<"$OUT")"
check_eq "… random reads by default" randread "$(bq get rw <<<"$OUT")"
check "… the knee is a queue depth" grep -qE '^(1|2|4)$' <<<"$(bq get knee.qd <<<"$OUT")"
check_eq "… confirmed unless it is the deepest, or a peak alone" "$(bq knee <<<"$OUT" | awk '{ print $(NF - 1) }')" \
	"$(bq get knee.confirmed <<<"$OUT" | sed 's/true/True/; s/false/False/')"
check_eq "… the title says what was measured" "Random read, O_DIRECT, io_uring QD1-4, bs 4K, 2M test file" \
	"$(bq get title <<<"$OUT" | sed 's/ on .*//')"
run "$IOLENS" bench $SIZED --qd-sweep --qd 4 --size 2m --latency-target 10s --json "$D"
keep_json latency-target
check_eq "--latency-target 10s: the deepest queue, 4" 4 "$(bq get latency_target.qd <<<"$OUT")"
run "$IOLENS" bench $SIZED --qd-sweep --qd 4 --size 2m --latency-target 1ns "$D"
check_match "--latency-target 1ns: no queue depth meets it, and it says so" "no queue depth keeps p99 within" "$OUT"
check_eq "… exit 0: the runs worked" 0 "$RC"

# --repeat: every run of a point is measured whole; the point is the run of median MB/s.
run "$IOLENS" bench $SIZED --bs 4k,8k --size 2m --repeat 3 --json "$D"
keep_json repeat
check_eq "--repeat 3: three runs of each point" "3 3" "$(bq get points.0.runs.count <<<"$OUT") $(bq get points.1.runs.count <<<"$OUT")"
check_eq "… the point is the whole file once, as one run moves it (not three times)" "2097152 2097152" \
	"$(bq get points.0.read.bytes <<<"$OUT") $(bq get points.1.read.bytes <<<"$OUT")"
check "… its MB/s is the median run's, and the spread is (highest - lowest) / median" python3 -c '
import json, sys
for p in json.loads(sys.argv[1])["points"]:
    runs = sorted(p["runs"]["bytes_per_s"])
    assert abs(p["bytes_per_s"] - runs[1]) <= 1e-3 * runs[1], (p["bytes_per_s"], runs)
    # (JSON has three decimals for a real of 1 or more: a spread of 1.069 is 1.0691 +- 0.0005, as on a loaded machine.)
    spread = p["runs"]["spread"]
    assert abs(spread - (runs[2] - runs[0]) / runs[1]) < (5.01e-4 if spread >= 1 else 1e-4), p["runs"]' "$OUT"
run "$IOLENS" bench $SIZED --bs 4k --size 1m --repeat 2 "$D"
check_match "… the table shows the spread" "^BS +QD +MB/s +SPREAD% +IOPS" "$OUT"
run "$IOLENS" bench $SIZED --bs 4k --size 1m --json "$D"
check_eq "one run: no runs object" null "$(bq get points.0.runs <<<"$OUT")"
if can_evict; then
	# Each cold run starts from an evicted file: the process reads the file from the disk in each
	# direct and each cold run, 4 x 16 MiB (the kernel's count of what it read from storage, its
	# rusage's ru_inblock, GNU time's %I, in 512-byte blocks); a "cold" run from a warm cache
	# would read nothing.
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %I -o "$T/inblock" "$IOLENS" bench --compare-cache --size 16m --repeat 2 --json "$D" >"$T/cc.json" 2>"$T/cc.err"
		inblock=$(tail -n 1 "$T/inblock")
		check "--compare-cache --repeat 2: the file is evicted before each cold run: read from the disk 4 times (ru_inblock $inblock blocks of 512)" \
			test "${inblock:-0}" -ge $((4 * (16 << 20) / 512))
	else
		skip "--compare-cache: the file evicted before each cold run: needs GNU time (make test-deps)"
	fi
fi
check "… DIR is empty again" empty_dir "$D"

# ---- --interval: JSON lines that add up to the result -----------------------------------

run "$IOLENS" bench --bs 4k --size 64m --runtime 1 --time-based --interval 0.2 "$D"
keep_json interval
read -r n sum total last <<<"$(interval_sums <<<"$OUT")"
check "--interval 0.2 over 1 s: about five samples ($n)" test "$n" -ge 4 -a "$n" -le 6
check_eq "… their reads add up to the result's" "$total" "$sum"
check_eq "… the result last" result "$last"
check_eq "… a direction with no I/O in an interval has no mean latency (null, not 0)" "None" \
	"$(python3 -c 'import json, sys
print(set(json.loads(l)["write"]["lat_mean_ns"] for l in sys.stdin if "interval" in l))' <<<"$OUT" | tr -d "{}")"

# A run in which no I/O completes measured nothing: no latency (null), and it fails.
run "$IOLENS" bench --bs 4k --size 4m --runtime 0.000001 --time-based --json "$D"
keep_json no-io
check_eq "a 1 us run: exit 1" 1 "$RC"
check_eq "… no I/O done, its latencies and CPU per I/O null" "0 null null null" \
	"$(bq get points.0.read.ios <<<"$OUT") $(bq get points.0.lat_ns <<<"$OUT") $(bq get points.0.read.lat_ns <<<"$OUT") $(bq get points.0.cpu.sys_ns_per_io <<<"$OUT")"
check_match "… said" "bs 4K: no I/O completed in the 1e-06 s run: nothing was measured" "$ERR"
check "… DIR is empty again" empty_dir "$D"

# ---- --compare-cache: direct, cold, warm -------------------------------------------------

if can_evict; then
	run "$IOLENS" bench $SIZED --compare-cache --size 16m --json --svg "$T/modes.svg" "$D"
	keep_json compare-cache
	check_eq "--compare-cache: direct, cold, warm at 1M" "direct cold warm|1048576 1048576 1048576" \
		"$(bq each mode <<<"$OUT")|$(bq each bs <<<"$OUT")"
	check_eq "… its --svg is bars: MB/s and IOPS for each mode, labelled, the MB/s the JSON's" \
		"$(python3 -c 'import json, sys; print(" ".join("%s:%.1f" % (p["mode"], p["bytes_per_s"] / 1e6) for p in json.load(sys.stdin)["points"]))' <<<"$OUT") 0 lines" \
		"$(python3 -c 'import re, sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
bars = [b.find(ns + "title").text for b in r.iter(ns + "rect") if b.get("class") == "mb_per_s"]
print(" ".join(re.sub(r": ([0-9.]+) MB/s", r":\1", t) for t in bars), len(list(r.iter(ns + "polyline"))), "lines")' "$T/modes.svg")"
	check_eq "… direct reads have no hit ratio (they bypass the cache)" None "$(bq each hit_ratio <<<"$OUT" | cut -d' ' -f1)"
	check "… cold reads miss (hit ratio $(bq get points.1.hit_ratio <<<"$OUT"))" \
		awk -v h="$(bq get points.1.hit_ratio <<<"$OUT")" 'BEGIN { exit !(h != "null" && h < 0.5) }'
	check_eq "… warm reads hit" 1 "$(bq get points.2.hit_ratio <<<"$OUT")"
	check "… DIR is empty again" empty_dir "$D"
else
	skip "--compare-cache: pages cannot be evicted on $(fs_type "$T")"
fi

# ---- The JSON is the one the man page documents ------------------------------------------

# --profile's document (each point with its case and rw), and a saved capacity (with its capacity object).
run env IOLENS_CAPACITY_DIR="$T/capacity" "$IOLENS" bench --profile --size 1m --runtime 30 --repeat 1 --save-capacity --json "$D"
keep_json profile
capacity_file=$(ls "$T"/capacity/*.json 2>/dev/null | head -1)
if [ "$RC" = 0 ] && [ -n "$capacity_file" ]; then
	cp "$capacity_file" "$T/json/capacity"
elif grep -q "is on no disk" <<<"$ERR"; then
	skip "the JSON of a saved capacity: the scratch directory is on no disk"
else
	not_ok "bench --profile --save-capacity for the JSON check: exit $RC: $ERR"
fi

# The documents and JSON lines kept above have the keys iolens-bench(1) lists under JSON, in its
# order (only those it says a run may leave out missing), each object the keys its paragraph
# names, an interval line those of its example; counts, bytes and ns are whole numbers.
cat >"$T/man_keys.py" <<'EOF'
import json, re, shlex, sys
man = open(sys.argv[1]).read()
doc_part, lines_part = man.split("\n.SH JSON\n", 1)[1].split('\n.SS "JSON lines', 1)
lines_part = lines_part.split("\n.SH ", 1)[0]

def bold_ids(line):
    """The keys a .B or .BR line names: its bold words that are JSON keys."""
    m = re.match(r"\.(B|BR) (.*)", line)
    if not m:
        return []
    args = shlex.split(m.group(2))
    bold = args if m.group(1) == "B" else args[0::2]
    return [a for a in bold if re.fullmatch(r"[a-z][a-z0-9_]*", a)]

# The tags of the tagged paragraphs (.TP): at depth 0 the document's keys, at depth 1 (.RS) a
# point's; each tag's paragraph names the keys of the object it is, in their order.
tags = {0: [], 1: []}
said = {}
depth, tag_next, cur = 0, False, None
for line in doc_part.split("\n"):
    if line.startswith(".RS"):
        depth += 1
    elif line.startswith(".RE"):
        depth -= 1
    elif line.startswith(".TP"):
        tag_next = True
    elif tag_next:
        names = bold_ids(line)
        tags[depth] += names
        cur = [(depth, n) for n in names]
        for c in cur:
            said[c] = []
        tag_next = False
    elif line.startswith(".PP"):
        cur = None
    elif cur:
        for c in cur:
            said[c] += [w for w in bold_ids(line) if w not in said[c]]
# The interval line of the example, wrapped over lines there.
interval_keys = json.loads("".join(lines_part.split("\n.EX\n", 1)[1].split("\n.EE", 1)[0].split("\n")))

# Keys a run may leave out, as the page says; a knee names qd or bs, as the sweep.
OPTIONAL = {"mix_read_percent", "latency_target", "read", "write", "capacity", "case", "rw"}
ALTERNATIVES = {"knee": {"bs", "qd", "peak_bs", "peak_qd"}}
COUNTS = re.compile(r"ios|bytes|size|bs|qd|jobs|count|min|mean|p50|p90|p99|p99_9|max|peak_bs|peak_qd|.*_ns|.*_bytes")
bad = []

def keys_in_order(where, keys, documented, optional, depth):
    """keys: documented's, in its order, all but optional ones; a key the paragraph of the
    tag before it names may follow it (synced, then sync_ns)."""
    i = 0
    for k in keys:
        j = documented.index(k, i) if k in documented[i:] else None
        if j is None:
            prev = documented[i - 1] if i else None
            if depth is None or prev is None or k not in said.get((depth, prev), []):
                bad.append("%s: %s is out of the page's order, or not in it (keys %s, the page's %s)" % (where, k, keys, documented))
            continue
        missing = [d for d in documented[i:j] if d not in optional]
        if missing:
            bad.append("%s: %s missing before %s" % (where, missing, k))
        i = j + 1
    missing = [d for d in documented[i:] if d not in optional]
    if missing:
        bad.append("%s: %s missing at the end" % (where, missing))

def objects(where, obj, depth):
    """Each object in obj has the keys its tag's paragraph names."""
    for k, v in obj.items():
        if isinstance(v, dict):
            if (depth, k) not in said:
                bad.append("%s.%s: an object the page does not describe" % (where, k))
                continue
            keys_in_order(where + "." + k, list(v), said[(depth, k)], ALTERNATIVES.get(k, set()), None)
            objects(where + "." + k, v, depth)

def counts(where, value):
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for k, v in items:
        if isinstance(k, str) and COUNTS.fullmatch(k) and v is not None and not isinstance(v, (dict, list)) \
                and type(v) is not int:
            bad.append("%s.%s: %r is not a whole number" % (where, k, v))
        counts("%s.%s" % (where, k), v)

def document(where, doc):
    keys_in_order(where, list(doc), tags[0], OPTIONAL, 0)
    objects(where, {k: v for k, v in doc.items() if k != "points"}, 0)
    for n, p in enumerate(doc.get("points") or []):
        keys_in_order("%s.points.%d" % (where, n), list(p), tags[1], OPTIONAL, 1)
        objects("%s.points.%d" % (where, n), p, 1)
    counts(where, doc)

def same_shape(where, got, want):
    if isinstance(want, dict):
        if not isinstance(got, dict) or list(got) != list(want):
            bad.append("%s: keys %s, the page's %s" % (where, list(got) if isinstance(got, dict) else got, list(want)))
            return
        for k in want:
            same_shape(where + "." + k, got[k], want[k])

for path in sys.argv[2:]:
    name = path.rsplit("/", 1)[-1]
    text = open(path).read()
    if text.startswith("{\n"):
        document(name, json.loads(text))
        continue
    for n, line in enumerate(l for l in text.split("\n") if l.strip()):
        obj = json.loads(line)
        where = "%s line %d" % (name, n + 1)
        if obj.get("type") == "interval":
            same_shape(where, obj, interval_keys)
            counts(where, obj)
        elif list(obj)[-1:] == ["type"] and obj["type"] == "result":
            del obj["type"]
            document(where, obj)
        else:
            bad.append('%s: neither an interval line nor the result, "type" last' % where)
print("\n".join(bad) if bad else "ok: %d keys of the document, %d of a point" % (len(tags[0]), len(tags[1])))
EOF
check_eq "the JSON of the runs above ($(cd "$T/json" && echo *)) is the man page's" \
	"ok: 16 keys of the document, 20 of a point" "$(python3 "$T/man_keys.py" "$TOP/docs/iolens-bench.1" "$T"/json/* 2>&1)"

# ---- Output forms --------------------------------------------------------------------------

run "$IOLENS" bench $SIZED --bs 4k --size 1m --csv -o bs,qd,iops "$D"
check_match "--csv -o bs,qd,iops: the header, then one line" $'^bs,qd,iops\n4K,1,[0-9]+$' "$OUT"
run "$IOLENS" bench $SIZED --bs 4k --size 1m "$D"
check_match "the table's default columns" "^BS +QD +MB/s +IOPS +MEAN/us +P50/us +P99/us +MAX/us +CPU/IO/us +%UTIL" "$OUT"
check_no_match "piped: no progress line on stderr" $'\r' "$ERR"
if command -v script >/dev/null; then
	script -qec "$IOLENS bench --bs 4k --size 64m --runtime 1.2 --time-based $D" /dev/null >"$T/tty.out" 2>&1
	check_match "on a terminal: a progress line with the rate" "direct 4K qd 1: [0-9.]+/1.2 s +[0-9.]+ MB/s +[0-9]+ IOPS" "$(cat "$T/tty.out")"
	check_match "… rewritten in place (carriage return, erase line)" $'\r\e\\[Kdirect' "$(cat "$T/tty.out")"
else
	skip "script(1) is not installed"
fi

# ---- Existing files: read as they are, written only with --force -------------------------

f=$T/existing
head -c $((2 << 20)) /dev/urandom >"$f"
sum_before=$(md5sum <"$f")
run "$IOLENS" bench --bs 4k --json "$f"
check_eq "an existing file is read without --force: all of it" "0 2097152" "$RC $(bq get points.0.read.bytes <<<"$OUT")"
check_eq "… left as it was" "$sum_before" "$(md5sum <"$f")"
run "$IOLENS" bench --rw write --bs 4k "$f"
check_eq "--rw write on an existing file without --force: exit 1" 1 "$RC"
check_match "… saying --force" "exists: bench writes to an existing file only with --force" "$ERR"
check_eq "… not a byte changed" "$sum_before" "$(md5sum <"$f")"
run "$IOLENS" bench --rw write --bs 64k --force --pattern zero "$f"
check_eq "--force --pattern zero: written" 0 "$RC"
check "… with zeros" cmp -s "$f" <(head -c $((2 << 20)) /dev/zero)
check "… and kept: bench did not make it" test -f "$f"
run "$IOLENS" bench --rw write --bs 64k --force --pattern random "$f"
check "--pattern random: incompressible (gzip keeps over 95 %)" test "$(gzip -c "$f" | wc -c)" -gt $(( (2 << 20) * 95 / 100 ))
run "$IOLENS" bench --rw write --bs 64k --force --pattern compressible "$f"
gz=$(gzip -c "$f" | wc -c)
check "--pattern compressible: about half ($gz of 2097152 after gzip)" test "$gz" -gt $(( (2 << 20) * 40 / 100 )) -a "$gz" -lt $(( (2 << 20) * 60 / 100 ))
run "$IOLENS" bench $SIZED --bs 4k --size 4m "$f"
check_match "--size beyond an existing file: refused" "has 2M, less than --size 4M" "$ERR"
check_eq "… exit 1" 1 "$RC"
run "$IOLENS" bench $SIZED --rw write --bs 64k --size 4m --force --pattern zero "$f"
check_eq "--force --size beyond an existing file: extended for the runs, put back to its 2M after" "0 2097152" \
	"$RC $(stat -c %s "$f")"

# ---- Bad input: clear messages, nothing left behind ---------------------------------------

run "$IOLENS" bench $SIZED --bs 1000 --size 1m "$D"
check_eq "--bs 1000 with O_DIRECT: exit 1" 1 "$RC"
check_match "… saying the 512-byte alignment" "block size 1000 is not a multiple of 512 bytes, which O_DIRECT needs" "$ERR"
check "… nothing left in DIR" empty_dir "$D"
run "$IOLENS" bench $SIZED --buffered --bs 1000 --size 1000k --json "$D"
check_eq "--buffered --bs 1000: fine" "0 1024000" "$RC $(bq get points.0.read.bytes <<<"$OUT")"

mkfifo "$T/fifo"
run "$IOLENS" bench "$T/fifo"
check_eq "a FIFO: exit 1, no hang" 1 "$RC"
check_match "… not a file it can use" "not a regular file, a directory or a block device" "$ERR"
run "$IOLENS" bench "$T/no/such/dir/file"
check_match "a file in a missing directory: said" "its directory does not exist" "$ERR"
run "$IOLENS" bench $SIZED --size 2k "$D"
check_eq "the default sweep with nothing that fits: exit 1" 1 "$RC"
check_match "… said" "no block size of the sweep fits in the 2K used" "$ERR"
run "$IOLENS" bench $SIZED --bs 4k --size 1m -o bs,nonesuch "$D"
check_eq "an unknown -o column: exit 2 before anything runs" "2|" "$RC|$(ls -A "$D")"
check_match "… said" "unknown column 'nonesuch'" "$ERR"
run "$IOLENS" bench $SIZED --bs 64k,4k,16k,4k --size 1m --csv -o bs "$D"
check_eq "a --bs list runs in increasing order, each size once" "bs 4K 16K 64K" "$(echo $OUT)"
run "$IOLENS" bench $SIZED --bs 8m --size 4m "$D"
check_eq "a block size above the size: exit 1" 1 "$RC"
check_match "… said" "block size 8M is more than the 4M used" "$ERR"

if is_root; then
	mkdir -p "$T/shm" "$T/small" "$T/ro"
	mount -t tmpfs none "$T/shm" && on_exit "umount '$T/shm'"
	run "$IOLENS" bench $SIZED --size 1m "$T/shm"
	check_eq "tmpfs with O_DIRECT: exit 1" 1 "$RC"
	# What it says of O_DIRECT is held to dd oflag=direct on the same tmpfs (Linux 6.6 and later accept it).
	if dd if=/dev/zero of="$T/shm/dd" bs=4k count=1 oflag=direct status=none 2>/dev/null; then
		direct_said="O_DIRECT, which this kernel accepts there, only copies memory"
	else
		direct_said="this kernel does not support O_DIRECT there"
	fi
	rm -f "$T/shm/dd"
	check_match "… saying tmpfs has no disk, and what dd oflag=direct found of O_DIRECT" \
		"is on tmpfs, which keeps files in memory: there is no disk to measure, and $direct_said" "$ERR"
	check "… nothing left" empty_dir "$T/shm"
	run "$IOLENS" bench $SIZED --buffered --bs 64k --size 1m --json "$T/shm"
	check_eq "tmpfs with --buffered: runs, with no device" "0 null" "$RC $(bq get points.0.device <<<"$OUT")"

	mount -t tmpfs -o size=1m none "$T/small" && on_exit "umount '$T/small'"
	run "$IOLENS" bench $SIZED --buffered --size 4m "$T/small"
	check_eq "no space for the test file: exit 1" 1 "$RC"
	check_match "… saying so, with what is free" "no space for a 4M test file in .*: [0-9.]+[KM]? free" "$ERR"
	check "… nothing left" empty_dir "$T/small"
	# An existing 4-byte file extended with --force where there is no room: put back, the space given back.
	printf 'data' >"$T/small/mine"
	used=$(df --output=used -B1 "$T/small" | tail -1 | tr -d ' ')
	run "$IOLENS" bench $SIZED --buffered --rw write --force --size 4m "$T/small/mine"
	check_eq "--force extension without room: exit 1, the file put back to its 4 bytes, its data kept" "1 4 data" \
		"$RC $(stat -c %s "$T/small/mine") $(head -c 4 "$T/small/mine")"
	check_match "… said" "cannot extend .*/mine to 4M: No space left on device" "$ERR"
	check_eq "… and the filesystem's space given back (df)" "$used" "$(df --output=used -B1 "$T/small" | tail -1 | tr -d ' ')"
	rm -f "$T/small/mine"

	mount -t tmpfs -o ro none "$T/ro" && on_exit "umount '$T/ro'"
	run "$IOLENS" bench $SIZED --buffered --size 1m "$T/ro"
	check_eq "a read-only filesystem: exit 1" 1 "$RC"
	check_match "… said" "cannot make a test file in .*: a read-only filesystem" "$ERR"
else
	skip "tmpfs, no space and read-only mounts need root"
fi

# ---- Block devices: never written when in use or holding data ----------------------------

loop=
if is_root && command -v losetup >/dev/null; then
	truncate -s 32m "$T/disk.img"
	loop=$(losetup -f --show "$T/disk.img" 2>/dev/null)
fi
if [ -n "$loop" ]; then
	on_exit "loop_release $loop $T/disk.img"
	run "$IOLENS" bench $SIZED --bs 64k --size 4m --json "$loop"
	check_eq "a block device is read without --force" "0 4194304" "$RC $(bq get points.0.read.bytes <<<"$OUT")"
	check_eq "… its own diskstats line is the device view" "${loop#/dev/}" "$(bq get points.0.device.name <<<"$OUT")"
	run "$IOLENS" bench $SIZED --rw write --bs 64k --size 4m "$loop"
	check_match "written only with --force" "is a block device: bench writes to one only with --force" "$ERR"
	run "$IOLENS" bench $SIZED --rw write --bs 64k --size 4m --force --json "$loop"
	check_eq "… blank and unused, with --force: written" "0 4194304" "$RC $(bq get points.0.write.bytes <<<"$OUT")"
	check "… the device is still there (bench removes only what it made)" test -b "$loop"

	mkdir -p "$T/mnt"
	# Held for the whole run: mount and mkfs get EBUSY while a write sweep runs, and a signature
	# written behind its back (an md superblock at the end, past --size) stops it before the next point.
	"$IOLENS" bench --rw randwrite --bs 4k-1m --size 16m --force --runtime 2 --time-based --interval 0.1 \
		"$loop" >"$T/held.out" 2>"$T/held.err" &
	held_pid=$!
	for _ in $(seq 600); do [ -s "$T/held.out" ] && break; kill -0 $held_pid 2>/dev/null || break; sleep 0.05; done
	mount "$loop" "$T/mnt" 2>"$T/mount.err"
	mount_rc=$?
	[ $mount_rc = 0 ] && umount "$T/mnt"
	check "during a write sweep the device cannot be mounted ($(head -n 1 "$T/mount.err" | cut -c 1-60))" test $mount_rc != 0
	check_fails "… nor formatted (mkfs.ext4 gets EBUSY)" mkfs.ext4 -q "$loop" 2>/dev/null
	python3 -c 'import os, struct, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
size = os.lseek(fd, 0, os.SEEK_END)
os.pwrite(fd, struct.pack("<IIII", 0xa92b4efc, 0, 90, 0), (size & ~0xffff) - 0x10000)
os.fsync(fd)' "$loop"
	wait $held_pid
	held_rc=$?
	check_eq "a RAID signature written during the sweep: exit 1" 1 "$held_rc"
	check_match "… said" "a filesystem \(linux_raid_member\) appeared on it during the run: stopped, not written again" \
		"$(cat "$T/held.err")"
	held_bs=$(tail -n 1 "$T/held.out" | bq each bs | tr '\n' ' ')
	check_match "… before the sweep's last point (points done: $held_bs)" "^4096 ([0-9]+ )*$" "$held_bs"
	check_no_match "… (1m, the last, not among them)" "1048576" "$held_bs"
	check_eq "… and the signature is intact (blkid)" linux_raid_member "$(blkid -p -o value -s TYPE "$loop")"
	wipefs -qa "$loop" >/dev/null 2>&1
	blockdev --setro "$loop"
	sum_before=$(md5sum <"$loop")
	run "$IOLENS" bench $SIZED --rw write --bs 64k --size 4m --force "$loop"
	check_match "a read-only device (blockdev --setro): said before any write" "$loop is read-only .*: cannot be written" "$ERR"
	check_eq "… exit 1, and not a byte changed" "1 $sum_before" "$RC $(md5sum <"$loop")"
	run "$IOLENS" bench $SIZED --bs 64k --size 4m "$loop"
	check_eq "… and read all the same" 0 "$RC"
	blockdev --setrw "$loop"

	mkfs.ext4 -q -F "$loop" >/dev/null 2>&1
	sum_before=$(md5sum <"$loop")
	run "$IOLENS" bench $SIZED --rw write --bs 64k --size 4m --force "$loop"
	check_match "holding a filesystem: never written, even with --force" "holds a filesystem \(ext4\): never written" "$ERR"
	check_eq "… exit 1, and not a byte changed" "1 $sum_before" "$RC $(md5sum <"$loop")"
	mkdir -p "$T/mnt"
	if mount "$loop" "$T/mnt" 2>/dev/null; then
		run "$IOLENS" bench $SIZED --rw write --bs 64k --size 4m --force "$loop"
		check_match "mounted: never written" "is in use \(mounted, or held by device-mapper, md or swap\): never written" "$ERR"
		check_eq "… exit 1" 1 "$RC"
		umount "$T/mnt"
	else
		skip "cannot mount an ext4 loop device here"
	fi
	# A DOS partition table and nothing else: one partition from sector 2048.
	dd if=/dev/zero of="$loop" bs=1M count=1 status=none conv=fsync
	python3 -c 'import struct, sys
mbr = bytearray(512)
mbr[446:462] = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048, 60000)
mbr[510:512] = b"\x55\xaa"
with open(sys.argv[1], "r+b") as f: f.write(mbr)' "$loop"
	run "$IOLENS" bench $SIZED --rw write --bs 64k --size 4m --force "$loop"
	check_match "a partition table: never written" "holds a partition table \(dos\): never written" "$ERR"

	# On a filesystem of its own, nobody else's I/O reaches the device: what it did is bench's.
	wipefs -qa "$loop" >/dev/null 2>&1; mkfs.ext4 -q -F "$loop" >/dev/null 2>&1
	if mount "$loop" "$T/mnt" 2>/dev/null; then
		on_exit "umount '$T/mnt' 2>/dev/null"
		run "$IOLENS" bench $SIZED --compare-cache --size 8m --json "$T/mnt"
		check_eq "--compare-cache on a loop device's ext4: exit 0" 0 "$RC"
		check "… the device read the 8 MiB for direct reads" \
			test "$(bq get points.0.device.read_bytes <<<"$OUT")" -ge $((8 << 20))
		check "… and for cold ones" test "$(bq get points.1.device.read_bytes <<<"$OUT")" -ge $((8 << 20))
		check "… (almost) nothing for warm ones" test "$(bq get points.2.device.read_bytes <<<"$OUT")" -lt $((1 << 20))
		check_eq "… no warning there: the difference is what it shows" "" "$ERR"
		head -c $((8 << 20)) /dev/urandom >"$T/mnt/warm"
		cat "$T/mnt/warm" >/dev/null
		run "$IOLENS" bench --buffered --bs 1m --json "$T/mnt/warm"
		check "a buffered read of a cached file: the device read (almost) nothing" \
			test "$(bq get points.0.device.read_bytes <<<"$OUT")" -lt $((1 << 20))
		check_match "… which bench points out, in one line" "^iolens bench: loop[0-9]+ moved less than bench: the page cache served it \(see --json\)$" "$ERR"
		check_match "… the JSON with the figures" "the application moved 8M, the device [0-9.]+[BK]? .*: the page cache served it" \
			"$(bq each warning <<<"$OUT")"
		umount "$T/mnt"
	else
		skip "cannot mount an ext4 loop device here"
	fi
else
	skip "block devices: no loop device (needs root and losetup)"
fi

# ---- Signals: the test file goes with the run ---------------------------------------------

S=$T/sig
mkdir -p "$S"
"$IOLENS" bench --bs 4k --size 8m --runtime 60 --time-based "$S" >"$T/sig.out" 2>"$T/sig.err" &
pid=$!
# Measuring: its reads (rchar: bytes read by syscalls) past what reading /proc and /sys comes to.
reading() { [ "$(awk '/^rchar:/ { print $2 }' "/proc/$pid/io" 2>/dev/null || echo 0)" -gt $((1 << 20)) ]; }
wait_until reading
kill -TERM "$pid"
wait "$pid"
check_eq "SIGTERM during a run: exit 143" 143 "$?"
check "… the test file is removed" empty_dir "$S"
check_match "… and it says so" "interrupted by signal 15; the test file is removed" "$(cat "$T/sig.err")"
check_match "… after the results so far" "^BS +QD" "$(cat "$T/sig.out")"
"$IOLENS" bench --bs 4k --size 512m "$S" >/dev/null 2>"$T/sig.err" &
pid=$!
for i in $(seq 100); do [ -n "$(ls -A "$S")" ] && break; sleep 0.02; done
kill -INT "$pid"
wait "$pid"
check_eq "SIGINT while laying out: exit 130" 130 "$?"
check "… the test file is removed" empty_dir "$S"
# A reader that goes away (| head -2): bench stops at the EPIPE, removes its file, exits as SIGPIPE would.
"$IOLENS" bench --bs 4k --size 64m --runtime 30 --time-based --interval 0.1 "$S" 2>"$T/sig.err" | head -2 >"$T/sig.out"
check_eq "--interval into a pipe that closes: exit 141, as killed by SIGPIPE" "141 2" "${PIPESTATUS[0]} $(wc -l <"$T/sig.out")"
check "… the test file is removed" empty_dir "$S"
check_match "… and it says so" "the output was closed: stopped; the test file is removed" "$(cat "$T/sig.err")"
for sig in HUP; do
	"$IOLENS" bench --bs 4k --size 8m --runtime 60 --time-based "$S" >/dev/null 2>"$T/sig.err" &
	pid=$!
	for i in $(seq 100); do [ -n "$(ls -A "$S")" ] && break; sleep 0.05; done
	kill -$sig "$pid"
	wait "$pid"
	rc=$?
	check_eq "SIG$sig during a run: exit $((128 + $(kill -l $sig)))" $((128 + $(kill -l $sig))) "$rc"
	check "… the test file is removed" empty_dir "$S"
done

# ---- kill -9 leaves the file: the next run in that directory removes it, and only such files ----
# A run that goes on meanwhile (its file must stay), started first.
"$IOLENS" bench --bs 4k --size 8m --runtime 60 --time-based "$S" >/dev/null 2>&1 &
live=$!
for i in $(seq 100); do [ "$(ls "$S" | grep -c "^iolens-bench\.$live\.")" = 1 ] && break; sleep 0.05; done
live_file=$(ls "$S" | grep "^iolens-bench\.$live\.")
"$IOLENS" bench --bs 4k --size 8m --runtime 60 --time-based "$S" >/dev/null 2>&1 &
pid=$!
for i in $(seq 100); do [ "$(ls "$S" | grep -c "^iolens-bench\.$pid\.")" = 1 ] && break; sleep 0.05; done
left=$(ls "$S" | grep "^iolens-bench\.$pid\.")
check "the test file is marked as bench's (xattr user.iolens.bench: pid and start time)" python3 -c '
import os, sys
mark = os.getxattr(sys.argv[1], "user.iolens.bench").decode().split()
assert mark[0] == sys.argv[2] and mark[1] == open("/proc/%s/stat" % sys.argv[2]).read().rsplit(")", 1)[1].split()[19], mark' \
	"$S/$left" "$pid"
kill -KILL "$pid"; wait "$pid" 2>/dev/null
check "SIGKILL leaves it ($left)" test -f "$S/$left"
install -m 644 /dev/null "$S/iolens-bench.999999.abc"       # not 0600: someone else's
install -m 600 /dev/null "$S/iolens-bench.999998.abc.keep"  # not the name bench gives
run "$IOLENS" bench --bs 4k --size 1m --runtime 0.1 "$S"
check_match "the next run removes it and says so" "removed $S/$left: a test file an earlier run left \(pid $pid" "$ERR"
check "… gone" test ! -e "$S/$left"
check "… the file of a run still going stays ($live_file)" test -f "$S/$live_file"
check "… files that only look like bench's stay" test -f "$S/iolens-bench.999999.abc" -a -f "$S/iolens-bench.999998.abc.keep"
kill -TERM "$live"; wait "$live" 2>/dev/null
rm -f "$S/iolens-bench.999999.abc" "$S/iolens-bench.999998.abc.keep"
check "… and that run removed its own when told to end" empty_dir "$S"

# ---- Usage errors ---------------------------------------------------------------------------

for args in "--bs 3x" "--bs 4k-" "--rw sideways" "--mix 101" "--qd 0" "--qd 4 --engine psync" \
	"--compare-cache --rw write" "--compare-cache --bs 4k,8k" "--interval 1 --csv" "--runtime 0" \
	"--latency-target fast" "--engine aio" "--repeat 0" "--repeat 100" "$D $D"; do
	run "$IOLENS" bench $args
	check_eq "bench $args: exit 2" 2 "$RC"
done
run "$IOLENS" bench --rw sideways
check_match "… with a message that lists the modes" "'sideways' is not read, write, randread, randwrite, rw or randrw" "$ERR"

echo "1..$t_count"
