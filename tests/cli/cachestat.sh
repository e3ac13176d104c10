#!/usr/bin/env bash
# cachestat.sh: iolens cachestat and cachetop count page-cache misses, hits and dirties exactly on controlled workloads, charge them to the right process and file, and fail cleanly.
. "$(dirname "$0")/lib.sh"

can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where pages cannot be evicted"
need_ebpf

# Sums of the JSON lines of cachetop (stdin) for one process or one file: hits misses dirties accesses.
# A file's rows: by its name, or as "dev M:m inode N" in the intervals before it was named (naming
# takes a quarter of an interval at most: on a slow run a file may stay unnamed for a few).
cat >"$T/sum.py" <<'EOF'
import json, os, sys
what, key = sys.argv[1], sys.argv[2]
keys = {key}
if what == "file":
    st = os.stat(key)
    keys.add("dev %d:%d inode %d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))
total = {"hits": 0, "misses": 0, "dirties": 0, "accesses": 0}
names = []
for line in sys.stdin:
    doc = json.loads(line)
    for row in doc.get("processes", []) + doc.get("files", []):
        if (what == "pid" and str(row.get("pid")) == key) or (what == "file" and row.get("file") in keys):
            for k in total:
                total[k] += row[k] or 0
            names.append(row.get("comm"))
print(total["hits"], total["misses"], total["dirties"], total["accesses"], names[-1] if names else "none")
EOF
F="python3 $TOP/tests/cli/cache_formats.py"
within_1pc() { awk -v a="$1" -v n="$2" 'BEGIN { d = a - n; if (d < 0) d = -d; exit !(d * 100 <= n) }'; }
at_most() { awk -v a="$1" -v n="$2" 'BEGIN { exit !(a + 0 <= n + 0) }'; }

f=$T/data64
head -c $((64 << 20)) /dev/urandom >"$f"
sync "$f"
pages=16384

# Two watchers, per process and per file, around the workloads; the last interval is let
# through before Ctrl-C.
"$IOLENS" cachetop --json 0.3 >"$T/procs.json" 2>"$T/procs.err" &
top_procs=$!
"$IOLENS" cachetop --files --json 0.3 >"$T/files.json" 2>"$T/files.err" &
top_files=$!
# The same in CSV beside them: the same counts.
"$IOLENS" cachetop --csv 0.3 >"$T/procs.csv" 2>"$T/procs-csv.err" &
top_procs_csv=$!
"$IOLENS" cachetop --files --csv 0.3 >"$T/files.csv" 2>"$T/files-csv.err" &
top_files_csv=$!
on_exit "kill $top_procs $top_files $top_procs_csv $top_files_csv 2>/dev/null"
top_start=$(date +%s%N)
# Counting from the first interval on: a line printed means its probes are attached (CSV: its
# header comes with the first interval).
wait_until lines_at_least "$T/procs.json" 1
wait_until lines_at_least "$T/files.json" 1
wait_until lines_at_least "$T/procs.csv" 1
wait_until lines_at_least "$T/files.csv" 1

"$IOLENS" evict "$f" >/dev/null
dd if="$f" of=/dev/null bs=1M status=none &
cold=$!
wait $cold
dd if="$f" of=/dev/null bs=1M status=none &
warm=$!
wait $warm
dd if=/dev/zero of="$T/written" bs=1M count=10 status=none &
writer=$!
wait $writer
# Written back, then written again in place: the pages are cached, every write a hit.
sync "$T/written"
dd if=/dev/zero of="$T/written" bs=1M count=10 conv=notrunc status=none &
rewriter=$!
wait $rewriter
# Run once first so that python3's own files are cached (a kernel thread evicts idle pages): the
# counted run's misses are then the mapped file's only.
map_read='import mmap, sys
f = open(sys.argv[1], "rb"); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
print(sum(m[i] for i in range(0, len(m), 4096)) >= 0)'
python3 -c "$map_read" /dev/null 2>/dev/null
python3 -c "$map_read" "$f" >/dev/null &
mapper=$!
wait $mapper
# A process that runs a new program is shown by its new name.
bash -c 'exec dd if="$0" of=/dev/null bs=1M status=none' "$f" &
execer=$!
wait $execer
# Files are named in the background (iolens-cachetop(1), FILE NAMES): a file's path shows in the
# rows of an interval where it has counts once it was found. A page of it read (a hit) every try
# until its row has its path: on a busy machine the reads above may all end before.
named_row() { dd if="$f" of=/dev/null bs=4k count=1 status=none; grep -q "\"file\":\"$f\"" "$T/files.json"; }
wait_until named_row
# Two more intervals each, so the one the last workload ended in is printed whole.
n_procs=$(lines_of "$T/procs.json") n_files=$(lines_of "$T/files.json")
wait_until lines_at_least "$T/procs.json" $((n_procs + 2))
wait_until lines_at_least "$T/files.json" $((n_files + 2))
# The CSV watchers started after the JSON ones: two more JSON intervals cover theirs too.
n_procs=$(lines_of "$T/procs.json")
wait_until lines_at_least "$T/procs.json" $((n_procs + 2))
kill -INT $top_procs $top_files $top_procs_csv $top_files_csv
wait $top_procs
check_eq "cachetop --json: Ctrl-C ends it with exit 0" 0 "$?"
wait $top_files
wait $top_procs_csv
check_eq "cachetop --csv: Ctrl-C ends it with exit 0" 0 "$?"
wait $top_files_csv
top_end=$(date +%s%N)
$F tojson "$T/procs.csv" >"$T/procs-csv.json"
$F tojson "$T/files.csv" >"$T/files-csv.json"
check_eq "cachetop --csv: the header is the JSON line's keys, in order" same "$($F keys "$T/procs.csv" "$T/procs.json")"
check_eq "cachetop --files --csv: the same" same "$($F keys "$T/files.csv" "$T/files.json")"
check_eq "cachetop --csv and --json: time_ns, interval_ns, bytes and 0-1 ratios alike" ok \
	"$($F check "$T/procs.csv" "$T/procs.json" "$top_start" "$top_end")"
check_eq "cachetop --files --csv and --json: the same" ok "$($F check "$T/files.csv" "$T/files.json" "$top_start" "$top_end")"
for p in $cold $warm $writer $rewriter $mapper; do
	check_eq "cachetop --csv and --json side by side: the same hits, misses, dirties, accesses and name for pid $p" \
		"$(python3 "$T/sum.py" pid $p <"$T/procs.json")" "$(python3 "$T/sum.py" pid $p <"$T/procs-csv.json")"
done
for file in "$f" "$T/written"; do
	check_eq "cachetop --files --csv and --json side by side: the same counts for ${file##*/}" \
		"$(python3 "$T/sum.py" file "$file" <"$T/files.json")" "$(python3 "$T/sum.py" file "$file" <"$T/files-csv.json")"
done

read -r hits misses dirties accesses comm < <(python3 "$T/sum.py" pid $cold <"$T/procs.json")
check "a cold read of 64 MiB: $misses misses for dd, 16384 within 1 %" within_1pc "$misses" $pages
check "… few hits (only its program and libraries: $hits)" at_most "$hits" $((pages / 10))
check_eq "… charged to dd, by pid and name" dd "$comm"
read -r hits misses dirties accesses comm < <(python3 "$T/sum.py" pid $warm <"$T/procs.json")
check "reading it again: $hits hits, 16384 and its program's pages (within 10 %)" \
	awk -v h="$hits" -v n=$pages 'BEGIN { exit !(h >= n * 0.99 && h <= n * 1.1) }'
check "… no misses ($misses)" at_most "$misses" $((pages / 100))
read -r hits misses dirties accesses comm < <(python3 "$T/sum.py" pid $writer <"$T/procs.json")
check "a 10 MiB buffered write into a new file: $dirties dirties, 2560 within 1 %" within_1pc "$dirties" 2560
check "… (nearly) every page a write miss: WRITE_HIT% under 1" python3 -c 'import json, sys
rows = [r for l in sys.stdin for r in json.loads(l)["processes"] if r["pid"] == int(sys.argv[1]) and r["dirties"]]
sys.exit(not rows or any(r["write_hit"] > 0.01 for r in rows))' $writer <"$T/procs.json"
read -r hits misses dirties accesses comm < <(python3 "$T/sum.py" pid $rewriter <"$T/procs.json")
check "rewriting it in place once it was written back: $dirties dirties, 2560 within 1 %" within_1pc "$dirties" 2560
check_eq "… no misses, WRITE_HIT% 100" "0 1" "$misses $(python3 -c 'import json, sys
print(" ".join(sorted({str(r["write_hit"]) for l in sys.stdin for r in json.loads(l)["processes"] if r["pid"] == int(sys.argv[1]) and r["dirties"]})))' $rewriter <"$T/procs.json")"
read -r hits misses dirties accesses comm < <(python3 "$T/sum.py" pid $mapper <"$T/procs.json")
check "reading through mmap counts as hits ($hits for python3)" test "$hits" -gt 1000
check "… not as misses ($misses)" at_most "$misses" $((pages / 100))
read -r hits misses dirties accesses comm < <(python3 "$T/sum.py" pid $execer <"$T/procs.json")
check_eq "a process that ran exec is shown by its new name" dd "$comm"

# Per file: the file's own pages, nobody else's.
read -r hits misses dirties accesses comm < <(python3 "$T/sum.py" file "$f" <"$T/files.json")
check_eq "cachetop --files names the file by its path" "$f" "$(grep -o "\"file\":\"$f\"" "$T/files.json" | head -1 | cut -d'"' -f4)"
check "cachetop --files: the file was read three times whole and once through mmap: $accesses accesses, over 3 x 16384" \
	test "$accesses" -gt $((3 * pages))
