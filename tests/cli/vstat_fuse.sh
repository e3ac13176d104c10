#!/usr/bin/env bash
# vstat_fuse.sh: iolens vstat on a real FUSE server, examples/fuse-passthrough: counts, bytes, a lock hang, two workers.
. "$(dirname "$0")/lib.sh"

need_fuse_example
command -v python3 >/dev/null || skip_all "no python3"
if ! "$IOLENS" vstat --help >/dev/null 2>&1 && "$IOLENS" vstat --help 2>&1 | grep -q "'vstat' is not a command"; then
	skip_all "iolens vstat is not written yet"
fi

# The server's segment goes here, so that no other test's segments mix in.
export VTRACE_DIR=$T/vtrace
SRC=$T/src MNT=$T/mnt SERVICE=fpt-test HANG_AFTER=0.5
mkdir -p "$VTRACE_DIR" "$SRC/sub" "$MNT"
make_file "$SRC/file" 65536

# ---- Helpers ----------------------------------------------------------------------------

# Ends a process: TERM, then KILL after 5 s; waits for it.
stop_pid() {
	local pid=$1 i
	kill "$pid" 2>/dev/null || return 0
	for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}
# Waits for a process to end (as wait_until, two minutes at most: on a busy machine a server may
# take seconds to exit); its status, or 124 when it did not.
wait_pid() {
	wait_until gone "$1" || return 124
	wait "$1"
}
HELPERS=()
cleanup_fuse() {
	local pid
	for pid in "${HELPERS[@]}"; do stop_pid "$pid"; done
	unmount_fuse "$MNT"
	unmount_fuse "$T/mnt2"
	[ -n "${SERVER:-}" ] && stop_pid "$SERVER"
	[ -n "${SERVER2:-}" ] && stop_pid "$SERVER2"
}
on_exit cleanup_fuse

# What the JSON lines of `vstat --json` (stdin) say: python3, as json-c is not at hand in bash.
cat >"$T/vq.py" <<'EOF'
import json, sys
lines = [json.loads(l) for l in sys.stdin if l.strip()]
def ops(line):
    s = line["services"][0]
    return s["ops"] + [s["total"]]
def find(line, name):
    return next((o for o in ops(line) if name in (o["name"], o["op"])), None)
what, args = sys.argv[1], sys.argv[2:]
if what == "get":        # get LINE OP KEY: the value; "absent" when the op is not listed
    o = find(lines[int(args[0])], args[1])
    v = "absent" if o is None else o[args[2]]
    print("null" if v is None else v)
elif what == "service":  # service LINE KEY
    print(lines[int(args[0])]["services"][0][args[1]])
elif what == "labels":   # labels LINE: every op as "NAME(NUMBER)", one a line
    print("\n".join(o["op"] for o in lines[int(args[0])]["services"][0]["ops"]))
elif what == "lines":
    print(len(lines))
elif what == "max-util": # the highest util of any op or TOTAL on any line
    print(max(o["util"] for l in lines for o in ops(l)))
elif what == "op-utils": # op-utils LINE: the highest util of one op, the sum over ops, how many ops
    u = [o["util"] for o in lines[int(args[0])]["services"][0]["ops"]]
    print(max(u), sum(u), len(u))
EOF
vq() { python3 "$T/vq.py" "$@" 2>>"$T/vq.err"; }
# vstat ARGS...: one report since the segment was created, into $OUT.
vstat() { run "$IOLENS" vstat --json "$@"; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0 && a != "" && a != "null" && a != "absent") }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0 && a != "" && a != "null" && a != "absent") }'; }
within_2pc() { awk -v a="$1" -v n="$2" 'BEGIN { d = a - n; if (d < 0) d = -d; exit !(a != "" && d * 50 <= n) }'; }
# snapshot: a report since the start, every op listed, into $SNAP; val OP KEY reads it.
snapshot() { vstat -a "$SEG"; SNAP=$OUT; }
val() { vq get 0 "$1" "$2" <<<"$SNAP"; }
# in_flight OP: the server has a request of OP in flight (it got it and has not answered).
in_flight() { snapshot; [ "$(val "$1" inflight)" = 1 ]; }

