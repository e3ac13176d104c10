#!/usr/bin/env bash
# stat_top.sh: iolens stat's dstat top plugins (--top-cpu, --top-mem, --top-io, --top-bio, --top-latency, --top-int, --top-oom), each held to a load the test causes, to /proc, or to dstat's formula on a recording.
. "$(dirname "$0")/lib.sh"

# A process of the test's own, named NAME (its comm), running python code: its pid in $started.
start_named() { # NAME CODE
	python3 -c 'import ctypes, sys
ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)  # PR_SET_NAME
exec(sys.argv[2])' "$1" "$2" &
	started=$!
	on_exit "kill $started 2>/dev/null"
}
# A memory hog's size: 1 GiB, or 256 MiB more than the largest process resident now (a qemu guest
# beside the tests), so that it is the one --top-mem shows whatever else runs; HOG is python code
# that makes one that big, then touches READY, and asks the OOM killer to pick it first.
hog_bytes() {
	python3 -c 'import glob
m = 0
for f in glob.glob("/proc/[0-9]*/status"):
    try:
        m = max([m] + [int(l.split()[1]) * 1024 for l in open(f) if l.startswith("VmRSS:")])
    except (OSError, ValueError):
        pass
print(max(1 << 30, m + (256 << 20)))'
}
hog_code() { # BYTES READY
	echo 'import mmap, time
open("/proc/self/oom_score_adj", "w").write("1000")
m = mmap.mmap(-1, '"$1"')
for i in range(0, '"$1"', 4096): m[i] = 1
open("'"$2"'", "w").close()
time.sleep(60)'
}
# shown GROUP FIELD: for each JSON line of $OUT after the first (since boot), "pid:FIELD".
shown() {
	python3 -c 'import json, sys
for l in sys.stdin.read().splitlines()[1:]:
    g = json.loads(l)[sys.argv[1]]
    print("%s:%s:%s" % (g.get("pid"), g.get("name"), g.get(sys.argv[2])))' "$1" "$2" <<<"$OUT"
}
# ours_within PID EXPECTED TOLERANCE LINES: true when one line shows PID with a figure within TOLERANCE (a share) of EXPECTED.
ours_within() {
	python3 -c 'import sys
pid, want, tol = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
ok = [l for l in sys.argv[4].split() if l.split(":")[0] == pid and abs(float(l.split(":")[2]) - want) <= tol * want]
sys.exit(not ok)' "$1" "$2" "$3" "$4"
}

# top_run KIND OURS GROUP ARGS...: iolens stat ARGS while top_truth.py samples every process's
# counter of KIND (/proc); then each line is held to the samples: the process shown did the most
# (another may outdo the test's own OURS on a busy machine, and is then the right answer), and
# OURS, where shown, at its own rate. Sets said and judged (0, or 2 when OURS was never shown).
top_run() {
	local kind=$1 ours=$2 group=$3 sampler
	shift 3
	rm -f "$T/top.stop" "$T/top.$kind"
	python3 "$TOP/tests/cli/top_truth.py" sample "$kind" "$T/top.$kind" "$T/top.stop" &
	sampler=$!
	wait_until test -s "$T/top.$kind"
	run "$IOLENS" stat "$@"
	touch "$T/top.stop"
	wait $sampler
	printf '%s\n' "$OUT" >"$T/top.lines"
	said=$(python3 "$TOP/tests/cli/top_truth.py" judge "$kind" "$T/top.$kind" "$T/top.lines" "$ours" "$group")
	judged=$?
}
# top_checks WHAT: the checks of a top_run.
top_checks() {
	check "$1: each line the most expensive process by /proc's samples, ours at its own rate ($said)" test "$judged" != 1
	if [ "$judged" = 0 ]; then ok "$1: ours shown"; else ok "$1: ours never shown: others did more all along ($said)"; fi
}

# ---- --top-io: a process that reads 64 MiB a second from /dev/zero (rchar) ------------------------
start_named iolens-reader '
import os, time
fd = os.open("/dev/zero", os.O_RDONLY)
buf = bytearray(1 << 20)
while True:
    t = time.monotonic()
    for i in range(16): os.readv(fd, [buf])
    time.sleep(max(0, 0.25 - (time.monotonic() - t)))'
reader=$started
sleep 0.5
top_run io "$reader" top_io --json --top-io 1 4
top_checks "--top-io (a reader of 64 MiB/s)"
kill $reader; wait $reader 2>/dev/null

# The truth's own blind spot, as CI met it: a parent's /proc/PID/io takes its child's counts as
# it reaps it, and a parent that ends at once (timeout) was never sampled with them. Samples of a
# parent gone before the interval's end, shown reading 300 MB in it: not held to its zero.
printf '%s\n' '{"t": 1000000000, "v": {"10": 0, "20": 0}}' '{"t": 1950000000, "v": {"10": 0, "20": 6e7}}' \
	'{"t": 2050000000, "v": {"20": 6.7e7}}' >"$T/truth.samples"