check "… its misses are the cold read's: $misses, 16384 within 1 %" within_1pc "$misses" $pages
check "… and the other reads hit: $hits, over 2 x 16384" test "$hits" -gt $((2 * pages))
read -r hits misses dirties accesses comm < <(python3 "$T/sum.py" file "$T/written" <"$T/files.json")
check "… the written file (written twice), closed before it was seen, found next to a known one: $dirties dirties, 5120 within 1 %" \
	within_1pc "$dirties" 5120

# Per cgroup: this shell's cgroup, by its path, with the reads done in it; and a cgroup of its own
# (where cgroup v2 lets this test make one), whose only process reads the file: the same counts in
# CSV as in JSON.
mycg=$(sed -n 's/^0:://p' /proc/self/cgroup)
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
if [ -n "$mycg" ]; then
	own=
	if [ -n "$cg2" ] && mkdir "$cg2$mycg/iolens-cachestat-$$" 2>/dev/null; then
		own=${mycg%/}/iolens-cachestat-$$
		on_exit "remove_cgroup '$cg2$own'"
		mkfifo "$T/go"
		# It waits (two intervals of both watchers) in the new cgroup before it reads.
		bash -c 'read -r _ <"$1"; exec cat "$2"' _ "$T/go" "$f" >/dev/null &
		reader=$!
		echo $reader >"$cg2$own/cgroup.procs" || own=
	fi
	"$IOLENS" cachetop --cgroup --json 0.3 >"$T/cgroups.json" 2>"$T/cgroups.err" &
	watcher=$!
	"$IOLENS" cachetop --cgroup --csv 0.3 >"$T/cgroups.csv" 2>"$T/cgroups-csv.err" &
	watcher_csv=$!
	cg_start=$(date +%s%N)
	wait_until lines_at_least "$T/cgroups.json" 1
	wait_until lines_at_least "$T/cgroups.csv" 1
	cat "$f" >/dev/null
	if [ -n "$own" ]; then
		n=$(lines_of "$T/cgroups.json")
		wait_until lines_at_least "$T/cgroups.json" $((n + 2))
		echo go >"$T/go"
		wait $reader
	fi
	n=$(lines_of "$T/cgroups.json")
	wait_until lines_at_least "$T/cgroups.json" $((n + 2))
	kill -INT $watcher $watcher_csv
	wait $watcher
	check_eq "cachetop --cgroup: exit 0" 0 "$?"
	wait $watcher_csv
	check_eq "cachetop --cgroup --csv: exit 0" 0 "$?"
	cg_end=$(date +%s%N)
	hits=$(python3 -c 'import json, sys
print(sum(r["hits"] for l in sys.stdin for r in json.loads(l)["cgroups"] if r["cgroup"] == sys.argv[1]))' "$mycg" <"$T/cgroups.json")
	check "… this shell's cgroup ($mycg) has the 16384 hits of the read (${hits})" test "$hits" -ge $pages
	check_eq "cachetop --cgroup --csv: the header is the JSON line's keys, in order" same "$($F keys "$T/cgroups.csv" "$T/cgroups.json")"
	check_eq "… time_ns, interval_ns, bytes and 0-1 ratios as in JSON" ok \
		"$($F check "$T/cgroups.csv" "$T/cgroups.json" "$cg_start" "$cg_end")"
	if [ -n "$own" ]; then
		$F tojson "$T/cgroups.csv" >"$T/cgroups-csv.json"
		sums() { python3 -c 'import json, sys
rows = [r for l in sys.stdin for r in json.loads(l)["cgroups"] if r["cgroup"] == sys.argv[1]]
print(*[sum(r[k] for r in rows) for k in ("hits", "misses", "dirties", "accesses")])' "$own"; }
		read -r hits _ <<<"$(sums <"$T/cgroups.json")"
		check "… a cgroup of its own ($own): the read's 16384 hits ($hits)" test "${hits:-0}" -ge $pages
		check_eq "… the same hits, misses, dirties and accesses in CSV as in JSON" "$(sums <"$T/cgroups.json")" "$(sums <"$T/cgroups-csv.json")"
	else
		skip "cachetop --cgroup: no cgroup of its own for this test (cgroup v2 at '$cg2')"
	fi
else
	skip "no cgroup v2 path for this shell"
fi

# A process with a hostile name (an escape sequence, a bell, bytes that are not UTF-8), in every
# format: nothing reaches a terminal raw, the table cuts it to 16 characters, never inside a
# character, and JSON and CSV give it back whole (the escape iolens(1) documents).
hn() { python3 "$TOP/tests/cli/hostile_names.py" "$@"; }
hostile=$'c\e[31m\xff\x80\ax'
cp "$(command -v cat)" "$T/$hostile"
hostile_hex=$(printf '%s' "$hostile" | od -An -tx1 | tr -d ' \n')
for fmt in "" --json --csv; do
	# (The last round's output gone first: the redirection is the child's, and the wait below
	# would find that output before this watcher truncated it, its probes not yet attached.)
	rm -f "$T/hostile.out"
	"$IOLENS" cachetop -n 100000 $fmt 0.3 >"$T/hostile.out" 2>"$T/hostile.err" &
	watcher=$!
	wait_until grep -q . "$T/hostile.out"
	"$T/$hostile" "$f" >/dev/null
	# Until its row is out whole: another test's process may share the name's first bytes.
	case $fmt in
	--json) wait_until 60 hn json "$T/hostile.out" "$hostile_hex" >/dev/null ;;
	--csv) wait_until 60 hn csv "$T/hostile.out" "$hostile_hex" >/dev/null ;;
	*) wait_until 60 grep -qE '^[0-9]+ +[a-z0-9]+ +c\\x1b\[31m\\xff\+ +[0-9]' "$T/hostile.out" ;;
	esac
	kill -INT $watcher
	wait $watcher
	check "cachetop ${fmt:---table} with a hostile process name: clean$(hn clean "$T/hostile.out" "$T/hostile.err" | sed 's/^/: /')" \
		hn clean "$T/hostile.out" "$T/hostile.err"
	case $fmt in
	--json) check "… JSON: strict UTF-8, the name unescapes to its bytes$(hn json "$T/hostile.out" "$hostile_hex" | sed 's/^/: /')" \
		hn json "$T/hostile.out" "$hostile_hex" ;;
	--csv) check "… CSV: one record a row, the name unescapes to its bytes$(hn csv "$T/hostile.out" "$hostile_hex" | sed 's/^/: /')" \
		hn csv "$T/hostile.out" "$hostile_hex" ;;
	*) check_match "… the table: its first 15 columns, escaped, cut before the escape that would pass them, and '+' saying so" \
		'^[0-9]+ +[a-z0-9]+ +c\\x1b\[31m\\xff\+ +[0-9]' "$(cat "$T/hostile.out")" ;;
	esac
