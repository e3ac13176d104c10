#!/usr/bin/env bash
# stat_dstat_plugins.sh: through the dstat link, dstat 0.7.4's top plugins and its other plugins (--disk-avgrq ... --dstat-mem): dstat's header lines byte for byte and its rows' layout (widths, a name cut as dstat cuts it), held to the real dstat run side by side; their figures to dstat's formulas on a recording; a dstat plugin iolens has not said as dstat says one that fails to load (exit 8).
. "$(dirname "$0")/lib.sh"

command -v dstat >/dev/null && dstat --version >/dev/null 2>&1 || skip_all "dstat is not installed: it is the truth here"
ln -s "$IOLENS" "$T/dstat"
D=$T/dstat
# theirs ARGS...: the real dstat's output (its Python warnings on stderr left out).
theirs() { timeout -k 5 60 dstat "$@" 2>/dev/null; }

# ---- Headers: byte for byte ------------------------------------------------------------------
for p in top-cpu top-io top-mem top-bio top-latency top-int top-oom top-cpu-adv top-io-adv top-bio-adv \
	top-cputime top-cputime-avg top-latency-avg top-childwait cpu-use snooze dstat dstat-cpu dstat-ctxt dstat-mem; do
	run "$D" --$p 1 1
	check_eq "--$p: exit 0" 0 "$RC"
	check_eq "--$p: dstat's header lines" "$(theirs --$p 1 1 | head -2)" "$(head -2 <<<"$OUT")"
done
# Groups per mount point: dstat separates them with ':' (the link's separators are not this test's).
run "$D" --freespace 1 1
check_eq "--freespace: dstat's header lines (a group per mount point, dstat's filters)" \
	"$(theirs --freespace 1 1 | head -2 | tr ':' '|')" "$(head -2 <<<"$OUT" | tr ':' '|')"
