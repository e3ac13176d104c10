#!/usr/bin/env bash
# vstat_hostile.sh: root's readers (vstat, export, doctor) against segments another local user
# made to stall, fool or silence them; servers in pid namespaces, containers, zombies, restarts.
. "$(dirname "$0")/lib.sh"

VTLOAD=${BUILD:-$TOP/build}/tests/helpers/vtload
VTFORGE=${BUILD:-$TOP/build}/tests/helpers/vtforge
[ -x "$VTLOAD" ] && [ -x "$VTFORGE" ] || skip_all "vtload and vtforge are not built (make check builds them)"
is_root || skip_all "needs root: the readers run as root, the hostile user is nobody"

# /dev/shm as it is: a tmpfs every user may write in (sticky), small enough to notice growth.
chmod 755 "$T"
export VTRACE_DIR=$T/shm
mkdir -p "$VTRACE_DIR"
mount -t tmpfs -o size=256m,mode=1777 iolens-test "$VTRACE_DIR" || skip_all "cannot mount a tmpfs"
on_exit "umount -l '$VTRACE_DIR'"
py() { python3 -c "$@"; }
dq() { python3 "$TOP/tests/cli/doctor_query.py" "$@" 2>>"$T/dq.err"; }
tmpfs_used() { df --output=used -B1 "$VTRACE_DIR" | tail -1 | tr -d ' '; }
nobody() { "${AS_NOBODY[@]}" "$@"; }
# services JSON: "service:pid:state" of every service shown, sorted
services() {
	py 'import json,sys
print(" ".join(sorted("%s:%s:%s" % (s["service"], s["pid"], s["state"]) for s in json.loads(sys.argv[1])["services"])))' "$1"
}
# op_state JSON SERVICE OP: the state of one op (absent when not shown)
op_state() {
	py 'import json,sys
d=json.loads(sys.argv[1]); s=[x for x in d["services"] if x["service"]==sys.argv[2]]
ops=[o for o in (s[0]["ops"] if s else []) if o["name"]==sys.argv[3]]
print(ops[0]["state"] if ops else "absent")' "$1" "$2" "$3"
}

# start_load NAME OPS...: a vtload of service NAME (lib.sh's vtload_start); say NAME COMMAND.
start_load() { local name=$1; shift; vtload_start "$name" "$name" -- "$@"; }
say() { vtload_to "$@"; }
# hold_forge NAME ARGS...: vtforge --hold as nobody, kept until the test ends; NAME_pid, NAME_path.
hold_forge() {
	local name=$1; shift
	mkfifo "$T/$name.fin" "$T/$name.fout"
	"${AS_NOBODY[@]}" "$VTFORGE" "$@" --hold < "$T/$name.fin" > "$T/$name.fout" &
	exec {fd_in}>"$T/$name.fin" {fd_out}<"$T/$name.fout"
	read -r -u "$fd_out" _ "${name}_path"
	eval "${name}_pid=$!"
	eval "${name}_keep=$fd_in"
	on_exit "kill $! 2>/dev/null"
}

# ---- Spoofing: nobody's file that names a root server, with its pid and start time ------------
start_load victim OPA OPB
say victim "run OPA 100"
hold_forge spoof "$VTRACE_DIR/vtrace.victim.$victim_pid.0badf00d" --service victim --pid "$victim_pid" --hang
check_eq "the forger (nobody) holds its file open for writing, with the lock" 65534 "$(stat -c %u "$spoof_path")"
run "$IOLENS" vstat --json
check_eq "vstat: the real server only, live (/proc: pid $victim_pid)" "victim:$victim_pid:live" "$(services "$OUT")"
check_eq "… no HANG: the forged request is not the server's" "" "$(op_state "$OUT" victim OPA)"
check_eq "… the forged file listed apart as untrusted" "$spoof_path" \
	"$(py 'import json,sys; print(" ".join(u["path"] for u in json.loads(sys.argv[1])["untrusted"]))' "$OUT")"