done

# ---- cachestat: system-wide -----------------------------------------------------------------

"$IOLENS" evict "$f" >/dev/null
"$IOLENS" cachestat --json 0.3 >"$T/stat.json" 2>"$T/stat.err" &
watcher=$!
"$IOLENS" cachestat --csv 0.3 >"$T/stat.csv" 2>"$T/stat-csv.err" &
watcher_csv=$!
stat_start=$(date +%s%N)
wait_until lines_at_least "$T/stat.json" 1
wait_until lines_at_least "$T/stat.csv" 2
cat "$f" >/dev/null
n=$(lines_of "$T/stat.json")
wait_until lines_at_least "$T/stat.json" $((n + 2))
kill -INT $watcher $watcher_csv
wait $watcher
check_eq "cachestat --json: exit 0 on Ctrl-C" 0 "$?"
wait $watcher_csv
check_eq "cachestat --csv: exit 0 on Ctrl-C" 0 "$?"
stat_end=$(date +%s%N)
check_eq "cachestat --csv: the header is the JSON line's keys, in order" same "$($F keys "$T/stat.csv" "$T/stat.json")"
check_eq "… time_ns, interval_ns, bytes and 0-1 ratios as in JSON" ok "$($F check "$T/stat.csv" "$T/stat.json" "$stat_start" "$stat_end")"
read -r misses_json misses_csv cached_json cached_csv <<<"$(python3 -c 'import csv, json, statistics, sys
js = [json.loads(l) for l in open(sys.argv[1])]
cs = list(csv.DictReader(open(sys.argv[2], newline="")))
print(sum(r["misses"] for r in js), sum(int(r["misses"]) for r in cs),
      int(statistics.median(r["cached_bytes"] for r in js)), int(statistics.median(int(r["cached_bytes"]) for r in cs)))' "$T/stat.json" "$T/stat.csv")"