# ---- The server ----------------------------------------------------------------------------

"$FPT" --service "$SERVICE" --hang-op FUSE_MKNOD "$SRC" "$MNT" 2>"$T/server.log" &
SERVER=$!
if ! wait_mounted "$MNT" "$SERVER"; then
	not_ok "fuse-passthrough mounts $SRC: $(head -c 400 "$T/server.log")"
	exit 1
fi
ok "fuse-passthrough mounts SOURCE on MOUNTPOINT"
SEG=$VTRACE_DIR/vtrace.$SERVICE.$SERVER
check "its segment is \$VTRACE_DIR/vtrace.SERVICE.PID" test -f "$SEG"
check_eq "the mount shows SOURCE" "$(cat "$SRC/file" | cksum)" "$(cat "$MNT/file" | cksum)"

vstat -a "$SEG"
check_eq "vstat --json -a SEGMENT: exit 0" 0 "$RC"
check_eq "one line without an interval" 1 "$(vq lines <<<"$OUT")"
check_eq "… since the start" True "$(python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["since_start"])' <<<"$OUT")"
check_eq "… the server's service" "$SERVICE" "$(vq service 0 service <<<"$OUT")"
check_eq "… and pid" "$SERVER" "$(vq service 0 pid <<<"$OUT")"
check_eq "… live" live "$(vq service 0 state <<<"$OUT")"
labels=$(vq labels 0 <<<"$OUT")
for op in "FUSE_LOOKUP(1)" "FUSE_OPEN(14)" "FUSE_RELEASE(18)" "FUSE_FLUSH(25)" "FUSE_SETLKW(33)" "FUSE_BATCH_FORGET(42)" \
	  "FUSE_COPY_FILE_RANGE(47)"; do
	check "-a lists $op, named and numbered as the kernel does" grep -qxF "$op" <<<"$labels"
done
check_eq "-a lists the 38 ops the server traces" 38 "$(wc -l <<<"$labels")"
vstat "$SERVICE"
check_eq "TARGET may be the service name" "$SEG" "$(vq service 0 path <<<"$OUT")"
# A pid goes with -p (a number alone is the interval, as in iostat's).
vstat -p "$SERVER"
check_eq "-p PID: the server's segment, one report, exit 0" "0 $SEG" "$RC $(vq service 0 path <<<"$OUT")"

# ---- 1. open(2) + close(2): one FUSE_OPEN, FUSE_FLUSH and FUSE_RELEASE each -----------------

N=3000
snapshot
open0=$(val FUSE_OPEN completions) flush0=$(val FUSE_FLUSH completions) release0=$(val FUSE_RELEASE completions)
python3 -c 'import os, sys
for _ in range(int(sys.argv[2])): os.close(os.open(sys.argv[1], os.O_RDONLY))' "$MNT/file" "$N"
check_eq "$N open+close through the mount" 0 "$?"
# FUSE_RELEASE comes after close(2) returns: wait for the last ones.
released() {
	snapshot
	release=$(val FUSE_RELEASE completions)
	[ $((release - release0)) -ge "$N" ]
}
wait_until released
open=$(val FUSE_OPEN completions) flush=$(val FUSE_FLUSH completions)
for op in open flush release; do
	before=${op}0
	delta=$((${!op} - ${!before}))
	check "FUSE_${op^^} completions = $N within 2 % (got $delta)" within_2pc "$delta" "$N"
done
check_eq "FUSE_OPEN: no errors" 0 "$(val FUSE_OPEN errors)"
check "FUSE_OPEN: a service time" ge "$(val FUSE_OPEN svctm_ns)" 1
check "FUSE_OPEN: p50 <= p99 <= max" python3 -c 'import sys; a = [int(x) for x in sys.argv[1:]]; sys.exit(not a[0] <= a[1] <= a[2])' \
	"$(val FUSE_OPEN p50_ns)" "$(val FUSE_OPEN p99_ns)" "$(val FUSE_OPEN max_ns)"