check_match "… and said so, with its owner" "vtrace.victim.$victim_pid.0badf00d: not shown: untrusted \(user nobody, uid 65534\)" "$ERR"
run "$IOLENS" vstat --json "$spoof_path"
check_eq "the forged file named as a path: shown as untrusted, not as the server" "victim:$victim_pid:untrusted" "$(services "$OUT")"
run "$IOLENS" vstat "$spoof_path"
check_match "… with the reason: the forger's pid and user" "^victim \(pid $victim_pid, user nobody \(uid 65534\), UNTRUSTED: held open for writing by pid $spoof_pid \(uid 65534\), not by the pid $victim_pid it names\)" "$OUT"
run "$IOLENS" vstat victim
check_no_match "vstat victim (a table): no HANG" "HANG" "$OUT"
check_match "… its own pid and user in the title" "^victim \(pid $victim_pid, user root \(uid 0\)\)" "$OUT"
run "$IOLENS" export --once
check_eq "export: victim's OPA series are the server's (100 requests), once" 1 \
	"$(grep -c "^iolens_vtrace_requests_total{service=\"victim\",pid=\"$victim_pid\",uid=\"0\",user=\"root\",op=\"OPA\"} 100\$" <<<"$OUT")"
check_eq "… no oldest-in-flight from the forged hour-old request" 0 \
	"$(grep -E '^iolens_vtrace_oldest_in_flight_seconds\{service="victim"' <<<"$OUT" | awk '$2 > 0' | wc -l)"
check_no_match "… no series of nobody's pid" "pid=\"$spoof_pid\"" "$OUT"
run "$IOLENS" doctor --json 1
check_eq "doctor 1: no vtrace-hang for victim" absent "$(dq get vtrace-hang service service victim <<<"$OUT" || echo absent)"

# A legacy-looking forgery (no lock flag) at the victim's own pid: untrusted too.
nobody "$VTFORGE" "$VTRACE_DIR/vtrace.victim.$victim_pid.0badf01d" --service victim --pid "$victim_pid" --hang --legacy
run "$IOLENS" vstat --json victim
check_eq "a forgery without the lock flag, no one holding it: not the server's either" "victim:$victim_pid:live" "$(services "$OUT")"
check_eq "… no HANG" "" "$(op_state "$OUT" victim OPA)"
rm -f "$VTRACE_DIR/vtrace.victim.$victim_pid.0badf01d"
# One with the lock flag that nobody holds: the live server it names shown dead? Not its.
nobody "$VTFORGE" "$VTRACE_DIR/vtrace.victim.$victim_pid.0badf02d" --service victim --pid "$victim_pid" --hang
run "$IOLENS" vstat --json --stale victim
check_eq "a forgery that would show the live server as dead (STALE, with its numbers): not the server's" \
	"victim:$victim_pid:live" "$(services "$OUT")"
check_match "… said: the pid it names runs but does not hold it" \
	"0badf02d: not shown: untrusted \(user nobody, uid 65534\): pid $victim_pid runs, started when the header says, but does not hold it" "$ERR"
run "$IOLENS" vstat --clean
check "… and --clean leaves it (not proven stale either)" test -e "$VTRACE_DIR/vtrace.victim.$victim_pid.0badf02d"
rm -f "$VTRACE_DIR/vtrace.victim.$victim_pid.0badf02d"

# ---- Squatting: the names of the next pids taken before the server starts ----------------------
last=$(cat /proc/sys/kernel/ns_last_pid)
nobody sh -c 'i=$1; while [ "$i" -le $(($1 + 400)) ]; do : > "$2/vtrace.squat.$i"; i=$((i + 1)); done' sh "$((last + 1))" "$VTRACE_DIR"
start_load squat OPA
check "a server whose name was taken still starts (pid $squat_pid, $squat_path)" test -n "$squat_path"
if [ "$squat_pid" -le $((last + 400)) ]; then
	check_match "… under a name of its own, its pid and a random suffix" "/vtrace\.squat\.$squat_pid\.[0-9a-f]{8}$" "$squat_path"
	check_eq "… nobody's empty file left where it was" "65534 0" "$(stat -c '%u %s' "$VTRACE_DIR/vtrace.squat.$squat_pid")"
else
	skip "the server's pid ($squat_pid) was past the squatted ones (a busy machine)"
	skip "… nobody's file left"
fi
say squat "run OPA 7"
run "$IOLENS" vstat --json squat
check_eq "vstat squat: the server, live, its 7 requests" "squat:$squat_pid:live 7" \
	"$(services "$OUT") $(py 'import json,sys; print(json.loads(sys.argv[1])["services"][0]["total"]["completions"])' "$OUT")"
