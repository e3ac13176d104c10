#!/usr/bin/env bash
# doctor_hang.sh: iolens doctor on a hung server: the FUSE example holds one read (--hang-op), its reader sleeps in D waiting for the page, and doctor names both, with their numbers; then a jump in latency (--slow-op); all gone once the server lets go.
# Its hung mounts live in a mount namespace of the test's own: no other doctor on the machine
# (a test run beside this one) finds them, nor does this test's doctor find theirs.
if [ -z "${DOCTOR_HANG_NS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	DOCTOR_HANG_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

need_fuse_example

export VTRACE_DIR=$T/vtrace
SRC=$T/src MNT=$T/mnt
mkdir -p "$VTRACE_DIR" "$SRC" "$MNT"
make_file "$SRC/file" 65536

# dq QUERY ...: what doctor --json says (tests/cli/doctor_query.py lists the queries).
dq() { python3 "$TOP/tests/cli/doctor_query.py" "$@" 2>>"$T/dq.err"; }
stop_server() {
	[ -n "${SERVER:-}" ] || return 0
	stop_held_server "$SERVER" "$MNT"
	SERVER=
}
on_exit stop_server
on_exit '[ -n "${READER:-}" ] && kill -KILL "$READER" 2>/dev/null'

# ---- A hang: one FUSE_READ held, its reader waits in D for the page ------------------

"$FPT" --service hung --hang-op FUSE_READ "$SRC" "$MNT" 2>"$T/server.log" &
SERVER=$!
wait_mounted "$MNT" "$SERVER" || { not_ok "fuse-passthrough mounts: $(head -c 400 "$T/server.log")"; exit 1; }
SEG=$VTRACE_DIR/vtrace.hung.$SERVER
cat "$MNT/file" >/dev/null &
READER=$!
for i in $(seq 50); do grep -q "FUSE_READ hangs" "$T/server.log" && break; sleep 0.1; done
check_match "the server holds the first FUSE_READ" "FUSE_READ hangs until SIGUSR1" "$(cat "$T/server.log")"
wait_until 30 in_state "$READER" D
check_eq "… and cat waits in D (/proc/PID/stat)" D "$(state_of "$READER")"

run "$IOLENS" doctor --json 4
check_eq "doctor 4: a warning (exit 3)" 3 "$RC"
check_more "a hung FUSE server" "$OUT"
check_eq "vtrace-hang: the service, by its segment" hung "$(dq get vtrace-hang service op FUSE_READ <<<"$OUT")"
check_eq "… its pid" "$SERVER" "$(dq get vtrace-hang pid op FUSE_READ <<<"$OUT")"
check_eq "… one FUSE_READ in flight" 1 "$(dq get vtrace-hang in_flight op FUSE_READ <<<"$OUT")"
oldest=$(dq get vtrace-hang oldest_seconds op FUSE_READ <<<"$OUT")
check "… the oldest at least the 4 s watched ($oldest s)" awk -v s="$oldest" 'BEGIN { exit !(s >= 4) }'
"$IOLENS" vstat --json "$SEG" >"$T/vstat.json"
check_eq "… vstat says HANG of the same op" HANG "$(python3 -c 'import json, sys
ops = json.load(sys.stdin)["services"][0]["ops"]
print(next(o["state"] for o in ops if o["name"] == "FUSE_READ"))' <"$T/vstat.json" 2>/dev/null)"
check_eq "stuck: the reader, found by pid" "$READER" "$(dq get stuck pid pid "$READER" <<<"$OUT")"
check_eq "… a warning" warning "$(dq severity stuck pid "$READER" <<<"$OUT")"
seconds=$(dq get stuck seconds pid "$READER" <<<"$OUT")
check "… in D without a context switch for 3.5 s or more ($seconds)" awk -v s="$seconds" 'BEGIN { exit !(s >= 3.5) }'
check_eq "… waiting where /proc/PID/wchan says" "$(cat /proc/$READER/wchan)" "$(dq get stuck wchan pid "$READER" <<<"$OUT")"
check_match "… pointing at the hung server it may wait on" "; iolens vstat\$" \
	"$(dq get stuck more pid "$READER" <<<"$OUT")"
run "$IOLENS" doctor --no-config --json --disable vtrace-hang 4
check_match "… even with the vtrace-hang rule off: the snapshot says it, not another rule's finding" \
	"; iolens vstat\$" "$(dq get stuck more pid "$READER" <<<"$OUT")"

# (2 s: a thread is said stuck from a third of the 3 s threshold on, which a 1 s window whose
# first sample came late on a busy machine fell short of.)
run "$IOLENS" doctor 2
# (A warning, critical once the request has waited 60 s: the test's earlier runs take that long
# on a busy machine.)
check_match "the text: the hung service, whose, and op" "(warning|critical): service hung \(pid $SERVER\) of user root \(uid 0\) is hung on FUSE_READ" "$OUT"
check_match "… and the stuck reader, as info under 3 s watched (2 s)" "info: process $READER \(cat\) is stuck in uninterruptible sleep" "$OUT"
check_match "… with where it waits, and vstat to see more" "more: cat /proc/$READER/task/$READER/stack; iolens vstat" "$OUT"

kill -USR1 "$SERVER"
wait "$READER"
check_eq "SIGUSR1: the server lets the read go, cat ends well" 0 "$?"
was_reader=$READER READER=
run "$IOLENS" doctor --json 1
# (Others' threads may be in D on a busy machine: the test's own, the reader and the server, are not.)
check_eq "… then no hang and no stuck thread of the reader or the server" "absent absent absent" \
	"$(dq get vtrace-hang op op FUSE_READ <<<"$OUT") $(dq get stuck pid pid "$was_reader" <<<"$OUT") $(dq get stuck pid pid "$SERVER" <<<"$OUT")"
stop_server

# ---- A mount that does not answer: its FUSE_STATFS held; doctor says so and goes on ----------------

"$FPT" --service mute --hang-op FUSE_STATFS "$SRC" "$MNT" 2>"$T/server.log" &
SERVER=$!
wait_mounted "$MNT" "$SERVER" || { not_ok "fuse-passthrough mounts: $(head -c 400 "$T/server.log")"; exit 1; }
OUT=$(timeout 60 "$IOLENS" doctor --json 0 2>"$T/err")
RC=$?
check_eq "a mount whose statfs never returns: doctor ends all the same, with a warning (exit 3)" 3 "$RC"
check_match "… the server got the request it holds" "FUSE_STATFS hangs until SIGUSR1" "$(cat "$T/server.log")"
check_eq "… unresponsive: the mount, by its path, with its source" "$SRC" "$(dq get unresponsive source mount "$MNT" <<<"$OUT")"
check_eq "… after the time it waits" 1000 "$(dq get unresponsive timeout_ms mount "$MNT" <<<"$OUT")"
check_eq "… and nothing else said of it (not counted as full)" absent "$(dq get full mount mount "$MNT" <<<"$OUT")"
stop_server

# ---- A jump in latency: --slow-op adds 20 ms to each FUSE_GETATTR once the server gets SIGUSR2 ----

if "$FPT" --help 2>&1 | grep -q -- --slow-op; then
	"$FPT" --service slow --timeout 0 --slow-op FUSE_GETATTR:20 "$SRC" "$MNT" 2>"$T/server.log" &
	SERVER=$!
	wait_mounted "$MNT" "$SERVER" || { not_ok "fuse-passthrough --slow-op mounts: $(head -c 400 "$T/server.log")"; exit 1; }
	timeout 60 python3 -c 'import os, sys, time
while True:
    os.stat(sys.argv[1]); time.sleep(0.002)' "$MNT/file" &
	LOOP=$!
	on_exit "kill $LOOP 2>/dev/null"
	# A history to compare with: the loop's first 300 FUSE_GETATTRs at the server's usual speed.
	getattrs() { "$IOLENS" vstat --json "$VTRACE_DIR/vtrace.slow.$SERVER" 2>/dev/null | python3 -c 'import json, sys
print(sum(o["completions"] for s in json.load(sys.stdin)["services"] for o in s["ops"] if o["name"].startswith("FUSE_GETATTR")))' 2>/dev/null; }
	some_getattrs() { [ "$(getattrs || echo 0)" -ge 300 ]; }
	wait_until some_getattrs
	run "$IOLENS" doctor --json 1
	check_eq "a steady stat loop: no latency finding" absent "$(dq get vtrace-latency op op FUSE_GETATTR <<<"$OUT")"
	kill -USR2 "$SERVER"
	run "$IOLENS" doctor --json 2
	# (Its finding's severity: the exit status is the worst finding's, and a busy machine may have
	# others.)
	check_eq "SIGUSR2, 20 ms more a FUSE_GETATTR: a warning (exit 3 or, with worse findings of others, 4)" \
		"warning yes" "$(dq severity vtrace-latency op FUSE_GETATTR <<<"$OUT") $([ "$RC" = 3 ] || [ "$RC" = 4 ] && echo yes)"
	mean=$(dq get vtrace-latency mean_ms op FUSE_GETATTR <<<"$OUT")
	before=$(dq get vtrace-latency mean_ms_before op FUSE_GETATTR <<<"$OUT")
	check "… vtrace-latency: FUSE_GETATTR's mean at least 20 ms ($mean ms)" awk -v m="$mean" 'BEGIN { exit !(m >= 20) }'
	check "… against a mean before under a quarter of it ($before ms)" awk -v m="$mean" -v b="$before" 'BEGIN { exit !(b > 0 && b * 4 <= m) }'
	kill "$LOOP"
	stop_server
else
	skip "fuse-passthrough has no --slow-op"
fi

echo "1..$t_count"
