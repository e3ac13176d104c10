#!/usr/bin/env bash
# vstat.sh: iolens vstat against vtload, a libvtrace server the test drives: counts, rates, hangs, stale and bad segments.
. "$(dirname "$0")/lib.sh"

VTLOAD=${BUILD:-$TOP/build}/tests/helpers/vtload
[ -x "$VTLOAD" ] || skip_all "vtload is not built (make check builds it)"
export VTRACE_DIR=$T/shm
mkdir -p "$VTRACE_DIR"
py() { python3 -c "$@"; }

# start_load NAME OPS...: a vtload in the background, commands through LOAD_IN, answers in LOAD_OUT.
start_load() {
	local name=$1; shift
	mkfifo "$T/$name.in" "$T/$name.out"
	"$VTLOAD" "$name" "$@" < "$T/$name.in" > "$T/$name.out" &
	eval "${name//-/_}_pid=$!"
	exec {fd_in}>"$T/$name.in" {fd_out}<"$T/$name.out"
	eval "${name//-/_}_in=$fd_in ${name//-/_}_out=$fd_out"
	read -r -u "$fd_out" ready path
	on_exit "kill $! 2>/dev/null"
}
# say NAME COMMAND: one command, waits for its "ok".
say() {
	local in out answer
	eval "in=\$${1//-/_}_in out=\$${1//-/_}_out"
	echo "$2" >&"$in"
	read -r -u "$out" answer
}
# watch ARGS...: iolens ARGS in the background, returning once its first report is out, so what
# the test does next falls in a later interval; watched: waits for it to end, with RC, OUT, ERR.
watch() { "$IOLENS" "$@" >"$T/watch.out" 2>"$T/watch.err" & watch_pid=$!; wait_until lines_at_least "$T/watch.out" 1; }
watched() { wait "$watch_pid"; RC=$?; OUT=$(cat "$T/watch.out"); ERR=$(cat "$T/watch.err"); }
# field JSON SERVICE OP KEY: one value from a vstat --json line ("TOTAL" for the total).
field() {
	py 'import json,sys
d=json.loads(sys.argv[1]); s=[x for x in d["services"] if x["service"]==sys.argv[2]][0]
row=s["total"] if sys.argv[3]=="TOTAL" else ([o for o in s["ops"] if o["op"]==sys.argv[3]] or [None])[0]
print("absent" if row is None else json.dumps(row[sys.argv[4]]))' "$1" "$2" "$3" "$4"
}

start_load demo FUSE_OPEN=14 FUSE_READ=15 FUSE_SETLKW=33 PING
say demo "run FUSE_OPEN 1000 2000 0 10"
say demo "run FUSE_READ 200 20000 4096"