check "… side by side, the cold read's misses in both (JSON $misses_json, CSV $misses_csv)" \
	test "$misses_json" -ge $pages -a "$misses_csv" -ge $pages
check "… cached_bytes in bytes in both (JSON $cached_json, CSV $cached_csv: within 10 %)" \
	awk -v a="$cached_json" -v b="$cached_csv" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d * 10 <= a) }'
read -r lines misses hits ratio_ok <<<"$(python3 -c 'import json, sys
rows = [json.loads(l) for l in sys.stdin]
ok = all(r["hit_ratio"] is None or 0 <= r["hit_ratio"] <= 1 for r in rows)
print(len(rows), sum(r["misses"] for r in rows), sum(r["hits"] for r in rows), ok)' <"$T/stat.json")"
check "… a line every 0.3 s ($lines)" test "$lines" -ge 3
check "… the system missed at least the 16384 pages of the cold read ($misses)" test "$misses" -ge $pages
check_eq "… hit ratios within 0-1" True "$ratio_ok"
check_eq "… nothing said on stderr" "" "$(cat "$T/stat.err")"

run "$IOLENS" cachestat 0.2 2
check_eq "cachestat 0.2 2: two lines after the header" 3 "$(wc -l <<<"$OUT")"
check_match "… bcc's columns, then evictions and refaults" "^ +HITS +MISSES +DIRTIES +HITRATIO +BUFFERS_MB +CACHED_MB +EVICTIONS +REFAULTS$" "$(head -1 <<<"$OUT")"
check_match "… numbers in them" "^ +[0-9-]+ +[0-9]+ +[0-9]+ +([0-9.]+%|-) +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+$" "$(tail -1 <<<"$OUT")"
run "$IOLENS" cachestat -T 0.2 1
check_match "-T: a TIME column first" $'^TIME +HITS +MISSES .*\n[0-9]{2}:[0-9]{2}:[0-9]{2} +[0-9]+ ' "$OUT"
run "$IOLENS" cachestat -T --csv 0.2 1
check_match "--csv: a header of the JSON keys, -T or not (time_ns: no time of day)" \
	$'^time_ns,interval_ns,mode,mechanism,hits,misses,dirties,hit_ratio,buffers_bytes,cached_bytes,evictions,accesses,reads,maps,refaults\n[0-9]{19},[0-9]+,ebpf,(tracepoints|fentry|kprobes),[0-9]+,' "$OUT"