printf '%s\n' '{}' '{"time_ns": 2e9, "interval_ns": 1e9, "top_io": {"pid": 10, "read_bytes_per_s": 3e8}}' >"$T/truth.lines"
said=$(python3 "$TOP/tests/cli/top_truth.py" judge io "$T/truth.samples" "$T/truth.lines" 20 top_io)
check "the truth: a reaper gone before the next sample has no upper bound ($said)" test $? != 1
printf '%s\n' '{"t": 1000000000, "v": {"10": 0, "20": 0}}' '{"t": 2050000000, "v": {"10": 0, "20": 6.7e7}}' \
	>"$T/truth.samples"
said=$(python3 "$TOP/tests/cli/top_truth.py" judge io "$T/truth.samples" "$T/truth.lines" 20 top_io)
check "the truth: one alive after, at zero, is not the most expensive ($said)" test $? = 1

# ---- --top-bio: a process that writes 32 MiB a second with O_DIRECT (write_bytes) -----------------
if can_evict; then
	start_named iolens-writer '
import mmap, os, time
fd = os.open(sys.argv[0] if False else "'"$T"'/direct", os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
buf = mmap.mmap(-1, 1 << 20)
buf.write(b"x" * (1 << 20))
while True:
    t = time.monotonic()
    os.lseek(fd, 0, 0)
    for i in range(8): os.write(fd, buf)
    time.sleep(max(0, 0.25 - (time.monotonic() - t)))'
	writer=$started
	sleep 0.5
	top_run bio "$writer" top_bio --json --top-bio 1 4
	top_checks "--top-bio (an O_DIRECT writer of 32 MiB/s)"
	kill $writer; wait $writer 2>/dev/null
else
	skip "--top-bio: O_DIRECT needs a scratch directory on a disk"
fi

# ---- --top-cpu: a process that spins ------------------------------------------------------------
start_named iolens-spin 'while True: pass'
spin=$started
sleep 0.5
# As dstat: percent of all the cpus' time (on a busy machine the spinner gets less than a whole cpu,
# and a process of many threads may get more).
top_run cpu "$spin" top_cpu --json --top-cpu 1 4
top_checks "--top-cpu (a spinner)"
kill $spin; wait $spin 2>/dev/null

# ---- --top-mem and --top-oom: the process with the most memory resident (hog_bytes) ----------------
start_named iolens-hog "$(hog_code "$(hog_bytes)" "$T/hog.ready")"
hog=$started
wait_until test -e "$T/hog.ready"
run "$IOLENS" stat --json --top-mem --top-oom --no-boot-sample 0.2 2
rss=$(awk '/^VmRSS/ { print $2 * 1024 }' /proc/$hog/status)
lines=$(shown top_mem rss_bytes | tr "\n" " ")
check_match "--top-mem: the process with the most memory is the first ($lines)" "(^| )$hog:iolens-hog:" "$lines"
check "--top-mem: its resident memory, as /proc/$hog/status's VmRSS ($rss) within 2 %" ours_within "$hog" "$rss" 0.02 "$lines"
lines=$(shown top_oom score | tr "\n" " ")
score=$(cat /proc/$hog/oom_score)
highest=$(cat /proc/[0-9]*/oom_score 2>/dev/null | sort -n | tail -1)
check_match "--top-oom: the process the OOM killer would pick first ($lines)" "(^| )$hog:iolens-hog:" "$lines"
check "--top-oom: its score, as /proc/$hog/oom_score ($score) within 2 %, the highest ($highest)" \
	ours_within "$hog" "$score" 0.02 "$lines"
kill $hog; wait $hog 2>/dev/null

# ---- --top-latency: the wait of the process shown, from its schedstat ----------------------------
run "$IOLENS" stat --json --top-latency --no-boot-sample 0.5 3
check_eq "--top-latency: exit 0" 0 "$RC"
check "--top-latency: a wait in ns per second, at most the interval's worth of every cpu" python3 -c 'import json, sys
for l in sys.argv[1].splitlines():
    g = json.loads(l)["top_latency"]
    if g["wait_ns_per_s"] is None or not 0 <= g["wait_ns_per_s"] <= 1e9 * int(sys.argv[2]): sys.exit(1)' "$OUT" "$(nproc)"

# ---- --top-int, on the recording: dstat's formula (the numbered interrupt with the most a second) --
FIX=$TOP/tests/fixtures/stat
OUT=$(IOLENS_REPLAY=$FIX/vm1 "$IOLENS" stat --json --top-int 1 3)
python3 - "$FIX/vm1" "$OUT" > "$T/checks" <<'PY'
import json, os, sys
root, lines = sys.argv[1], [json.loads(l) for l in sys.argv[2].splitlines()]
def read(n, path): return open(os.path.join(root, str(n), path)).read()
def ints(n):
    text = read(n, "proc/interrupts").splitlines()
    ncpu = len(text[0].split())
    out = {}
    for l in text[1:]:
        f = l.split()
        if not f[0][:-1].isdigit(): continue
        out[f[0][:-1]] = (sum(int(x) for x in f[1:1 + ncpu]), " ".join(f[1 + ncpu + 2:]))
    return out
for n in (1, 2):
    t = [int(read(m, "time").split()[0]) for m in (n - 1, n)]
    a, b = ints(n - 1), ints(n)
    rates = {k: ((b[k][0] - a[k][0]) * 1e9 / (t[1] - t[0]), b[k][1]) for k in b if k in a}
    best = max(rates.values())
    got = lines[n]["top_int"]
    ok = got["name"] == best[1] and abs(got["rate_per_s"] - best[0]) <= 0.001 * best[0]
    print("ok" if ok else "BAD", "interval %d: %s %.3f/s (ours %s %.3f/s)" % (n, best[1], best[0], got["name"], got["rate_per_s"]))
PY
while read -r verdict rest; do
	if [ "$verdict" = ok ]; then ok "--top-int on the recording: $rest"; else not_ok "--top-int on the recording: $rest"; fi
done < "$T/checks"
check "--top-int: 2 intervals compared" test "$(wc -l < "$T/checks")" -eq 2
OUT=$(IOLENS_REPLAY=$FIX/vm1 "$IOLENS" stat --json --top-cpu --top-mem --top-io --top-bio --top-latency --top-oom 1 2)
check_eq "a recording without processes: the top plugins unknown (null), not 0" "null" "$(python3 -c 'import json, sys
print(" ".join(sorted(set(json.dumps(v) for l in sys.argv[1].splitlines() for g, d in json.loads(l).items()
    if g.startswith("top_") for v in d.values()))))' "$OUT")"
OUT=$(IOLENS_REPLAY=$FIX/vm1 TZ=UTC "$IOLENS" stat --top-int --nocolor 1 3)
if [ "${UPDATE_EXPECTED:-}" = 1 ]; then printf '%s\n' "$OUT" > "$FIX/expected/top-int"; fi
check_eq "replay: top-int (iolens stat --top-int --nocolor 1 3)" "$(cat "$FIX/expected/top-int" 2>/dev/null)" "$OUT"

# ---- Names a terminal would act on: escaped in the table and CSV (\xNN), as they are in JSON --------
# (the process with the most memory, so that it is the one shown whatever else runs)
start_named $'\e[31mred\a' "$(hog_code "$(hog_bytes)" "$T/evil.ready")"
evil=$started
wait_until test -e "$T/evil.ready"
run "$IOLENS" stat --top-mem --nocolor --no-boot-sample 0.2 1
check_match "--top-mem: the name in the table, its escape as \\x1b, cut to the 12 columns before the bell's" \
	'^\\x1b\[31mred ' "$(sed -n 3p <<<"$OUT")"
check_no_match "--top-mem: no escape or bell in the table" $'[\e\a]' "$OUT"
run "$IOLENS" stat --json --top-mem --no-boot-sample 0.2 1
check_eq "--top-mem: JSON has the name as the kernel has it, and the pid" $'\e[31mred\a '"$evil" \
	"$(python3 -c 'import json, sys; g = json.loads(sys.argv[1])["top_mem"]; print(g["name"], g["pid"])' "$OUT")"
run "$IOLENS" stat --csv --top-mem --no-boot-sample 0.2 1
check_match "--top-mem: CSV quotes it, escaped as any CSV name" ',"\\x1b\[31mred\\x07",' "$OUT"
kill $evil; wait $evil 2>/dev/null

# ---- The options, in --list and -M; dstat's headers ------------------------------------------------
run "$IOLENS" stat --list
for p in top-cpu top-mem top-io top-bio top-latency top-int top-oom; do
	check_match "--list names $p" "(^|[,	])$p(,|$)" "$OUT"
done
run "$IOLENS" stat -M top-cpu,top-io 0.1 1
check_eq "-M top-cpu,top-io: dstat's titles" "-most-expensive- ----most-expensive----" "$(head -1 <<<"$OUT")"
if command -v dstat >/dev/null; then
	for p in top-cpu top-mem top-io top-bio top-latency top-int top-oom; do
		ours=$("$IOLENS" stat --$p 0.1 1 | head -1)
		theirs=$(timeout 30 dstat --$p 1 1 2>/dev/null | head -1)
		check_eq "--$p: dstat's title and width" "$theirs" "$ours"
	done
fi

echo "1..$t_count"