check_eq "… the 400 empty files: not read as servers, no message each (an empty file is one being made)" 0 \
	"$(grep -c 'vtrace.squat' <<<"$ERR")"
rm -f "$VTRACE_DIR"/vtrace.squat.*[0-9]

# ---- Output: names with terminal escapes and invalid UTF-8 -------------------------------------
evil=$'vtrace.\e]0;owned\a\e[31mred\nline\xff\xfe.1'
nobody "$VTFORGE" "$VTRACE_DIR/$evil" --service evil
for fmt in --json --csv ""; do
	"$IOLENS" vstat $fmt >"$T/evil.out" 2>"$T/evil.err"
	check_eq "vstat ${fmt:---table}: no escape, bell or raw byte of the name in its output" "0 0 0" \
		"$(cat "$T/evil.out" "$T/evil.err" | py 'import sys; b=sys.stdin.buffer.read(); print(b.count(b"\x1b"), b.count(b"\x07"), b.count(b"\xff"))')"
done
"$IOLENS" vstat --json >"$T/evil.out" 2>/dev/null
check "vstat --json: valid UTF-8 and JSON, the name in it the file's bytes by iolens(1)'s escape" py 'import json, os, re, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))
def name_bytes(s): # \xNN is that byte; the rest is UTF-8 (JSON carried control characters itself)
    return b"".join(bytes([int(m.group(1), 16)]) if m.group(1) else m.group(2).encode()
                    for m in re.finditer(r"\\x([0-9a-fA-F]{2})|(.)", s, re.S))
want = os.fsencode(sys.argv[2])
assert any(name_bytes(u["path"]).endswith(b"/" + want) for u in d["untrusted"]), d["untrusted"]' "$T/evil.out" "$evil"
rm -f "$VTRACE_DIR/$evil"

# ---- Counters that cannot be: shown as unknown, with a message ---------------------------------
hold_forge absurd "$VTRACE_DIR/vtrace.absurd.%p" --service absurd --absurd
run "$IOLENS" vstat --json absurd
check_eq "nobody's own server, proven its (live)" "absurd:$absurd_pid:live" "$(services "$OUT")"
check_eq "errors above completions, 10^19 in flight: every number unknown (null)" "None None None ?" \
	"$(py 'import json,sys; o=json.loads(sys.argv[1])["services"][0]["ops"][0]; print(o["errors"], o["inflight"], o["completions"], o["state"])' "$OUT")"
check_match "… with a message" "OP0: 18446744073709551615 errors, more than its 1 completions: shown as unknown" "$ERR"
run "$IOLENS" vstat --csv absurd
check_no_match "--csv: not the absurd numbers" "18446744073709551615|10000000000000000000" "$OUT"
run "$IOLENS" export --once
check_no_match "export: no series of the absurd op" "service=\"absurd\",pid=\"$absurd_pid\",op=\"OP0\"" "$OUT"
run "$IOLENS" stat --vtrace --json 0.1 1
check_eq "stat --vtrace: op/s, util and hangs of it unknown (null)" "None None None" \
	"$(py 'import json,sys; v=json.loads(sys.argv[1])["vtrace_absurd"]; print(v["ops_per_s"], v["util_pct"], v["hang"])' "$OUT")"
exec {absurd_keep}>&-

