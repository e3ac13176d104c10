#!/usr/bin/env bash
# doctor_crowd.sh: several iolens runs at once (doctors, an exporter) never make a mount that answers "not answer": a probe of another run that began a moment ago is waited for; only one that has waited the whole timeout names the mount.
# The mount the holders hold is a btrfs filesystem of the test's own (on a loop device: a disk's
# filesystem probed in a child, marked; a tmpfs or an ext4 is asked in place), in a mount namespace
# of its own: no other run on the machine probes it.
if [ -z "${DOCTOR_CROWD_NS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	DOCTOR_CROWD_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

is_root || skip_all "needs root (marks in /run/iolens/probes, a loop device's mount)"
[ -n "${DOCTOR_CROWD_NS:-}" ] || skip_all "needs unshare (a mount namespace of the test's own)"

MNT=$T/mnt
mkdir -p "$MNT"
why=$(child_probed_fs "$T/fs.img") || skip_all "$why"
LOOP=$(loop_attach_apart "$T/fs.img") || skip_all "no free loop device"
on_exit 'umount "$MNT" 2>/dev/null' # (hooks run in order: unmounted, then the loop device let go)
on_exit 'loop_release "$LOOP" "$T/fs.img"'
mount "$LOOP" "$MNT" || { not_ok "mount $LOOP at $MNT"; exit 1; }
DEV=$(mountpoint -d "$MNT")
"$IOLENS" doctor --record "$T/warm.snap" 0 >/dev/null 2>&1 # makes /run/iolens/probes
MARK=/run/iolens/probes/dev-$DEV
[ -d /run/iolens/probes ] || skip_all "doctor made no /run/iolens/probes"
on_exit 'rm -f "$MARK"'

dq() { python3 "$TOP/tests/cli/doctor_query.py" "$@" 2>>"$T/dq.err"; }
# mount_state SNAPSHOT: the state doctor recorded of $MNT (0 answered, 1 timed out, 2 busy, 3 failed).
mount_state() { awk -v m="$MNT" '$1 == "mount" && $2 == m { print $5 }' "$1"; }

# holder MODE: holds $MARK as an iolens probe does (a POSIX write lock, "BOOTTIME_NS WHAT" in it),
# until $T/release exists. MODE young: the start it writes is always 0.2 s ago (another run's probe
# sent a moment ago, again and again), and it lets go 0.3 s after the first open of the mark by
# someone else (inotify: a doctor looked while it held it), writing $T/looked; MODE old: it says it
# began 5 s ago (a probe that has waited five timeouts).
holder() {
	python3 - "$MARK" "$1" "$T" <<'EOF' &
import ctypes, fcntl, os, select, struct, sys, time
mark, mode, tmp = sys.argv[1:4]
fd = os.open(mark, os.O_RDWR | os.O_CREAT, 0o600)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
def say(ago):
    line = b"%d held by doctor_crowd.sh\n" % (time.clock_gettime_ns(time.CLOCK_BOOTTIME) - int(ago * 1e9))
    os.ftruncate(fd, len(line))
    os.pwrite(fd, line, 0)
libc = ctypes.CDLL(None, use_errno=True)
ino = libc.inotify_init1(os.O_NONBLOCK)
libc.inotify_add_watch(ino, mark.encode(), 0x20)  # IN_OPEN
say(0.2 if mode == "young" else 5)
open(tmp + "/held", "w").close()
looked = None
while not os.path.exists(tmp + "/release"):
    if mode == "young":
        say(0.2)
        if looked is None and select.select([ino], [], [], 0)[0]:
            looked = time.monotonic()
            open(tmp + "/looked", "w").close()
        if looked is not None and time.monotonic() - looked >= 0.3:
            break
    time.sleep(0.02)
EOF
	HOLDER=$!
	wait_until 30 test -e "$T/held"
}
stop_holder() { touch "$T/release"; wait "$HOLDER" 2>/dev/null; rm -f "$T/release" "$T/held" "$T/looked"; }
on_exit '[ -n "${HOLDER:-}" ] && { touch "$T/release"; wait "$HOLDER"; }'

# ---- A probe of another run, young: waited for, the mount then probed ---------------------------

holder young
run "$IOLENS" doctor --json --record "$T/young.snap" 0
check "the test's holder saw the doctor look at the mark while it held it (inotify)" test -e "$T/looked"
check_eq "… the mount answered once the holder let go: state 0 (answered)" 0 "$(mount_state "$T/young.snap")"
check_eq "… no unresponsive finding of it" absent "$(dq get unresponsive mount mount "$MNT" <<<"$OUT")"
stop_holder

# ---- A probe that has waited 5 s: the mount is named, by that probe ------------------------------

holder old
run "$IOLENS" doctor --json --record "$T/old.snap" 0
check_eq "a holder that began 5 s ago: the mount is said not to answer (state 2, busy)" 2 \
	"$(mount_state "$T/old.snap")"
check_eq "… by the test's holder, its pid" "$HOLDER" "$(dq get unresponsive probe_pid mount "$MNT" <<<"$OUT")"
W=$(dq get unresponsive probe_waiting_seconds mount "$MNT" <<<"$OUT")
check "… waiting 5 s or more, as the holder said ($W)" python3 -c "import sys; sys.exit(not float('$W') >= 5)"
check_more "a mount whose probe has waited 5 s" "$OUT"
stop_holder

# ---- A crowd: three doctors and an exporter at once, again and again -----------------------------

rounds=${DOCTOR_CROWD_ROUNDS:-6} named=0 runs=0
for ((r = 0; r < rounds; r++)); do
	pids=()
	for k in 1 2 3; do "$IOLENS" doctor --json 0.2 >"$T/crowd.$k" 2>"$T/crowd.$k.err" & pids+=($!); done
	"$IOLENS" export --once >/dev/null 2>&1 & pids+=($!)
	wait "${pids[@]}"
	for k in 1 2 3; do
		runs=$((runs + 1))
		# (A mount in another test's scratch directory, a FUSE server it holds, may truly not answer.)
		python3 -c 'import json,sys; sys.exit(any(f["rule"] == "unresponsive" and not (f["data"].get("mount") or "").startswith(sys.argv[2] + "/")
                                     for f in json.load(open(sys.argv[1]))["findings"]))' \
			"$T/crowd.$k" "$(readlink -f "$TEST_TMPDIR")" || { named=$((named + 1)); cp "$T/crowd.$k" "$T/named.$named"; }
	done
done
answered=0 mounts=0
while read -r dir; do
	mounts=$((mounts + 1))
	# (Three tries: on a loaded machine stat(1) itself may start later than a second.)
	for try in 1 2 3; do timeout 1 stat -f "$dir" >/dev/null 2>&1 && { answered=$((answered + 1)); break; }; done
done < <(awk '$1 == "mount" { print $2 }' "$T/warm.snap" | sed 's/\\x20/ /g' | sort -u | grep -v "^$(readlink -f "$TEST_TMPDIR")/")
check_eq "the machine's $mounts writable mounts (the tests' scratch aside) answer statfs within 1 s (stat -f, one of three tries)" "$mounts" "$answered"
check_eq "$runs doctors run three at a time beside an exporter: none names a mount as not answering" 0 "$named"
[ "$named" = 0 ] || sed -n 1,400p "$T/named.1" | grep -A3 unresponsive | sed 's/^/# /'

echo "1..$t_count"
