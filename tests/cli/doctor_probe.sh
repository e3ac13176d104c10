#!/usr/bin/env bash
# doctor_probe.sh: a FUSE mount whose statfs never answers, doctor run again and again: one probe of it at most, left waiting in D, never sent again while it waits, never reported as a stuck process (a process named like one is); once the server answers, the probe ends and doctor probes as before; the recorder, beside such a mount, probes the others with one child it keeps.
# The hung mount lives in a mount namespace of the test's own: nothing else on the machine (another
# doctor, a test run beside this one, a backup) sees it and hangs on it, nor does this test's doctor
# see theirs.
if [ -z "${DOCTOR_PROBE_NS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	DOCTOR_PROBE_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

need_fuse_example
"$FPT" --help 2>&1 | grep -q -- --hang-all || skip_all "$FPT has no --hang-all"

export VTRACE_DIR=$T/vtrace
SRC=$T/src MNT=$T/mnt BIND=$T/bind PUB=$T/pub
mkdir -p "$VTRACE_DIR" "$SRC" "$MNT" "$BIND" "$PUB"
chmod 711 "$T"
chmod 755 "$PUB"
make_file "$SRC/file" 4096
IOLENS_EXE=$(readlink -f "$IOLENS")
MARKS=/run/iolens/probes

dq() { python3 "$TOP/tests/cli/doctor_query.py" "$@" 2>>"$T/dq.err"; }
# probes: the iolens processes of this test's mount namespace waiting for an answer of FUSE (in
# request_wait_answer; only this test's mount keeps them there, where another test's iolens may
# wait on its own), as "pid:state" lines.
probes() {
	python3 - "$IOLENS_EXE" <<'EOF'
import os, sys
exe = sys.argv[1]
ns = os.readlink("/proc/self/ns/mnt")
found = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if os.readlink("/proc/%s/exe" % pid) != exe or os.readlink("/proc/%s/ns/mnt" % pid) != ns:
            continue
        wchan = open("/proc/%s/wchan" % pid).read()
        stack = open("/proc/%s/stack" % pid).read()
        state = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[0]
    except OSError:
        continue
    if wchan == "request_wait_answer" or "fuse_simple_request" in stack:
        found.append("%s:%s" % (pid, state))
print("\n".join(found))
EOF
}
count_probes() { probes | grep -c .; }
stop_all() {
	[ -n "${SERVER:-}" ] || return 0
	kill -USR1 "$SERVER" 2>/dev/null # answers what it holds: the probe and the forged process end
	[ -n "${FORGED:-}" ] && kill -KILL "$FORGED" 2>/dev/null
	mountpoint -q "$BIND" && umount -l "$BIND"
	unmount_fuse "$MNT"
	kill "$SERVER" 2>/dev/null
	wait "$SERVER" 2>/dev/null
	SERVER=
}
on_exit stop_all

# Every FUSE_STATFS held until SIGUSR1, as a server that takes minutes to answer one; allow_other
# lets the unprivileged user below reach it.
"$FPT" --service mute --hang-op FUSE_STATFS --hang-all -o allow_other "$SRC" "$MNT" 2>"$T/server.log" &
SERVER=$!
wait_mounted "$MNT" "$SERVER" || { not_ok "fuse-passthrough mounts: $(head -c 400 "$T/server.log")"; exit 1; }
mount --bind "$MNT" "$BIND" || { not_ok "bind mount of the FUSE mount"; exit 1; }
DEV=$(awk -v m="$MNT" '$5 == m { d = $3 } END { print d }' /proc/self/mountinfo)
check_match "the mount's device, from mountinfo ($DEV)" "^0:[0-9]+$" "$DEV"
check_eq "no iolens process waits on it before doctor runs" 0 "$(count_probes)"

# ---- Run 1: the probe does not answer; it is killed and stays, in D ------------------------------

run "$IOLENS" doctor --json 1.5
# (exit 3, a warning, or 4 when another test beside this one makes something critical)
check_match "run 1: a warning, or worse (exit $RC)" "^[34]$" "$RC"
check_eq "… the mount's, a warning" warning "$(dq severity unresponsive mount "$MNT" <<<"$OUT")"
check_eq "… unresponsive: the mount, by its path, with its source" "$SRC" "$(dq get unresponsive source mount "$MNT" <<<"$OUT")"
check_eq "… probed by this run" True "$(dq get unresponsive probed mount "$MNT" <<<"$OUT")"
P=$(dq get unresponsive probe_pid mount "$MNT" <<<"$OUT")
check_match "… the probe left waiting, by its pid ($P)" "^[0-9]+$" "$P"
check_eq "… the bind mount of it: unresponsive too" "$SRC" "$(dq get unresponsive source mount "$BIND" <<<"$OUT")"
check_eq "… not probed again (the same device): the same probe named" "False $P" \
	"$(dq get unresponsive probed mount "$BIND" <<<"$OUT") $(dq get unresponsive probe_pid mount "$BIND" <<<"$OUT")"
in_d() { [ "$(probes)" = "$P:D" ]; }
wait_until 30 in_d
check_eq "… one iolens process waits on the mount: the probe, in D (killed, unkillable)" "$P:D" "$(probes)"
check_eq "… it names itself $MARKS's kind of process" iolens-probe "$(cat /proc/$P/comm 2>/dev/null)"
check_match "… it holds the mark of the device, $MARKS/dev-$DEV (/proc/locks)" \
	"POSIX +ADVISORY +WRITE +$P " "$(grep -F " $P " /proc/locks)"
check_eq "… the mark: root's, no one else's to read or write" "600 root" "$(stat -c '%a %U' "$MARKS/dev-$DEV")"
check "… nobody cannot make a mark of their own there" bash -c "! ${AS_NOBODY[*]} touch $MARKS/dev-9999:1 2>/dev/null"
check "… nor open root's to lock it" bash -c "! ${AS_NOBODY[*]} cat $MARKS/dev-$DEV >/dev/null 2>&1"

# ---- Run 2, as text: no second probe; the mount said not to answer, since when; the probe not stuck ------

run "$IOLENS" doctor 1.5
check_match "run 2 (text): a warning, or worse (exit $RC)" "^[34]$" "$RC"
check_match "… $MNT does not answer" "warning: $MNT \(fuse[^)]* on $SRC\) does not answer" "$OUT"
check_match "… for how long, by which probe, since when" \
	"stat and statfs of $MNT: no answer for [0-9.]+ s \(iolens probe pid $P, waiting since [0-9-]+ [0-9:]+\); no other probe" "$OUT"
check_eq "… no probe among the stuck processes" "" \
	"$(for pid in $(probes | cut -d: -f1); do grep -oE "process $pid \([^)]*\) is stuck" <<<"$OUT"; done)"