# ---- Stall and tmpfs: 100 hostile segments, readers end, tmpfs does not grow -------------------
# nobody's servers stall (every snapshot odd); another user's (uid 40000, no name) are sparse and
# take far more than the room readers give every user but root (SEGMENT_TOTAL_OPS, 1088 ops).
OTHER=(setpriv --reuid=40000 --regid=40000 --clear-groups --inh-caps=-all)
for i in $(seq 5); do hold_forge odd$i "$VTRACE_DIR/vtrace.odd$i.%p" --service odd$i --ops 64 --shards 64 --odd; done
saved=("${AS_NOBODY[@]}")
AS_NOBODY=("${OTHER[@]}")
for i in $(seq 5); do hold_forge big$i "$VTRACE_DIR/vtrace.big$i.%p" --service big$i --ops 1024 --shards 64 --sparse; done
AS_NOBODY=("${saved[@]}")
run "$IOLENS" vstat --json
check "vstat with 10 hostile segments: ends (exit $RC)" test "$RC" -ne 124
# A user's segments get 250 ms of a round: on a busy machine odd1's bounded retries can take all
# of nobody's, and the others wait for another round; a run that had the time shows all five.
# (nobody's 90 junk segments below come after: rejecting them takes nobody's time too, and a
# sanitized build's 90 rejections alone take more than 250 ms.)
odd_shown() {
	[ "$(py 'import json,sys
s = json.loads(sys.argv[1])["services"]
print(" ".join("%s:%s:%s" % (x["service"], x["pid"], x["state"]) for x in s if x["service"] in ("odd1", "odd2")),
      " ".join(sorted(x["service"] for x in s if x["service"].startswith("odd"))))' "$OUT")" = \
		"odd1:$odd1_pid:live odd2:$odd2_pid:live odd1 odd2 odd3 odd4 odd5" ] && return 0
	run "$IOLENS" vstat --json
	return 1
}
check "… the servers whose every snapshot stays odd: shown all the same (the retries are bounded)" wait_until odd_shown
check_match "… still shows the real server" "\"service\":\"victim\"" "$OUT"
# Room: nobody's five (5 x 65 ops) are within its half; uid 40000's 1025-op ones are not shown
# beyond what is left, each said (not read, or given back for nobody's).
check_eq "… every one of nobody's odd servers shown: within its share of room" "odd1 odd2 odd3 odd4 odd5" \
	"$(py 'import json,sys; print(" ".join(sorted(s["service"] for s in json.loads(sys.argv[1])["services"] if s["service"].startswith("odd"))))' "$OUT")"
check_eq "… uid 40000's, each 1025 ops: none fits beside them" "" \
	"$(py 'import json,sys; print(" ".join(s["service"] for s in json.loads(sys.argv[1])["services"] if s["service"].startswith("big")))' "$OUT")"
check_match "… said, with whose" "vtrace.big[0-9].[0-9]+: not read.*user 40000 \(uid 40000\)|vtrace.big[0-9].[0-9]+: not read any more: its room was given" "$ERR"
check_eq "… the owner in the JSON" "65534 nobody" \
	"$(py 'import json,sys; s=[x for x in json.loads(sys.argv[1])["services"] if x["service"]=="odd1"][0]; print(s["owner_uid"], s["owner_user"])' "$OUT")"
check_eq "… and nothing of this fails the run (exit 0)" 0 "$RC"
nobody sh -c 'for i in $(seq 90); do "$1" "$2/vtrace.h$i.$((100000 + i))" --service h$i --ops 1024 --shards 64 $3; done' sh \
	"$VTFORGE" "$VTRACE_DIR" --sparse
before=$(tmpfs_used)
run "$IOLENS" vstat --json
check "vstat with 100 hostile segments: ends (exit $RC)" test "$RC" -ne 124
check_match "… still shows the real server" "\"service\":\"victim\"" "$OUT"
check_match "… says nobody's junk untrusted" "vtrace.h90.100090.*untrusted \(user nobody, uid 65534\)" "$ERR"
run "$IOLENS" export --once
check "export --once: ends (exit $RC)" test "$RC" -eq 0
check_match "… still exports the real server" "iolens_vtrace_requests_total\\{service=\"victim\",pid=\"$victim_pid\",uid=\"0\",user=\"root\",op=\"OPA\"\\} 100" "$OUT"
run "$IOLENS" doctor --json 1
check "doctor 1: ends (exit $RC)" test "$RC" -ne 124 -a "$RC" -lt 4
after=$(tmpfs_used)
check "tmpfs usage did not grow while they were read ($before -> $after bytes)" test "$after" -le $((before + 65536))
for i in $(seq 5); do eval "exec {odd${i}_keep}>&- {big${i}_keep}>&-"; done
rm -f "$VTRACE_DIR"/vtrace.h*.1000* "$VTRACE_DIR"/vtrace.odd* "$VTRACE_DIR"/vtrace.big*

# ---- Pid namespaces: twins both pid 1, both live ------------------------------------------------
if unshare --pid --fork --mount-proc true 2>/dev/null; then
	for twin in 1 2; do
		mkfifo "$T/twin$twin.in"
		unshare --pid --fork --mount-proc "$VTLOAD" twin OPA < "$T/twin$twin.in" > "$T/twin$twin.out" &
		eval "exec {twin${twin}_in}>\"$T/twin$twin.in\""
		on_exit "kill $! 2>/dev/null"
		for i in $(seq 100); do grep -q ready "$T/twin$twin.out" && break; sleep 0.1; done
	done
	run "$IOLENS" vstat --json twin
	check_eq "two servers of one name, each pid 1 in its namespace: both shown, live" "live live" \
		"$(py 'import json,sys; print(" ".join(s["state"] for s in json.loads(sys.argv[1])["services"]))' "$OUT")"
	check_eq "… each by its pid here, and 1 in its namespace" "2 1 1" \
		"$(py 'import json,sys; s=json.loads(sys.argv[1])["services"]; print(len({x["pid"] for x in s}), *[x.get("ns_pid") for x in s])' "$OUT")"
	check_eq "… two files, neither unlinked by the other" 2 "$(ls "$VTRACE_DIR" | grep -c '^vtrace\.twin\.1')"
	exec {twin1_in}>&- {twin2_in}>&-
else
	skip "pid namespaces: unshare --pid is not allowed here"
fi

# ---- A container's /dev/shm, and a deleted segment: found through the process --------------------
mkfifo "$T/box.in"
# unshare, sh and env exec each other: vtload is the process started here, $!.
unshare -m sh -c 'mount -t tmpfs box /dev/shm && exec env -u VTRACE_DIR "$0" box OPA' "$VTLOAD" < "$T/box.in" > "$T/box.out" &
box_pid=$!
exec {box_in}>"$T/box.in"
on_exit "kill $box_pid 2>/dev/null"
for i in $(seq 100); do grep -q ready "$T/box.out" && break; sleep 0.1; done
run "$IOLENS" vstat --json -p "$box_pid"
check_eq "-p PID: a segment in the process's own /dev/shm (a container's)" "box:$box_pid:live" "$(services "$OUT")"
run "$IOLENS" vstat --json box
check_eq "… not in ours (vstat box: exit 1)" 1 "$RC"
exec {box_in}>&-

start_load gone OPA
say gone "run OPA 3"
rm -f "$gone_path"
run "$IOLENS" vstat --json -p "$gone_pid"
check_eq "-p PID: a segment its server unlinked, through /proc/PID/fd" "gone:$gone_pid:live 3" \
	"$(services "$OUT") $(py 'import json,sys; print(json.loads(sys.argv[1])["services"][0]["total"]["completions"])' "$OUT")"

# ---- A zombie is dead: stale, its hang frozen, its series gone ------------------------------------
mkfifo "$T/z.in" "$T/z.out"
sh -c '"$0" zomb OPA OPB < "$1" > "$2" & echo $!; exec sleep 600' "$VTLOAD" "$T/z.in" "$T/z.out" > "$T/z.pid" &
zparent=$!
on_exit "kill $zparent 2>/dev/null"
exec {z_in}>"$T/z.in" {z_out}<"$T/z.out"
read -r -u "$z_out" _ zpath
# The server can answer before its shell has written its pid: wait for the pid, not the answer.
wait_until 60 test -s "$T/z.pid"
zpid=$(cat "$T/z.pid")
echo "hold OPA" >&$z_in; read -r -u "$z_out" _
t0=$(date +%s%N); while [ $(( $(date +%s%N) - t0 )) -lt 300000000 ]; do sleep 0.05; done
echo "run OPB 1" >&$z_in; read -r -u "$z_out" _ # a last sign of life, 0.3 s into the hang
kill -9 "$zpid"
for i in $(seq 100); do [ "$(awk '{ print $3 }' "/proc/$zpid/stat" 2>/dev/null)" = Z ] && break; sleep 0.05; done
check_eq "the killed server is a zombie (its parent does not reap it)" Z "$(awk '{ print $3 }' "/proc/$zpid/stat")"
run "$IOLENS" vstat --json zomb
check_eq "vstat: a zombie's segment is stale" "zomb:$zpid:stale" "$(services "$OUT")"
run "$IOLENS" vstat --json --stale --hang-after 0 zomb
h1=$(py 'import json,sys; print(json.loads(sys.argv[1])["services"][0]["ops"][0]["hang_ns"])' "$OUT")
t0=$(date +%s%N); while [ $(( $(date +%s%N) - t0 )) -lt 300000000 ]; do sleep 0.05; done
run "$IOLENS" vstat --json --stale --hang-after 0 zomb
h2=$(py 'import json,sys; print(json.loads(sys.argv[1])["services"][0]["ops"][0]["hang_ns"])' "$OUT")
check "--stale: the dead server's hang is frozen at its last sign of life, not aging ($h1, $h2)" test "$h1" = "$h2" -a "$h1" != None
check "… which came 0.3 s into it ($h1 ns)" test "$h1" -ge 300000000 -a "$h1" -lt 30000000000
run "$IOLENS" export --once
check_no_match "export: no series of the dead server" 'service="zomb"' "$OUT"
run "$IOLENS" doctor --json 1
check_eq "doctor: no hang of a dead server" absent "$(dq get vtrace-hang service service zomb <<<"$OUT" || echo absent)"
kill "$zparent"; wait "$zparent" 2>/dev/null
exec {z_in}>&- {z_out}<&-

# ---- Half made: said, and --clean removes it once its writer is gone --------------------------------
"$VTFORGE" "$VTRACE_DIR/vtrace.half.999999" --service half --half
touch -d '1 minute ago' "$VTRACE_DIR/vtrace.half.999999"
run "$IOLENS" vstat --json
check_eq "a half-made segment found by the scan: said, not failing the run (exit 0)" 0 "$RC"
check_match "… said, with its age" "vtrace.half.999999: .*half made" "$ERR"
run "$IOLENS" vstat --json "$VTRACE_DIR/vtrace.half.999999"
check_eq "… named on the command line: exit 1" 1 "$RC"
run "$IOLENS" vstat --clean
check_match "--clean removes it, and says so" "removed $VTRACE_DIR/vtrace.half.999999 \(half made" "$OUT$ERR"
check "… gone" test ! -e "$VTRACE_DIR/vtrace.half.999999"
"$VTFORGE" "$VTRACE_DIR/vtrace.fresh.999998" --service fresh --half
run "$IOLENS" vstat --clean
check "… but not one made a moment ago (its writer may be filling it)" test -e "$VTRACE_DIR/vtrace.fresh.999998"
rm -f "$VTRACE_DIR/vtrace.fresh.999998"

# ---- A restart: said, and rates never mix the two processes -----------------------------------------
start_load again OPA
say again "run OPA 1000"
old_pid=$again_pid
"$IOLENS" vstat --json again 0.5 8 >"$T/again.json" 2>"$T/again.err" &
watcher=$!
for i in $(seq 100); do [ -s "$T/again.json" ] && break; sleep 0.05; done
say again quit
start_load again OPA
say again "run OPA 5"
wait "$watcher"
check_match "the reader says the service restarted, old and new pid" \
	"again: restarted: pid $old_pid is gone, pid $again_pid took its place" "$(cat "$T/again.err")"
check_eq "… the new one's first interval counts its 5 requests, nothing of the old one's 1000" 5 \
	"$(py 'import json,sys
for line in open(sys.argv[1]):
    for s in json.loads(line)["services"]:
        if s["pid"] == int(sys.argv[2]) and s.get("restarted_from_pid") == int(sys.argv[3]):
            print(s["total"]["completions"] if s["total"] else 0); sys.exit()' "$T/again.json" "$again_pid" "$old_pid")"

# Another user's server of the same name after the first one is gone: not its restart.
start_load handover OPA
"$IOLENS" vstat --json handover 0.5 6 >"$T/handover.json" 2>"$T/handover.err" &
watcher=$!
for i in $(seq 100); do [ -s "$T/handover.json" ] && break; sleep 0.05; done
say handover quit
mkfifo "$T/nobody-handover.in"
"${AS_NOBODY[@]}" "$VTLOAD" handover OPA < "$T/nobody-handover.in" > "$T/nobody-handover.out" &
nobody_server=$!
exec {nh}>"$T/nobody-handover.in"
on_exit "kill $nobody_server 2>/dev/null"
wait "$watcher"
check_eq "nobody's server of the name the root one had: seen (pid $nobody_server)" "$nobody_server" \
	"$(py 'import json,sys
pids = {s["pid"] for line in open(sys.argv[1]) for s in json.loads(line)["services"]}
print(int(sys.argv[2]) if int(sys.argv[2]) in pids else sorted(pids))' "$T/handover.json" "$nobody_server")"
check_no_match "… and not called its restart" "restarted" "$(cat "$T/handover.err")"
exec {nh}>&-

echo "1..$t_count"