errors0=$(val FUSE_LOOKUP errors)
stat "$MNT/no-such-file" >/dev/null 2>&1
snapshot
check "a failed lookup counts as an error of FUSE_LOOKUP" ge "$(val FUSE_LOOKUP errors)" $((errors0 + 1))

# ---- 2. fio random writes: FUSE_WRITE with the bytes ---------------------------------------

if command -v fio >/dev/null; then
	size=$((16 << 20))
	snapshot
	writes0=$(val FUSE_WRITE completions) bytes0=$(val FUSE_WRITE bytes) fsync0=$(val FUSE_FSYNC completions)
	# Buffered: without writeback caching, each write(2) through FUSE is a FUSE_WRITE.
	run fio --name=randw --filename="$MNT/fio.dat" --rw=randwrite --bs=4k --size=$size --ioengine=psync \
		--direct=0 --end_fsync=1 --output=/dev/null
	check_eq "fio randwrite through the mount: exit 0" 0 "$RC"
	snapshot
	writes=$(val FUSE_WRITE completions) bytes=$(val FUSE_WRITE bytes)
	check "FUSE_WRITE completions: at least one per 4k block ($((writes - writes0)))" \
		ge $((writes - writes0)) $((size / 4096))
	check "FUSE_WRITE bytes >= the fio size ($((bytes - bytes0)) >= $size)" ge $((bytes - bytes0)) "$size"
	check "fio's end_fsync is a FUSE_FSYNC" ge "$(val FUSE_FSYNC completions)" $((fsync0 + 1))
	check_eq "the file is there, in full, in SOURCE" "$size" "$(stat -c %s "$SRC/fio.dat")"
else
	skip "fio is not installed"
fi

# ---- 3. A hang: a lock held through the mount, F_SETLKW waits in the server ---------------

cat >"$T/lock.py" <<'EOF'
# lock.py FILE hold|wait MARKER: hold: F_SETLK a write lock and keep it until killed; wait: F_SETLKW, then exit.
import fcntl, signal, sys
f = open(sys.argv[1], "r+")
fcntl.lockf(f, fcntl.LOCK_EX | (fcntl.LOCK_NB if sys.argv[2] == "hold" else 0))
open(sys.argv[3], "w").write("locked\n")
if sys.argv[2] == "hold":
    signal.pause()
EOF
wait_file() { local i; for i in $(seq 100); do [ -e "$1" ] && return 0; sleep 0.05; done; return 1; }
# Opens, stats and closes files for SECONDS: requests that must go on while one hangs.
# busy FILE STARTED STOP: opens, stats and closes FILE in a loop, touching STARTED after its first
# round, until STOP exists (so it covers the whole of a window however late either starts).
busy() {
	python3 -c 'import os, sys, time
first = True
while not os.path.exists(sys.argv[3]):
    os.close(os.open(sys.argv[1], os.O_RDONLY)); os.stat(sys.argv[1]); time.sleep(0.001)
    if first:
        open(sys.argv[2], "w").close(); first = False' "$1" "$2" "$3"
}

python3 "$T/lock.py" "$MNT/file" hold "$T/A.locked" & A=$!
HELPERS+=("$A")
check "process A takes a write lock through the mount (F_SETLK)" wait_file "$T/A.locked"
python3 "$T/lock.py" "$MNT/file" wait "$T/B.locked" & B=$!
HELPERS+=("$B")
check "process B's F_SETLKW reaches the server" wait_until in_flight FUSE_SETLKW
check "process B waits for a conflicting F_SETLKW" test ! -e "$T/B.locked"