# ---- cachetop: bcc's screen, sorting, rows ------------------------------------------------

run "$IOLENS" cachetop 0.3 1
check_match "cachetop piped: bcc cachetop's header line" "^[0-9]{2}:[0-9]{2}:[0-9]{2} Buffers MB: [0-9]+ / Cached MB: [0-9]+ / Sort: HITS / Order: descending$" "$(head -1 <<<"$OUT")"
check_match "… and its columns" "^PID +UID +CMD +HITS +MISSES +DIRTIES +READ_HIT% +WRITE_HIT% +REFAULTS +CONTAINER$" "$(sed -n 2p <<<"$OUT")"
run "$IOLENS" cachetop --sort misses -r -n 2 --json 0.3 1
check_eq "cachetop --json: no event lost to a full table (dropped 0)" 0 \
	"$(python3 -c 'import json, sys; print(json.loads(sys.stdin.read())["dropped"])' <<<"$OUT")"
check_eq "--sort misses -r -n 2: at most two rows, fewest misses first" ok "$(python3 -c 'import json, sys
rows = json.loads(sys.stdin.read())["processes"]
m = [r["misses"] for r in rows]
print("ok" if len(rows) <= 2 and m == sorted(m) else rows)' <<<"$OUT")"

if command -v script >/dev/null; then
	# Keys are typed once the screen shows what they act on.
	(wait_until grep -q "Sort: HITS" "$T/screen"; printf '>'; wait_until grep -q "Sort: MISSES" "$T/screen"; printf 'q') |
		TERM=xterm script -qfec "$IOLENS cachetop 0.3" /dev/null >"$T/screen" 2>&1
	check_eq "on a terminal: full screen, q quits with exit 0" 0 "$?"
	check_match "… > sorts by the next column (MISSES)" "Sort: MISSES" "$(cat "$T/screen")"
	(wait_until grep -q "terminal too small" "$T/small"; printf 'q') |
		TERM=xterm script -qfec "stty rows 3 cols 30; $IOLENS cachetop 0.3" /dev/null >"$T/small" 2>&1
	check_eq "a terminal too small: still exit 0 on q" 0 "$?"
	check_match "… saying the terminal is too small" "terminal too small" "$(cat "$T/small")"
