#!/usr/bin/env bash
# cachetop_replay.sh: iolens cachetop on recorded /proc trees (IOLENS_REPLAY), as nobody: each row held to the
# recorded io, stat and status files (a second implementation, python), the three formats to each other, a
# process that ends and a reused pid, and bad recordings refused or said.
. "$(dirname "$0")/lib.sh"

FIX=$TOP/tests/fixtures/cachetop
export TZ=UTC
chmod 755 "$T"

# nobody CMD...: run CMD as nobody (the replay needs no privilege: the recording is plain files).
nobody() { run "${AS_NOBODY[@]}" "$@"; }

# The truths, from the recorded files: for each interval (samples i-1, i), the rows /proc mode
# must give: the pids in both samples that are one process (same start time and comm) whose
# counters did not go back and that read or wrote something; pages are bytes / 4096, as
# cachetop counts them.
truths() {
	python3 - "$1" <<'PY'
import json, os, sys
root = sys.argv[1]
def sample(n):
    d = os.path.join(root, str(n))
    mono, real = (int(x) for x in open(os.path.join(d, "time")).read().split())
    procs = {}
    for pid in os.listdir(os.path.join(d, "proc")):
        if not pid.isdigit():
            continue
        p = os.path.join(d, "proc", pid)
        io = {k: int(v) for k, v in (l.split(": ") for l in open(p + "/io").read().splitlines())}
        stat = open(p + "/stat").read()
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        start = int(stat[stat.rindex(")") + 2:].split()[19])
        uid = next(int(l.split()[1]) for l in open(p + "/status") if l.startswith("Uid:"))
        procs[int(pid)] = dict(io=io, comm=comm, start=start, uid=uid)
    mem = {l.split(":")[0]: int(l.split()[1]) * 1024 for l in open(os.path.join(d, "proc/meminfo"))}
    return dict(mono=mono, real=real, procs=procs, buffers=mem["Buffers"], cached=mem["Cached"])
n = 0
samples = []
while os.path.isdir(os.path.join(root, str(n))):
    samples.append(sample(n))
    n += 1
out = []
for a, b in zip(samples, samples[1:]):
    rows = []
    for pid, after in b["procs"].items():
        before = a["procs"].get(pid)
        if not before or before["start"] != after["start"] or before["comm"] != after["comm"]:
            continue
        d = {k: after["io"][k] - before["io"][k] for k in ("rchar", "read_bytes", "write_bytes")}
        if min(d.values()) < 0 or (d["rchar"] == 0 and d["write_bytes"] == 0):
            continue
        reads, misses = d["rchar"] // 4096, d["read_bytes"] // 4096
        rows.append(dict(pid=pid, uid=after["uid"], comm=after["comm"], hits=max(0, reads - misses),
                         misses=misses, dirties=d["write_bytes"] // 4096, reads=reads))
    rows.sort(key=lambda r: r["pid"])
    out.append(dict(time_ns=b["real"], interval_ns=b["mono"] - a["mono"], buffers_bytes=b["buffers"],
                    cached_bytes=b["cached"], processes=rows))
print(json.dumps(out, sort_keys=True))
PY
}

# What cachetop said, in the same shape, from its JSON lines, its CSV or its table.
ours() {
	python3 - "$1" "$2" <<'PY'
import csv, io, json, sys
fmt, text = sys.argv[1], open(sys.argv[2]).read()
keys = ("pid", "uid", "comm", "hits", "misses", "dirties", "reads")
out = []
if fmt == "json":
    for line in text.splitlines():
        j = json.loads(line)
        rows = [{k: p[k] for k in keys} for p in j["processes"]]
        out.append(dict(time_ns=j["time_ns"], interval_ns=j["interval_ns"], buffers_bytes=j["buffers_bytes"],
                        cached_bytes=j["cached_bytes"], processes=sorted(rows, key=lambda r: r["pid"])))
elif fmt == "csv":
    groups = {}
    for r in csv.DictReader(io.StringIO(text)):
        g = groups.setdefault(r["time_ns"], dict(time_ns=int(r["time_ns"]), interval_ns=int(r["interval_ns"]),
                                                  buffers_bytes=int(r["buffers_bytes"]),
                                                  cached_bytes=int(r["cached_bytes"]), processes=[]))
        if r["pid"]:
            g["processes"].append({k: (r[k] if k == "comm" else int(r[k])) for k in keys})
    out = list(groups.values())
    for g in out:
        g["processes"].sort(key=lambda r: r["pid"])
else:
    # The table: per interval "HH:MM:SS Buffers MB: B / Cached MB: C ...", the columns, the rows;
    # it shows the user's name, not the uid, and no reads: compared on what it shows.
    for block in text.strip("\n").split("\n\n"):
        lines = block.splitlines()
        head = lines[0].split()
        rows = []
        for l in lines[2:]:
            f = l.split()
            rows.append(dict(pid=int(f[0]), user=f[1], comm=f[2], hits=int(f[3]), misses=int(f[4]), dirties=int(f[5])))
        out.append(dict(clock=head[0], buffers_mb=int(head[3]), cached_mb=int(head[7]),
                        processes=sorted(rows, key=lambda r: r["pid"])))
print(json.dumps(out, sort_keys=True))
PY
}

# The truths as the table shows them: the clock of the recorded Unix time (UTC), MB, user names.
as_table() {
	python3 -c '
import json, pwd, sys, time
out = []
for g in json.load(sys.stdin):
    rows = []
    for p in g["processes"]:
        try: user = pwd.getpwuid(p["uid"]).pw_name
        except KeyError: user = str(p["uid"])
        rows.append(dict(pid=p["pid"], user=user, comm=p["comm"], hits=p["hits"], misses=p["misses"], dirties=p["dirties"]))
    out.append(dict(clock=time.strftime("%H:%M:%S", time.gmtime(g["time_ns"] // 10**9)), buffers_mb=g["buffers_bytes"] >> 20,
                    cached_mb=g["cached_bytes"] >> 20, processes=rows))
print(json.dumps(out, sort_keys=True))'
}

for fixture in cold warm; do
	export IOLENS_REPLAY=$FIX/$fixture
	truth=$(truths "$FIX/$fixture")
	nsamples=$(ls -d "$FIX/$fixture"/[0-9]* | wc -l)
	for fmt in json csv table; do
		case $fmt in json) opt=--json ;; csv) opt=--csv ;; table) opt= ;; esac
		nobody "$IOLENS" cachetop $opt
		check_eq "$fixture, $fmt, as nobody: exit 0 at the end of the recording" 0 "$RC"
		check_eq "$fixture, $fmt: /proc mode said once, why" 1 \
			"$(grep -c 'no eBPF (a recording has no kernel to trace): estimating from /proc/PID/io' <<<"$ERR")"
		check_eq "$fixture, $fmt: nothing else on stderr" 1 "$(grep -c . <<<"$ERR")"
		printf '%s\n' "$OUT" > "$T/$fixture.$fmt"
		if [ "$fmt" = table ]; then
			check_eq "$fixture, table: one group per interval ($((nsamples - 1)))" "$((nsamples - 1))" \
				"$(grep -c 'Buffers MB' <<<"$OUT")"
			check_eq "$fixture, table: every row as the recorded files say (clock, MB, user, pid, command, hits, misses, dirties)" \
				"$(as_table <<<"$truth")" "$(ours table "$T/$fixture.table")"
		else
			check_eq "$fixture, $fmt: every interval and row as the recorded files say (interval_ns the recorded difference, time_ns the recorded Unix time, uid from status)" \
				"$truth" "$(ours "$fmt" "$T/$fixture.$fmt")"
		fi
	done
	check_eq "$fixture: JSON and CSV agree" "$(ours json "$T/$fixture.json")" "$(ours csv "$T/$fixture.csv")"
	# No figure is negative or wrapped: every count below 2^40.
	check_eq "$fixture: no negative or wrapped figure in JSON" "ok" "$(python3 -c '
import json, sys
bad = [(k, v) for l in open(sys.argv[1]) for p in json.loads(l)["processes"] for k, v in p.items()
       if isinstance(v, (int, float)) and not isinstance(v, bool) and not 0 <= v < 2**40]
print("ok" if not bad else bad)' "$T/$fixture.json")"
done

# cold: the reader of the evicted file shows its misses: all 24 MiB (6144 pages) over the recording.
export IOLENS_REPLAY=$FIX/cold
cold_pid=$(grep -lx coldreader "$FIX"/cold/0/proc/*/comm | sed 's|.*/proc/\([0-9]*\)/comm|\1|')
check_eq "cold: coldreader's misses over the recording are its read_bytes / 4096 (the 24 MiB file)" 6144 \
	"$(python3 -c 'import json,sys; print(sum(p["misses"] for l in open(sys.argv[1]) for p in json.loads(l)["processes"] if p["pid"] == int(sys.argv[2])))' "$T/cold.json" "$cold_pid")"
first=$(head -1 "$T/cold.json")
check_eq "cold: the first interval's interval_ns is the recorded difference" \
	"$(($(cut -d' ' -f1 "$FIX/cold/1/time") - $(cut -d' ' -f1 "$FIX/cold/0/time")))" \
	"$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["interval_ns"])' "$first")"
check_match "cold: mode procfs" '"mode":"procfs"' "$first"

# warm: shortlived ends after sample 1, and its pid is newcmd's from sample 2 on; quitter ends after 3.
export IOLENS_REPLAY=$FIX/warm
short_pid=$(grep -lx shortlived "$FIX"/warm/0/proc/*/comm | sed 's|.*/proc/\([0-9]*\)/comm|\1|')
quit_pid=$(grep -lx quitter "$FIX"/warm/0/proc/*/comm | sed 's|.*/proc/\([0-9]*\)/comm|\1|')
warm_pid=$(grep -lx warmreader "$FIX"/warm/0/proc/*/comm | sed 's|.*/proc/\([0-9]*\)/comm|\1|')
rows_of() { # rows_of PID: per interval, that pid's "comm:hits:misses" or "-"
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = [p for p in json.loads(l)["processes"] if p["pid"] == int(sys.argv[2])]
    print("%s:%d:%d" % (r[0]["comm"], r[0]["hits"], r[0]["misses"]) if r else "-")' "$T/warm.json" "$1" | paste -sd' '
}
io_of() { sed -n "s/^$2: //p" "$FIX/warm/$1/proc/$short_pid/io"; }
new_hits() { echo $((($(io_of "$2" rchar) - $(io_of "$1" rchar)) / 4096)); }
check_eq "warm: the reused pid $short_pid: shortlived's interval, then no row for the interval the pid changed hands, then newcmd charged only its own reads" \
	"shortlived:$((($(io_of 1 rchar) - $(io_of 0 rchar)) / 4096)):0 - newcmd:$(new_hits 2 3):0 newcmd:$(new_hits 3 4):0" \
	"$(rows_of "$short_pid")"
check "warm: the reused pid's start times differ in the recording (what tells the processes apart)" \
	test "$(sed 's/.*) //' "$FIX/warm/1/proc/$short_pid/stat" | cut -d' ' -f20)" != \
	"$(sed 's/.*) //' "$FIX/warm/2/proc/$short_pid/stat" | cut -d' ' -f20)"
check_match "warm: quitter in the first three intervals, none after it ended" '^quitter:[0-9]+:0 quitter:[0-9]+:0 quitter:[0-9]+:0 -$' \
	"$(rows_of "$quit_pid")"
check_eq "warm: warmreader's uid is the recorded status's (nobody, 65534), whoever owns the checkout" \
	"65534 65534 65534 65534" \
	"$(python3 -c 'import json,sys; print(" ".join(str(p["uid"]) for l in open(sys.argv[1]) for p in json.loads(l)["processes"] if p["pid"] == int(sys.argv[2])))' "$T/warm.json" "$warm_pid")"
check_match "warm: warmreader a user named nobody in the table" "^$warm_pid +nobody +warmreader " "$(cat "$T/warm.table")"

# count and --pid: the recording's pids, no waiting for an interval that is not slept.
SECONDS=0
nobody "$IOLENS" cachetop --json 5 2
check_eq "count 2: two intervals, exit 0" "0 2" "$RC $(grep -c . <<<"$OUT")"
check "the interval argument is not slept (the recorded times are the intervals)" test "$SECONDS" -lt 5
nobody "$IOLENS" cachetop --json -p "$warm_pid"
check_eq "--pid of the recording: only its rows, in each interval" "$warm_pid $warm_pid $warm_pid $warm_pid" \
	"$(python3 -c 'import json,sys; print(" ".join(str(p["pid"]) for l in sys.stdin for p in json.loads(l)["processes"]))' <<<"$OUT")"
nobody "$IOLENS" cachetop --files
check_eq "--files in a replay: needs eBPF, exit 1" "1" "$RC"
check_match "--files in a replay: said" "--files needs eBPF" "$ERR"

# Bad recordings: a clear message, no crash; exit 1 where the replay cannot go on.
bad() { # bad NAME: a copy of warm to break, as $T/NAME, readable by nobody
	rm -rf "${T:?}/$1"
	cp -r "$FIX/warm" "$T/$1"
	chmod -R a+rX "$T/$1"
	export IOLENS_REPLAY=$T/$1
}
no_crash() { # no_crash WHAT: RC below 128 and no sanitizer report
	check "$1: no crash (exit $RC)" test "$RC" -lt 128
	check_no_match "$1: no sanitizer report" "Sanitizer|runtime error" "$ERR"
}

export IOLENS_REPLAY=$T/not-there
nobody "$IOLENS" cachetop --json
check_eq "a directory that is not there: exit 1, nothing printed" "1 " "$RC $OUT"
check_match "a directory that is not there: said, with the path" "IOLENS_REPLAY: $T/not-there/0: No such file or directory" "$ERR"
no_crash "a directory that is not there"

mkdir -p "$T/empty"
export IOLENS_REPLAY=$T/empty
nobody "$IOLENS" cachetop --json
check_eq "a recording with no sample 0: exit 1" 1 "$RC"
check_match "a recording with no sample 0: said" "empty/0: No such file or directory \(the first sample, the baseline, is DIR/0\)" "$ERR"

bad no-time-0
rm "$T/no-time-0/0/time"
nobody "$IOLENS" cachetop --json
check_eq "no time file in sample 0: exit 1, nothing printed" "1 " "$RC $OUT"
check_match "no time file in sample 0: said" "no-time-0/0/time: No such file or directory: each recorded sample needs one" "$ERR"
no_crash "no time file in sample 0"

bad no-time-2
rm "$T/no-time-2/2/time"
nobody "$IOLENS" cachetop --json
check_eq "no time file in sample 2: the first interval printed, then exit 1" "1 1" "$RC $(grep -c . <<<"$OUT")"
check_match "no time file in sample 2: said" "no-time-2/2/time: No such file or directory" "$ERR"

bad bad-time
echo "12x 34" > "$T/bad-time/1/time"
nobody "$IOLENS" cachetop --json
check_eq "a time file that is not two numbers: exit 1, nothing printed" "1 " "$RC $OUT"
check_match "a time file that is not two numbers: said" 'bad-time/1/time: not "CLOCK_MONOTONIC_ns Unix_ns"' "$ERR"
no_crash "a time file that is not two numbers"

bad back-time
echo "5 $(cut -d' ' -f2 "$T/back-time/2/time")" > "$T/back-time/2/time"
nobody "$IOLENS" cachetop --json
check_eq "time going back: one interval, then exit 1" "1 1" "$RC $(grep -c . <<<"$OUT")"
check_match "time going back: said" "back-time/2/time: CLOCK_MONOTONIC 5 ns is not after the previous sample's" "$ERR"

bad truncated-io
head -c 20 "$FIX/warm/1/proc/$warm_pid/io" > "$T/truncated-io/1/proc/$warm_pid/io"
nobody "$IOLENS" cachetop --json
no_crash "a truncated io file"
check_eq "a truncated io file: all four intervals printed, exit 1" "1 4" "$RC $(grep -c . <<<"$OUT")"
check_match "a truncated io file: said with its path" "truncated-io/1/proc/$warm_pid/\{stat,io\}: not as /proc writes it" "$ERR"
check_eq "a truncated io file: the process left out of the intervals that need that sample, the others as before" \
	"- - $(rows_of "$warm_pid" | cut -d' ' -f3-)" \
	"$(python3 -c '
import json, sys
for l in sys.stdin:
    r = [p for p in json.loads(l)["processes"] if p["pid"] == int(sys.argv[1])]
    print("%s:%d:%d" % (r[0]["comm"], r[0]["hits"], r[0]["misses"]) if r else "-")' "$warm_pid" <<<"$OUT" | paste -sd' ')"

bad letters-io
sed -i 's/^rchar: .*/rchar: 12abc/' "$T/letters-io/2/proc/$quit_pid/io"
sed -i 's/^Uid:.*/Uid:\tx\ty\tz\tw/' "$T/letters-io/3/proc/$warm_pid/status"
sed -i 's/^\([0-9]*\) (\([^)]*\)) S /\1 (\2) S x /' "$T/letters-io/3/proc/$short_pid/stat"
for fmt in --json --csv ""; do
	nobody "$IOLENS" cachetop $fmt
	no_crash "non-numeric fields ($fmt)"
	check_eq "non-numeric fields ($fmt): exit 1 at the end" 1 "$RC"
	check_match "non-numeric rchar: said with its path" "letters-io/2/proc/$quit_pid/\{stat,io\}: not as /proc writes it" "$ERR"
	check_match "non-numeric Uid: said with its path" "letters-io/3/proc/$warm_pid/status: not as /proc writes it" "$ERR"
	check_match "a stat file with a word out of place: said with its path" "letters-io/3/proc/$short_pid/\{stat,io\}: not as /proc writes it" "$ERR"
	printf '%s\n' "$OUT" > "$T/letters$fmt"
done
check_eq "non-numeric Uid: the row is there, its uid unknown (null)" "null" \
	"$(sed -n 3p "$T/letters--json" | python3 -c 'import json,sys,sys as s; print(json.dumps([p["uid"] for p in json.loads(s.stdin.read())["processes"] if p["pid"] == int(sys.argv[1])][0]))' "$warm_pid")"
check_match "non-numeric Uid: the table's UID is '-'" "^$warm_pid +- +warmreader " "$(cat "$T/letters")"

echo "1..$t_count"