busy "$MNT/file" "$T/busy.started" "$T/busy.stop" & BUSY=$!
HELPERS+=("$BUSY")
wait_until test -e "$T/busy.started"
timeout 60 "$IOLENS" vstat --json --hang-after "$HANG_AFTER" "$SEG" 1 2 >"$T/hang.json" 2>"$T/hang.err"
check_eq "vstat SEGMENT 1 2 during the hang: exit 0" 0 "$?"
touch "$T/busy.stop"
wait "$BUSY"
OUT=$(cat "$T/hang.json")
check_eq "… two lines: since the start, then one interval" 2 "$(vq lines <<<"$OUT")"
check_eq "FUSE_SETLKW: one request in flight" 1 "$(vq get 1 FUSE_SETLKW inflight <<<"$OUT")"
check_eq "FUSE_SETLKW: flagged HANG" HANG "$(vq get 1 FUSE_SETLKW state <<<"$OUT")"
hang_ns=$(vq get 1 FUSE_SETLKW hang_ns <<<"$OUT")
check "… aged at least the --hang-after threshold ($hang_ns ns)" ge "$hang_ns" 500000000
check "… 100 % util ($(vq get 1 FUSE_SETLKW util <<<"$OUT"))" ge "$(vq get 1 FUSE_SETLKW util <<<"$OUT")" 99.5
check_eq "… and no completion" 0 "$(vq get 1 FUSE_SETLKW completions <<<"$OUT")"
check_eq "TOTAL: HANG too" HANG "$(vq get 1 TOTAL state <<<"$OUT")"
check "TOTAL: 100 % util" ge "$(vq get 1 TOTAL util <<<"$OUT")" 99.5
check "other ops complete in the same interval: FUSE_OPEN ($(vq get 1 FUSE_OPEN completions <<<"$OUT"))" \
	ge "$(vq get 1 FUSE_OPEN completions <<<"$OUT")" 1
check "… and FUSE_FLUSH" ge "$(vq get 1 FUSE_FLUSH completions <<<"$OUT")" 1
check "… their own state is not HANG" test "$(vq get 1 FUSE_OPEN state <<<"$OUT")" != HANG

stop_pid "$A"
wait_pid "$B"
check_eq "when A lets go (killed: close drops its lock), B gets the lock" "0 yes" \
	"$? $([ -e "$T/B.locked" ] && echo yes)"
vstat --hang-after "$HANG_AFTER" "$SEG"
check_no_match "… and HANG is gone" '"HANG"' "$OUT"
check_eq "FUSE_SETLKW: none in flight" 0 "$(vq get 0 FUSE_SETLKW inflight <<<"$OUT")"
check "FUSE_SETLKW's longest request is the wait (max_ns >= 0.8 s)" ge "$(vq get 0 FUSE_SETLKW max_ns <<<"$OUT")" 800000000

# A waiter that gives up: the kernel sends FUSE_INTERRUPT, the server answers EINTR.
snapshot
errors0=$(val FUSE_SETLKW errors)
python3 "$T/lock.py" "$MNT/file" hold "$T/A2.locked" & A=$!
HELPERS+=("$A")
wait_file "$T/A2.locked"
python3 "$T/lock.py" "$MNT/file" wait "$T/B2.locked" 2>/dev/null & B=$!
wait_until in_flight FUSE_SETLKW
kill "$B"
wait_pid "$B"
check_eq "a waiter killed in F_SETLKW ends (FUSE_INTERRUPT)" 143 "$?"
snapshot
check "… its FUSE_SETLKW ends with an error" ge "$(val FUSE_SETLKW errors)" $((errors0 + 1))
check_eq "… and is no longer in flight" 0 "$(val FUSE_SETLKW inflight)"
stop_pid "$A"

# --hang-op FUSE_MKNOD: the first mknod waits for SIGUSR1. In a subdirectory: the VFS holds
# the parent's lock during mknod, so requests elsewhere are not held up by it.
mkfifo "$MNT/sub/fifo" & M=$!
HELPERS+=("$M")
wait_until in_flight FUSE_MKNOD
run ls "$MNT"
check_eq "--hang-op FUSE_MKNOD: other requests are served meanwhile" 0 "$RC"
# Past the threshold: in flight for --hang-after.
mknod_hung() { vstat --hang-after "$HANG_AFTER" "$SEG"; [ "$(vq get 0 FUSE_MKNOD state <<<"$OUT")" = HANG ]; }
wait_until mknod_hung
check_eq "… FUSE_MKNOD is flagged HANG" "1 HANG" \
	"$(vq get 0 FUSE_MKNOD inflight <<<"$OUT") $(vq get 0 FUSE_MKNOD state <<<"$OUT")"