check_eq "… still the one probe" "$P:D" "$(probes)"
w2=$(grep -oE "no answer for [0-9.]+ s" <<<"$OUT" | head -1 | awk '{ print $4 }')

# ---- Run 3, JSON, with a process of another user named like a probe, stuck in D on the same mount ----

cp "$(command -v stat)" "$PUB/iolens-probe"
chmod 755 "$PUB/iolens-probe"
"${AS_NOBODY[@]}" "$PUB/iolens-probe" -f "$MNT" >/dev/null 2>&1 &
FORGED=$!
disown "$FORGED" # its SIGKILL below is the test's, not news
forged_waits() { [ "$(cat /proc/$FORGED/wchan 2>/dev/null)" = request_wait_answer ]; }
wait_until 30 forged_waits
kill -KILL "$FORGED" # now in D too, as a probe would be
wait_until 30 in_state "$FORGED" D
check_eq "nobody's 'iolens-probe', in D on the mount" "iolens-probe D" \
	"$(cat /proc/$FORGED/comm) $(state_of "$FORGED")"
run "$IOLENS" doctor --json 1.5
check_match "run 3 (JSON): a warning, or worse (exit $RC)" "^[34]$" "$RC"
check_eq "… the mount's, a warning" warning "$(dq severity unresponsive mount "$MNT" <<<"$OUT")"
check_eq "… unresponsive, not probed, the same probe" "False $P" \
	"$(dq get unresponsive probed mount "$MNT" <<<"$OUT") $(dq get unresponsive probe_pid mount "$MNT" <<<"$OUT")"