else
	skip "script(1) is not installed"
fi

# ---- Bad input ------------------------------------------------------------------------------------

for args in "0" "-1" "abc" "1 0" "1 2 3" "--bogus"; do
	run "$IOLENS" cachestat $args
	check_eq "cachestat $args: exit 2" 2 "$RC"
done
for args in "--sort nothing" "-n 0" "-p abc" "0"; do
	run "$IOLENS" cachetop $args
	check_eq "cachetop $args: exit 2" 2 "$RC"
done
run "$IOLENS" cachetop -p 99999999999
check_eq "cachetop -p 99999999999: exit 2 (not a pid)" 2 "$RC"
pid=$(sh -c 'echo $$')
run "$IOLENS" cachetop -p "$pid" 0.2 1
check_eq "cachetop -p PID of a process that is gone: exit 1" 1 "$RC"
check_match "… said" "no such process" "$ERR"
timeout 20 "$IOLENS" cachestat 0.1 >&- 2>"$T/closed.err"
check_eq "stdout closed: exits 1 at once, no hang" 1 "$?"
check_match "… saying why" "standard output is closed" "$(cat "$T/closed.err")"
if command -v bpftool >/dev/null; then
	# Others may run iolens meanwhile: follow the ids of the programs this one loads.
	# (its program on the read path: on_read, or read_fentry or read_kprobe on kernels before 6.9)
	prog_ids() { bpftool prog show 2>/dev/null | awk '/ name (on_read|read_fentry|read_kprobe) /{ print $1 }' | sort; }
	before=$(prog_ids)
	"$IOLENS" cachestat 0.2 >/dev/null &
	watcher=$!
	new_progs() { [ -n "$(comm -13 <(echo "$before") <(prog_ids))" ]; }
	wait_until new_progs
	mine=$(comm -13 <(echo "$before") <(prog_ids))
	check "while cachestat runs, its eBPF programs are loaded" test -n "$mine"
	kill -INT $watcher
	wait $watcher
	# The kernel frees programs a little after their process ends.
	for i in $(seq 50); do [ -z "$(comm -12 <(echo "$mine") <(prog_ids))" ] && break; sleep 0.1; done
	check_eq "… and after Ctrl-C none of them stays" "" "$(comm -12 <(echo "$mine") <(prog_ids))"
fi

# ---- Without eBPF ------------------------------------------------------------------------------------

run "${AS_NOBODY[@]}" "$IOLENS" cachestat --json 0.2 2
check_eq "as nobody: cachestat still runs" 0 "$RC"
check_match "… says once that it estimates from /proc, and why" "no eBPF \(needs root.*estimating from /proc" "$ERR"
check_eq "… hits unknown, never a made-up number" "None None" "$(python3 -c 'import json, sys; print(*[json.loads(l)["hits"] for l in sys.stdin])' <<<"$OUT")"
check_eq "… in procfs mode" "procfs" "$(python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["mode"])' <<<"$OUT")"
run "${AS_NOBODY[@]}" "$IOLENS" cachetop --files 0.2 1
check_eq "as nobody, cachetop --files: exit 1" 1 "$RC"
check_match "… needs eBPF" "--files needs eBPF" "$ERR"

ln -s "$IOLENS" "$T/cachestat"
run "$T/cachestat" --help
check_match "a link named cachestat runs iolens cachestat" "Usage:" "$OUT"

echo "1..$t_count"