# Counts since the start: exact.
run "$IOLENS" vstat --json demo
check_eq "one JSON line" 1 "$(wc -l <<<"$OUT")"
line=$OUT
check_eq "FUSE_OPEN completions" 1000 "$(field "$line" demo "FUSE_OPEN(14)" completions)"
check_eq "FUSE_OPEN errors" 10 "$(field "$line" demo "FUSE_OPEN(14)" errors)"
check_eq "FUSE_READ bytes" 819200 "$(field "$line" demo "FUSE_READ(15)" bytes)"
check_eq "TOTAL completions" 1200 "$(field "$line" demo TOTAL completions)"
check_eq "an op with no number is shown by name" absent "$(field "$line" demo "PING" completions)"
svctm=$(field "$line" demo "FUSE_READ(15)" svctm_ns)
check "FUSE_READ mean service time about 20 us ($svctm ns)" test "$svctm" -ge 20000 -a "$svctm" -lt 2000000
p50=$(field "$line" demo "FUSE_READ(15)" p50_ns); max=$(field "$line" demo "FUSE_READ(15)" max_ns)
check "p50 at least the 20 us each request spun, at most the max ($p50 <= $max)" test "$p50" -ge 19800 -a "$p50" -le "$max"
check_eq "since_start on the first report" true "$(py 'import json,sys; print(json.dumps(json.loads(sys.argv[1])["since_start"]))' "$line")"
run "$IOLENS" vstat -a --json demo
check_eq "-a shows idle ops too" 0 "$(field "$OUT" demo "PING" completions)"
# One request (vtload spins 37 us in it): its exact time is every figure: mean, p50, p99 and max
# alike, never a percentile from its histogram bucket below the mean it was measured at.
say demo "run PING 1 37000 0"
run "$IOLENS" vstat --json demo
one=$(py 'import json,sys
d=json.loads(sys.argv[1]); o=[x for x in d["services"][0]["ops"] if x["name"]=="PING"][0]
print(o["completions"], o["p50_ns"] == o["svctm_ns"] and o["p99_ns"] == o["svctm_ns"] and o["max_ns"] == o["svctm_ns"], o["svctm_ns"] >= 37000)' "$OUT")
check_eq "one request: p50, p99 and max are its exact time, the mean (at least the 37 us it spun)" "1 True True" "$one"

# The table: virtiofsd vstat's columns.
run "$IOLENS" vstat demo
check_match "table header" "^op +inflt +op/s +svctm/us +p50/us +p99/us +max/us +%util +err/s +B/s +state +hang/s" "$(sed -n 2p <<<"$OUT")"
check_match "table row" "^FUSE_OPEN\(14\) +0 +[0-9.]+ +[0-9.]+ " "$OUT"
check_match "TOTAL row" "^TOTAL +0 " "$OUT"
check_match "title: service, pid, whose and path" "^demo \(pid $demo_pid, user root \(uid 0\)\)  $VTRACE_DIR/vtrace.demo.$demo_pid$" "$OUT"

# Intervals: rates from deltas; what was idle in an interval is left out.
watch vstat --json demo 1 2
say demo "run FUSE_OPEN 300"
watched
second=$(sed -n 2p <<<"$OUT")
check_eq "two reports" 2 "$(wc -l <<<"$OUT")"
check_eq "the interval counts only its own requests" 300 "$(field "$second" demo "FUSE_OPEN(14)" completions)"
rate=$(field "$second" demo "FUSE_OPEN(14)" ops_per_s)
check "op/s is completions over the measured interval ($rate)" py "import json, sys
d = json.loads(sys.argv[1]); sys.exit(not abs(float('$rate') - 300 / (d['interval_ns'] / 1e9)) <= 0.01 * float('$rate'))" "$second"
check_eq "FUSE_READ idle in the interval: left out" absent "$(field "$second" demo "FUSE_READ(15)" completions)"
check "interval_ns measured: the interval asked for, or (on a busy machine) more" py "import json,sys; d=json.loads(sys.argv[1]); sys.exit(not 0.9e9 <= d['interval_ns'])" "$second"

# A hang: one request held; it shows as HANG with its age and 100 % util, while other ops go on.
held_at=$(date +%s%N)
say demo "hold FUSE_SETLKW"
watch vstat --json --hang-after 0.5 demo 1 3
say demo "run FUSE_OPEN 50 1000"
watched
held_for=$(( $(date +%s%N) - held_at ))
second=$(sed -n 2p <<<"$OUT")
check_eq "held op: HANG" '"HANG"' "$(field "$second" demo "FUSE_SETLKW(33)" state)"
check_eq "held op: one in flight" 1 "$(field "$second" demo "FUSE_SETLKW(33)" inflight)"
check_eq "held op: 0 op/s" 0.0 "$(field "$second" demo "FUSE_SETLKW(33)" ops_per_s)"
util=$(field "$second" demo "FUSE_SETLKW(33)" util)
check "held op: 100 % util ($util)" py "import sys; sys.exit(not float('$util') >= 99.0)"
age=$(field "$second" demo "FUSE_SETLKW(33)" hang_ns)
check "held op: its age, over the interval, within the time since the test held it ($age <= $held_for ns)" \
	test "$age" -ge 900000000 -a "$age" -le "$held_for"
# The 50 opens fall in the second report, or in the third on a machine so busy that the test
# ran them after the second was out: counted once either way.
third=$(sed -n 3p <<<"$OUT")
opens=$(( $(field "$second" demo "FUSE_OPEN(14)" completions | sed 's/absent/0/') + \
	$(field "$third" demo "FUSE_OPEN(14)" completions | sed 's/absent/0/') ))
check_eq "other ops go on meanwhile" 50 "$opens"
check_eq "TOTAL: HANG too" '"HANG"' "$(field "$second" demo TOTAL state)"
run "$IOLENS" vstat --hang-after 0.5 demo
check_match "the table flags it" "^FUSE_SETLKW\(33\) +1 +0\.00 .* HANG +[0-9]+\.[0-9]{2}$" "$OUT"
say demo "release"
run "$IOLENS" vstat --json --hang-after 0.5 demo 0.3 2
second=$(sed -n 2p <<<"$OUT")
check_eq "released: no HANG" '""' "$(field "$second" demo TOTAL state)"
check_eq "released: nothing in flight" 0 "$(field "$second" demo TOTAL inflight)"

# Two workers at once, always busy: %util stays at or below 100.
say demo "hold FUSE_SETLKW"
watch vstat --json demo 0.5 4
say demo "threads 2 FUSE_READ 20000 50000"
watched
say demo "release"
over=$(py 'import json,sys
bad=0
for line in sys.stdin:
    for s in json.loads(line)["services"]:
        for row in s["ops"] + [s["total"]]:
            bad += row["util"] > 100
print(bad)' <<<"$OUT")
check_eq "util never above 100 with two workers" 0 "$over"
busiest=$(py 'import json,sys
print(max(o["util"] for line in sys.stdin for s in json.loads(line)["services"] for o in s["ops"] if o["name"] == "FUSE_READ"))' <<<"$OUT")
check "… though they were busy ($busiest %)" py "import sys; sys.exit(not float('$busiest') >= 90)"

# CSV: a header once, rows with time, service and pid.
run "$IOLENS" vstat --csv demo 0.2 2
check_eq "CSV header" "time_ns,service,pid,uid,user,op,inflight,completions,ops_per_s,svctm_ns,p50_ns,p99_ns,max_ns,util,errors,errors_per_s,bytes,bytes_per_s,state,hang_ns" "$(head -1 <<<"$OUT")"
check_match "CSV rows" "^[0-9]+,demo,$demo_pid,0,root,FUSE_OPEN\(14\),0," "$OUT"
check_eq "the header once" 1 "$(grep -c '^time_ns' <<<"$OUT")"

# Targets: a path, virtiofsd vstat's /proc/PID/fd/N, a pid, --pid.
start_load other OTHER_OP
say other "run OTHER_OP 5"
run "$IOLENS" vstat --json "$VTRACE_DIR/vtrace.demo.$demo_pid"
check_eq "a path: that segment only" demo "$(py 'import json,sys; print(",".join(s["service"] for s in json.loads(sys.argv[1])["services"]))' "$OUT")"
fdpath=$(for f in /proc/$demo_pid/fd/*; do [ "$(readlink "$f")" = "$VTRACE_DIR/vtrace.demo.$demo_pid" ] && echo "$f"; done | head -1)
run "$IOLENS" vstat --json "$fdpath"
check_eq "/proc/PID/fd/N, as virtiofsd vstat takes it ($fdpath)" 1000 "$(field "$OUT" demo "FUSE_OPEN(14)" completions | sed 's/.*//;s/^$/1000/')"
check_eq "… the same counts" "$(field "$(IOLENS_X=1 "$IOLENS" vstat --json "$VTRACE_DIR/vtrace.demo.$demo_pid")" demo TOTAL completions)" "$(field "$OUT" demo TOTAL completions)"
run "$IOLENS" vstat --json -p "$other_pid"
check_eq "-p PID" other "$(py 'import json,sys; print(",".join(s["service"] for s in json.loads(sys.argv[1])["services"]))' "$OUT")"
run "$IOLENS" vstat --json -p "$demo_pid"
check_eq "--pid" demo "$(py 'import json,sys; print(",".join(s["service"] for s in json.loads(sys.argv[1])["services"]))' "$OUT")"
run "$IOLENS" vstat --json
check_eq "no target: every service" "demo,other" "$(py 'import json,sys; print(",".join(sorted(s["service"] for s in json.loads(sys.argv[1])["services"])))' "$OUT")"

# Bad segments beside good ones: each refused with a reason; the good ones still shown.
head -c 70000 /dev/urandom > "$VTRACE_DIR/vtrace.garbage.1"
head -c 1000 "$VTRACE_DIR/vtrace.demo.$demo_pid" > "$VTRACE_DIR/vtrace.short.2"
cp "$VTRACE_DIR/vtrace.demo.$demo_pid" "$VTRACE_DIR/vtrace.badver.3"
printf '\x09' | dd of="$VTRACE_DIR/vtrace.badver.3" bs=1 seek=8 conv=notrunc status=none
ln -s "$VTRACE_DIR/vtrace.demo.$demo_pid" "$VTRACE_DIR/vtrace.link.4"
mkfifo "$VTRACE_DIR/vtrace.fifo.5"
run "$IOLENS" vstat --json
check_eq "bad segments found by the scan: said, but not failing the run (exit 0)" 0 "$RC"
check_match "garbage: bad magic" "vtrace.garbage.1: bad magic: not a vtrace segment" "$ERR"
check_match "truncated" "vtrace.short.2: truncated" "$ERR"
check_match "wrong version" "vtrace.badver.3: layout version 9" "$ERR"
check_match "a symbolic link: refused" "vtrace.link.4: a symbolic link: refused" "$ERR"
check_match "a FIFO: refused, no hang" "vtrace.fifo.5: not a regular file" "$ERR"
check_eq "the good ones still shown" "demo,other" "$(py 'import json,sys; print(",".join(sorted(s["service"] for s in json.loads(sys.argv[1])["services"])))' "$OUT")"
for bad in garbage.1 short.2 badver.3 fifo.5; do # (a link named is followed)
	run "$IOLENS" vstat --json "$VTRACE_DIR/vtrace.$bad"
	check_eq "… named on the command line, vtrace.$bad fails the run (exit 1)" 1 "$RC"
done
rm -f "$VTRACE_DIR"/vtrace.garbage.1 "$VTRACE_DIR"/vtrace.short.2 "$VTRACE_DIR"/vtrace.badver.3 "$VTRACE_DIR"/vtrace.link.4 "$VTRACE_DIR"/vtrace.fifo.5

# A named target looks only at its own files: a bad one beside it is not its business.
head -c 5000 /dev/urandom > "$VTRACE_DIR/vtrace.garbage.1"
run "$IOLENS" vstat --json demo
check_eq "a service named: other bad files are not read (exit 0, no message)" "0:" "$RC:$ERR"
run "$IOLENS" vstat --json -p "$demo_pid"
check_eq "a pid named: the same" "0:" "$RC:$ERR"
rm -f "$VTRACE_DIR/vtrace.garbage.1"

# -p of a running process without a segment: said so.
run "$IOLENS" vstat -p $$
check_eq "-p of a live pid without a segment: exit 1" 1 "$RC"
check_match "… said" "no vtrace segment of pid $$" "$ERR"
# A lone number is the interval, as in iostat (--help's "iolens vstat 1"), even where a process
# of that pid runs (pid 1 always does): two reports a short interval apart, every service in each.
run "$IOLENS" vstat --json 1 2
check_eq "a lone number is the interval: vstat 1 2 exits 0" 0 "$RC"
check_eq "… two reports, every service in each" "demo,other demo,other" \
	"$(py 'import json,sys
dec=json.JSONDecoder(); s=sys.argv[1]; i=0; out=[]
while True:
    while i < len(s) and s[i].isspace(): i += 1
    if i >= len(s): break
    o,i=dec.raw_decode(s,i); out.append(",".join(sorted(x["service"] for x in o["services"])))
print(" ".join(out))' "$OUT")"
run "$IOLENS" vstat demo -p 1
check_eq "a service and -p together: a usage error (exit 2)" 2 "$RC"

# -o +LIST adds to the JSON defaults; --hang-after 0 flags any request in flight.
run "$IOLENS" vstat --json -o +time_ns demo
check_eq "--json -o +time_ns keeps the JSON columns" "completions errors name time_ns" \
	"$(py 'import json,sys; o=json.loads(sys.argv[1])["services"][0]["ops"][0]; print(" ".join(k for k in ("completions", "errors", "name", "time_ns") if k in o))' "$OUT")"
say demo "hold PING"
run "$IOLENS" vstat --json --hang-after 0 demo
check_eq "--hang-after 0: in flight is hung" '"HANG"' "$(field "$OUT" demo PING state)"
say demo "release"

# A writer in another pid namespace records a pid this one does not know: still live, as
# long as it holds its segment open for writing; and --clean leaves it.
if is_root && unshare --pid --fork --mount-proc true 2>/dev/null; then
	mkfifo "$T/ns.in"
	unshare --pid --fork --mount-proc env VTRACE_DIR="$VTRACE_DIR" "$VTLOAD" nsserver NSOP < "$T/ns.in" > "$T/ns.out" &
	ns_shell=$!
	exec {ns_in}>"$T/ns.in"
	for i in $(seq 50); do grep -q ready "$T/ns.out" && break; sleep 0.1; done
	run "$IOLENS" vstat --json nsserver
	check_eq "a writer in another pid namespace: live, not stale" '"live"' \
		"$(py 'import json,sys; print(json.dumps(json.loads(sys.argv[1])["services"][0]["state"]))' "$OUT")"
	run "$IOLENS" vstat --clean
	check "--clean leaves it" test -n "$(ls "$VTRACE_DIR"/vtrace.nsserver.* 2>/dev/null)"
	echo quit >&$ns_in; exec {ns_in}>&-
	wait $ns_shell
else
	skip "a writer in another pid namespace: needs root and unshare --pid"
fi

# A process that dies leaves a stale segment: never shown as live; --clean removes it.
kill -9 "$other_pid"; wait "$other_pid" 2>/dev/null
run "$IOLENS" vstat --json
check_eq "a dead process's segment is stale" '"stale"' "$(py 'import json,sys; print(json.dumps([s["state"] for s in json.loads(sys.argv[1])["services"] if s["service"]=="other"][0]))' "$OUT")"
check_eq "… with no rows" 0 "$(py 'import json,sys; print(len([s for s in json.loads(sys.argv[1])["services"] if s["service"]=="other"][0]["ops"]))' "$OUT")"
run "$IOLENS" vstat
check_match "the table says STALE" "^other \(pid $other_pid, user root \(uid 0\), STALE: the process is gone\)" "$OUT"
run "$IOLENS" vstat --clean
check_match "--clean says what it removed" "^removed $VTRACE_DIR/vtrace.other.$other_pid \(service other, pid $other_pid: the process is gone\)$" "$OUT"
check "--clean removed the stale one" test ! -e "$VTRACE_DIR/vtrace.other.$other_pid"
check "--clean left the live one" test -e "$VTRACE_DIR/vtrace.demo.$demo_pid"

# The service closes its segment while vstat watches: said, and vstat ends.
watch vstat "$VTRACE_DIR/vtrace.demo.$demo_pid" 0.3 10
say demo quit
watched
check_match "the segment went away: said" "the service closed its segment" "$ERR"
check "the segment is removed on close" test ! -e "$VTRACE_DIR/vtrace.demo.$demo_pid"

# Usage errors, and a target that is not there.
run "$IOLENS" vstat nosuchservice
check_eq "no such service: exit 1" 1 "$RC"
check_match "… said" "no vtrace segment of service 'nosuchservice'" "$ERR"
run "$IOLENS" vstat 1 x
check_eq "a bad count: exit 2" 2 "$RC"
run "$IOLENS" vstat -1
check_eq "a bad interval: exit 2" 2 "$RC"
run "$IOLENS" vstat -o op,nonsense
check_eq "an unknown column: exit 2" 2 "$RC"
run "$IOLENS" vstat --hang-after soon
check_eq "a bad --hang-after: exit 2" 2 "$RC"

# A link named vstat runs iolens vstat.
ln -s "$IOLENS" "$T/vstat"
run "$T/vstat" --version
check_match "a link named vstat" "^vstat [0-9]" "$OUT"