w1=$(python3 -c 'import json, sys
f = [f for f in json.load(sys.stdin)["findings"] if f["rule"] == "unresponsive" and f["data"]["mount"] == sys.argv[1]]
print(f[0]["data"]["probe_waiting_seconds"], f[0]["data"]["probe_started"] is not None, f[0]["data"]["probe_asks"])' "$MNT" <<<"$OUT")
check_match "… how long it has waited, when it started, what it asks" "^[0-9.]+ True stat and statfs of $MNT$" "$w1"
check "… waiting longer than run 2 said: one probe all along (${w2:-?} s, then ${w1%% *} s)" \
	awk -v a="${w1%% *}" -v b="$w2" 'BEGIN { exit !(b > 0 && a > b) }'
stuck_pids=$(python3 -c 'import json, sys
print(" ".join(sorted(str(f["data"]["pid"]) for f in json.load(sys.stdin)["findings"] if f["rule"] == "stuck")))' <<<"$OUT")
waiting=$(probes | cut -d: -f1 | sort | tr '\n' ' ')
check_eq "… no probe among the stuck processes (stuck: $stuck_pids; probes: $waiting)" "" \
	"$(comm -12 <(tr ' ' '\n' <<<"$stuck_pids" | sort) <(tr ' ' '\n' <<<"$waiting" | sort) | grep .)"
check_eq "… the process named like one is: a name proves nothing" "iolens-probe" "$(dq get stuck comm pid "$FORGED" <<<"$OUT")"
check_eq "… still the one probe" "$P:D" "$(probes)"

# export probes filesystems too, marked the same way: it finds doctor's probe waiting and sends none.
run "$IOLENS" export --once --collector.disable-defaults --collector.filesystem
check_match "export on the same hung mount: iolens_filesystem_device_error 1" \
	"^iolens_filesystem_device_error\{[^}]*mountpoint=\"$MNT\"\} 1$" "$OUT"
check_eq "… at once, no probe of its own beside doctor's: still the one" "$P:D" "$(probes)"

# The server says each statfs it holds and who asked: the truth of what reached the mount.
# (Counting iolens processes waiting on FUSE is not: doctor's O_DIRECT probe may open, through
# /proc/PID/fd, a file of another test's FUSE mount, answered a moment later.)
held=$(sed -n 's/.*FUSE_STATFS held: .* from pid //p' "$T/server.log" | sort -n | tr '\n' ' ')
check_eq "all three runs and the export: one statfs reached the mount from iolens, the probe's (server's log)" \
	"$(printf '%s\n' "$P" "$FORGED" | sort -n | tr '\n' ' ')" "$held"

# ---- The server answers: the probe ends, and doctor probes the mount as before ------------------------

kill -USR1 "$SERVER"
wait_until 30 gone "$P"
check "once the server answers, the probe ends" gone "$P"
wait_until 30 gone "$FORGED"
check "… and so does the process named like one" gone "$FORGED"
FORGED=
check_eq "… no iolens process waits on the mount any more" 0 "$(count_probes)"
check_eq "… and no one holds its mark" "" "$(grep -F " $P " /proc/locks)"
run "$IOLENS" doctor --json 0
check_eq "a later doctor probes it again: no unresponsive mount" "absent absent" \
	"$(dq get unresponsive mount mount "$MNT" <<<"$OUT") $(dq get unresponsive mount mount "$BIND" <<<"$OUT")"
check_eq "… and leaves nothing behind" 0 "$(count_probes)"
# This iolens's probes (another checkout's doctor may run on the machine: its are not ours). One
# that doctor left waiting for a late answer (a busy machine's server) ends as the answer comes.
our_probes() {
	for p in /proc/[0-9]*; do
		[ "$(cat $p/comm 2>/dev/null)" = iolens-probe ] &&
			[ "$(readlink $p/exe 2>/dev/null)" = "$IOLENS_EXE" ] && echo "${p#/proc/}"
	done
}
no_probes_left() { [ -z "$(our_probes)" ]; }
wait_until 30 no_probes_left
check_eq "… its probes all gone: no iolens-probe of $IOLENS left" "" "$(our_probes)"

# ---- The recorder: one probe kept between windows; a mount that stops answering costs it one -----
# record --doctor probes the mounts every window by one child it keeps. A second FUSE mount whose
# statfs never answers, then a small tmpfs filled up (mounted after it, so probed after it in
# each window): the child that asked the hung mount is killed and left waiting, a new one probes
# the tmpfs, and the windows after send nothing to the hung mount (its mark is held). The server
# says each statfs it holds, and who asked: the truth of what reached the hung mount. (Counting
# the recorder's processes waiting on FUSE is not: its O_DIRECT probe may open, through
# /proc/PID/fd, a file of another test's FUSE mount, answered a moment later.)
stop_all
SRC2=$T/src2 MNT2=$T/mnt2 FULL=$T/full
mkdir -p "$SRC2" "$MNT2" "$FULL"
"$FPT" --service mute --hang-op FUSE_STATFS --hang-all "$SRC2" "$MNT2" 2>"$T/server2.log" &
SERVER2=$!
stop_server2() {
	[ -n "${SERVER2:-}" ] || return 0
	stop_held_server "$SERVER2" "$MNT2"
	SERVER2=
	mountpoint -q "$FULL" && umount -l "$FULL"
}
on_exit stop_server2
if wait_mounted "$MNT2" "$SERVER2" && mount -t tmpfs -o size=1m tmpfs "$FULL"; then
	head -c 2M /dev/zero >"$FULL/fill" 2>/dev/null
	check_eq "the tmpfs filled (df's use)" 100% "$(df --output=pcent "$FULL" | tail -1 | tr -d ' ')"
	begin=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	run "$IOLENS" record --doctor --dir "$T/rec" --count 4 0.5
	check_eq "record --doctor beside a mount that does not answer: exit 0 ($(head -c 300 <<<"$ERR"))" 0 "$RC"
	run "$IOLENS" doctor --json --record-dir "$T/rec" --from "$begin"
	check_eq "doctor --from its windows: the mount unresponsive" "$SRC2" "$(dq get unresponsive source mount "$MNT2" <<<"$OUT")"
	R=$(dq get unresponsive probe_pid mount "$MNT2" <<<"$OUT")
	check_eq "… the probe left waiting on it, by its pid: in D, the one iolens process waiting" "$R:D" "$(probes)"
	check_eq "… the tmpfs probed after it, in the same window, by another child: full" "100" \
		"$(dq get full used_percent mount "$FULL" <<<"$OUT" | cut -d. -f1)"
	held=$(sed -n 's/.*FUSE_STATFS held: .* from pid //p' "$T/server2.log" | tr '\n' ' ')
	check_eq "… one statfs reached the hung mount in the four windows, from that probe (the server's log)" \
		"$R " "$held"
	check_eq "… the recorder's probe of the other mounts ended with it" "" \
		"$(for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = iolens-probe ] &&
			[ "$(readlink $p/exe 2>/dev/null)" = "$IOLENS_EXE" ] &&
			[ "${p#/proc/}" != "$R" ] && echo "${p#/proc/}"; done)"
	stop_server2
	wait_until 30 gone "$R"
	check "once its server answers, the recorder's probe ends" gone "$R"
else
	not_ok "a second FUSE mount and a tmpfs: $(head -c 400 "$T/server2.log")"
fi
stop_all

echo "1..$t_count"