kill -USR1 "$SERVER"
wait_pid "$M"
check_eq "… SIGUSR1 lets it go: mkfifo succeeds" 0 "$?"
check "… the FIFO is in SOURCE" test -p "$SRC/sub/fifo"
vstat --hang-after "$HANG_AFTER" "$SEG"
check_eq "… FUSE_MKNOD completed, no longer HANG" "0 1" \
	"$(vq get 0 FUSE_MKNOD inflight <<<"$OUT") $(vq get 0 FUSE_MKNOD completions <<<"$OUT")"
check_match "the server said what it held" "FUSE_MKNOD hangs until SIGUSR1" "$(cat "$T/server.log")"

# ---- 4. Two workers at once: util stays within 100 % -------------------------------------

if command -v fio >/dev/null; then
	timeout 60 "$IOLENS" vstat --json "$SEG" 1 4 >"$T/two.json" 2>"$T/two.err" &
	V=$!
	run fio --name=rw --directory="$MNT" --rw=randrw --bs=4k --size=4M --numjobs=2 --time_based --runtime=3 \
		--ioengine=psync --direct=0 --output=/dev/null
	check_eq "fio: two jobs reading and writing through the mount at once" 0 "$RC"
	wait "$V"
	check_eq "vstat SEGMENT 1 4 meanwhile: exit 0" 0 "$?"
	OUT=$(cat "$T/two.json")
	check_eq "… four lines" 4 "$(vq lines <<<"$OUT")"
	max=$(vq max-util <<<"$OUT")
	check "TOTAL's and every op's util <= 100 % (highest: $max)" le "$max" 100
	check "… with requests served in the intervals" ge "$(vq get 2 TOTAL completions <<<"$OUT")" 1
	check "… FUSE_WRITE among them" ge "$(vq get 2 FUSE_WRITE completions <<<"$OUT")" 1
	# The union of busy intervals holds each op's busy time, and is at most their sum: two
	# jobs feeding the server may push the sum past 100 %, never the union. (How busy the
	# server is depends on how loaded the machine is, so no fixed share is asserted.)
	# Each util is printed to 0.01, so within 0.005 of its value: the bounds allow that much
	# for every number compared.
	util=$(vq get 2 TOTAL util <<<"$OUT")
	read -r opmax opsum nops <<<"$(vq op-utils 2 <<<"$OUT")"
	check "… TOTAL util ($util %) >= the busiest op's ($opmax %)" ge "$util" "$(awk -v m="$opmax" 'BEGIN { print m - 0.0101 }')"
	check "… TOTAL util ($util %) <= the sum of the $nops ops' ($opsum %)" le "$util" \
		"$(awk -v m="$opsum" -v n="$nops" 'BEGIN { print m + 0.005 * (n + 1) + 0.0001 }')"
	check "… and > 0" awk -v u="$util" 'BEGIN { exit !(u + 0 > 0) }'
else
	skip "fio is not installed"
fi

# ---- --no-vtrace: the same server, counting nothing ---------------------------------------

mkdir -p "$T/mnt2"
"$FPT" --no-vtrace --service fpt-off -s "$SRC" "$T/mnt2" 2>"$T/server2.log" &
SERVER2=$!
if wait_mounted "$T/mnt2" "$SERVER2"; then
	check_eq "--no-vtrace -s: serves the same files" "$(cksum <"$SRC/file")" "$(cksum <"$T/mnt2/file")"
	check_eq "… and makes no segment" "" "$(ls "$VTRACE_DIR" | grep fpt-off)"
	fusermount3 -u "$T/mnt2"
	wait_pid "$SERVER2"
	check_eq "… and exits 0 when unmounted" 0 "$?"
else
	not_ok "--no-vtrace -s: mounts: $(head -c 400 "$T/server2.log")"
fi

# ---- 5. Unmounted, the server exits and its segment goes -----------------------------------

fusermount3 -u "$MNT"
check_eq "fusermount3 -u" 0 "$?"
wait_pid "$SERVER"
check_eq "the server exits 0" 0 "$?"
check "its segment is gone" test ! -e "$SEG"
check_eq "nothing left in VTRACE_DIR" "" "$(ls -A "$VTRACE_DIR")"