# dstat's older names: the same groups as -g and -s.
for p in "page24 -g" "swap-old -s"; do
	run "$D" --${p% *} 1 1
	check_eq "--${p% *}: the group of ${p#* }" "$(head -2 <<<"$("$D" ${p#* } 1 1)")" "$(head -2 <<<"$OUT")"
done

# ---- Rows: widths and names, beside dstat ------------------------------------------------------
# A process named with a '/' (dstat shows what follows it), two threads reading /dev/zero flat out:
# the most cpu and the most reads of the machine (its comm is cut by the kernel to 15 bytes).
python3 -c 'import ctypes, os, threading
ctypes.CDLL(None).prctl(15, b"ab/iolens-io-hog", 0, 0, 0)
def read():
    fd = os.open("/dev/zero", os.O_RDONLY)
    buf = bytearray(1 << 20)
    while True: os.readv(fd, [buf])
threading.Thread(target=read, daemon=True).start()
read()' &
hog=$!
on_exit "kill $hog 2>/dev/null"
wait_until grep -qx "ab/iolens-io-ho" /proc/$hog/comm
name=iolens-io-ho # dstat's: the stat field's name after its last '/'
groups="--top-cpu --top-io --top-cpu-adv --top-io-adv --top-cputime"
# The hog is the machine's top user of cpu and reads, but on a busy machine (a sanitized test beside
# it) another process may top a row: the rows are taken again, up to three times, until ours shows it.
for try in 1 2 3; do
	theirs $groups 1 4 >"$T/theirs" &
	them=$!
	run "$D" $groups 1 4
	wait $them
	# The lines after the two headers, a group a line (GROUP-INDEX TEXT), '|' between groups.
	python3 - "$T/theirs" "$OUT" "$name" "$hog" >"$T/checks" <<'PY'
import sys
theirs = open(sys.argv[1]).read().splitlines()
ours = sys.argv[2].splitlines()
name, pid = sys.argv[3], sys.argv[4]
# Each group's width, the name's and where the figures start: dstat_top_*.py's '%-*s' widths.
groups = [("--top-cpu", 16, 13), ("--top-io", 22, 11), ("--top-cpu-adv", 40, 21), ("--top-io-adv", 40, 21),
          ("--top-cputime", 17, 13)]
def split(line):
    out, at = [], 0
    for g, width, cut in groups:
        out.append(line[at:at + width])
        at += width + 1
    return out
def say(ok, what):
    print(("ok " if ok else "BAD ") + what)
for who, lines in (("dstat", theirs), ("ours", ours)):
    say(len(lines) >= 5, "%s: 2 header lines and 3 or more rows (%d lines)" % (who, len(lines)))
    width = sum(w for _, w, _ in groups) + len(groups) - 1
    say(all(len(l) == width for l in lines[2:]), "%s: every row %d wide, dstat's groups side by side" % (who, width))
    for (g, w, cut), n in zip(groups, range(len(groups))):
        shown = [split(l)[n] for l in lines[2:] if split(l)[n].startswith(name[:cut])]
        room = 26 - max(5, len(pid))  # the -adv groups: the name in 26 less the pid's digits, then the pid
        expect = (name[:cut] + " " * cut)[:cut] if "adv" not in g else (name + " " * room)[:room] + "%-5s" % pid
        if who == "ours":
            say(bool(shown), "%s %s: the hog shown in a row" % (who, g))
        good = all(s.startswith(expect) and not s[len(expect):len(expect) + 1].isalpha() for s in shown)
        say(good, "%s %s: its name cut as dstat cuts it, %r then the figures (%s)" % (who, g, expect, shown[:1]))
PY
	grep -q "^BAD ours .*: the hog shown in a row" "$T/checks" || break
done
while read -r verdict rest; do
	if [ "$verdict" = ok ]; then ok "$rest"; else not_ok "$rest"; fi
done <"$T/checks"
check "rows: checks made" test "$(wc -l <"$T/checks")" -ge 19

# --top-cputime's figures: each line's process the one that ran the most, by every process's
# /proc/PID/schedstat sampled beside it (top_truth.py), the hog at its own rate where shown.
rm -f "$T/top.stop"
python3 "$TOP/tests/cli/top_truth.py" sample cputime "$T/top.cputime" "$T/top.stop" &
sampler=$!
wait_until test -s "$T/top.cputime"
run "$D" --json --top-cputime 1 4
touch "$T/top.stop"
wait $sampler
printf '%s\n' "$OUT" >"$T/top.lines"
said=$(python3 "$TOP/tests/cli/top_truth.py" judge cputime "$T/top.cputime" "$T/top.lines" "$hog" top_cputime)
judged=$?
check "--top-cputime: each line the process that ran the most by its schedstat, the hog at its own rate ($said)" \
	test "$judged" != 1
kill $hog; wait $hog 2>/dev/null

# ---- --disk-avgrq, --disk-svctm, --cpu-use on a recording: dstat's formulas ----------------------
FIX=$TOP/tests/fixtures/stat/vm1
OUT=$(IOLENS_REPLAY=$FIX "$IOLENS" stat --json --disk-avgrq --disk-svctm --cpu-use 1 3)
python3 - "$FIX" "$OUT" >"$T/checks" <<'PY'
import json, os, sys
root, lines = sys.argv[1], [json.loads(l) for l in sys.argv[2].splitlines()]
def read(n, path): return open(os.path.join(root, str(n), path)).read()
def disks(n): return {f[2]: [int(x) for x in f[3:]] for f in (l.split() for l in read(n, "proc/diskstats").splitlines())}
def cpus(n): return {f[0][3:]: [int(x) for x in f[1:9]] for f in (l.split() for l in read(n, "proc/stat").splitlines())
                     if f[0].startswith("cpu") and f[0] != "cpu"}
for n in (1, 2):
    a, b, got = disks(n - 1), disks(n), lines[n]
    for d in (k[len("avgrq_"):] for k in got if k.startswith("avgrq_")):
        ios = b[d][0] + b[d][4] - a[d][0] - a[d][4]
        # dstat_disk_avgrq.py: sectors read and written over requests; dstat_disk_svctm.py: io_ticks over requests.
        avgrq = (b[d][2] + b[d][6] - a[d][2] - a[d][6]) / ios if ios else 0
        svctm = (b[d][9] - a[d][9]) / ios if ios else 0
        ok = abs(got["avgrq_" + d]["avgrq_sectors"] - avgrq) <= 0.001 * avgrq + 1e-9 and \
             abs(got["svctm_" + d]["svctm_ms"] - svctm) <= 0.001 * svctm + 1e-9
        print("ok" if ok else "BAD", "interval %d, %s: avgrq %.3f, svctm %.3f (ours %s, %s)" % (n, d, avgrq, svctm,
              got["avgrq_" + d]["avgrq_sectors"], got["svctm_" + d]["svctm_ms"]))
    a, b = cpus(n - 1), cpus(n)
    for c in b:
        total = sum(b[c]) - sum(a[c])
        use = 100 - 100 * (b[c][3] - a[c][3]) / total
        ours = got["cpu_use"]["cpu%s_pct" % c]
        print("ok" if abs(ours - use) <= 0.01 else "BAD", "interval %d, cpu%s: %.3f %% busy (ours %s)" % (n, c, use, ours))
PY
while read -r verdict rest; do
	if [ "$verdict" = ok ]; then ok "--disk-avgrq/--disk-svctm/--cpu-use on the recording: $rest"; else not_ok "--disk-avgrq/--disk-svctm/--cpu-use on the recording: $rest"; fi
done <"$T/checks"
check "the recording: its disks and cpus compared" test "$(wc -l <"$T/checks")" -ge 4

# ---- --snooze, --debug, --bw, --profile ----------------------------------------------------------
run "$D" --snooze 0.5 3
check_match "--snooze: '-' first, as dstat, then the seconds from the sample before (0.5)" \
	"^     -"$'\n'"0\.[45][0-9]{3}"$'\n'"0\.[45][0-9]{3}$" "$(tail -3 <<<"$OUT")"
run "$D" --debug -c 1 2
check_match "--debug: each line ends with its ms, '%6.2fms' as dstat's" "^( +[0-9]+){5} +[0-9]+\.[0-9]{2}ms$" "$(tail -1 <<<"$OUT")"
check_match "… as dstat's lines end" "^( +[0-9]+){5} +[0-9]+\.[0-9]{2}ms$" "$(theirs --debug -c 1 2 | tail -1)"
run "$D" --bw --color -c 1 2
check_match "--bw: dstat's black for zeros (\\e[0;30m)" $'\e\\[0;30m +0' "$OUT"
check_match "… as dstat's --bw" $'\e\\[0;30m +0' "$(theirs --bw --color -c 1 2)"
run "$D" --profile -c 1 1
check_eq "--profile: taken (exit 0), the same headers" "0 $(head -2 <<<"$("$D" -c 1 1)")" "$RC $(head -2 <<<"$OUT")"

# ---- dstat's plugins iolens has not ----------------------------------------------------------
run "$D" --helloworld 1 1
check_eq "--helloworld alone: exit 8" 8 "$RC"
check_eq "… said as dstat says a plugin that fails to load" \
	"Module dstat_helloworld failed to load. (not in iolens stat)"$'\n'"None of the stats you selected are available." "$ERR"
theirs_rc=$(timeout -k 5 60 dstat --gpfs 1 1 >/dev/null 2>"$T/gpfs.err"; echo $?)
if grep -q "^Module dstat_gpfs failed to load" "$T/gpfs.err"; then
	check_eq "… dstat's exit status when its only plugin fails to load (dstat --gpfs)" "$theirs_rc" "$RC"
	run "$D" --gpfs 1 1
	check_eq "--gpfs: dstat's words, dstat's last line" \
		"$(grep -E '^(Module|None)' "$T/gpfs.err" | sed 's/ (.*)$//')" "$(sed 's/ (.*)$//' <<<"$ERR")"
else
	skip "dstat --gpfs loads here: no plugin failure of dstat's to compare with"
fi
run "$D" --redis --mysql5_io -c 1 1
check_eq "--redis --mysql5_io -c: exit 0, the other groups shown" "0 --total-cpu-usage--" "$RC $(head -1 <<<"$OUT")"
check_eq "… each missing plugin said once" \
	"Module dstat_redis failed to load. (not in iolens stat)"$'\n'"Module dstat_mysql5_io failed to load. (not in iolens stat)" "$ERR"
run "$D" -M redis,cpu 1 1
check_eq "-M redis,cpu: the same" "0 --total-cpu-usage-- Module dstat_redis failed to load. (not in iolens stat)" \
	"$RC $(head -1 <<<"$OUT") $ERR"
run "$D" --nosuch-plugin 1 1
check_eq "an option that is no dstat plugin: dstat's usage error (exit 1, its line on stdout)" \
	"1 dstat: option --nosuch-plugin not recognized, try dstat -h for a list of all the options" "$RC $OUT"
check_no_match "… not said as a plugin" "Module" "$ERR$OUT"

echo "1..$t_count"
