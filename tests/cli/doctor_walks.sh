#!/usr/bin/env bash
# doctor_walks.sh: doctor walks every thread at a sample only when some are in D (a count of them that costs one system call says so) or a round of the processes' I/O is needed; so a thread that goes into D in the middle of the window, after samples that walked nothing, is still found stuck for as long as it was, and a process born and gone between two walks is counted under its own name, to its end (its own /proc/self/io as it ended).
. "$(dirname "$0")/lib.sh"

why=$(ebpf_expected) || skip_all "$why"
ROWS=$BUILD/tests/helpers/taskrows
[ -x "$ROWS" ] || skip_all "taskrows is not built (make check builds it)"
dq() { python3 "$TOP/tests/cli/doctor_query.py" "$@" 2>>"$T/dq.err"; }

# The count itself, held to /proc: three threads put in D (vfork parents, waiting for their
# children) are at least three in it, whatever else the machine has in D.
V=()
for i in 1 2 3; do
	"$ROWS" --vfork 60 &
	V+=($!)
done
on_exit 'vfork_end "${V[@]}"'
all_in_d() { for v in "${V[@]}"; do in_state "$v" D || return 1; done; }
wait_until 60 all_in_d
check "three vfork parents in D (/proc/PID/stat)" all_in_d
blocked=$("$ROWS" --blocked 2>"$T/blocked.err")
check "the threads in D, as doctor counts them (every CPU's runqueue): at least those three ($blocked; $(head -c 200 "$T/blocked.err"))" \
	[ "${blocked:-0}" -ge 3 ]
vfork_end "${V[@]}"
V=()

# A window long enough for anything, ended by SIGINT. Once doctor waits between its samples (past
# its first, which walked), a short process writes 4 MiB, says its write_bytes as its last act
# (the truth: its own /proc/self/io; more than 4 MiB where the filesystem's metadata pages it
# dirtied are charged to it too) and ends; then a thread goes into D and stays there for 4 s, to
# the end (a vfork parent, its child asleep): the 4 s are what is measured, not a wait.
launched=$(date +%s.%N)
"$IOLENS" doctor --no-config --json --record "$T/snap" 600 >"$T/doctor.json" 2>"$T/doctor.err" &
DOCTOR=$!
on_exit "kill $DOCTOR 2>/dev/null"
wait_until 60 waits_between_samples "$DOCTOR" || not_ok "doctor is in its window"
python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None)
libc.prctl(15, b"shortwriter", 0, 0, 0) # PR_SET_NAME
with open(sys.argv[1], "wb") as f:
    f.write(b"x" * (4 << 20)); f.flush(); os.fsync(f.fileno())
libc.mlockall(1) # MCL_CURRENT: no fault of its code reads or dirties anything after its last read
with open("/proc/self/io", "rb", buffering=0) as f:
    io = dict(line.split(b": ") for line in f.read(4096).splitlines())
sys.stdout.write("%d %d\n" % (os.getpid(), int(io[b"write_bytes"])))
sys.stdout.flush()' "$T/written" | cat >"$T/writer" # (a pipe: its last write dirties no page of its own)
read -r DD DD_WRITTEN <"$T/writer"
"$ROWS" --vfork 600 &
V=($!)
begun=$(date +%s.%N)
wait_until 60 in_state "${V[0]}" D
sleep 4
kill -INT "$DOCTOR"
wait "$DOCTOR"
rc=$?
ended=$(date +%s.%N)
check "doctor ends with its findings (exit $rc: 3 or 4, by the worst)" [ "$rc" = 3 ] || [ "$rc" = 4 ]

# The thread in D from the middle of the window on: found, for about as long as it was in it:
# at most from its start to doctor's end, at least the window watched less what passed from
# doctor's launch to the thread's start, less a quarter-second sample.
watched=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["seconds"])' <"$T/doctor.json")
in_d=$(awk -v a="$begun" -v b="$ended" 'BEGIN { printf "%.2f", b - a }')
least=$(awk -v w="$watched" -v a="$begun" -v l="$launched" 'BEGIN { printf "%.2f", w - (a - l) - 0.3 }')
seconds=$(dq get stuck seconds pid "${V[0]}" <"$T/doctor.json")
check_eq "stuck: the thread that went into D in the middle of the window, by pid" "${V[0]}" \
	"$(dq get stuck pid pid "${V[0]}" <"$T/doctor.json")"
check "… for about as long as it was in D ($seconds s: from $least to $in_d)" \
	awk -v s="$seconds" -v d="$in_d" -v l="$least" 'BEGIN { exit !(s > 0 && s <= d && s >= l) }'
read -r samples walks < <(awk '$1 == "samples" { s = $2 } $1 == "walks" { w = $2 } END { print s, w }' "$T/snap")
# (stuck means seen in D at every sample from its first to the last: each of those walked)
echo "# $samples samples, $walks of them walked every thread"

# The writer, born and gone between two samples: under its own name, its bytes to its end.
case "$(fs_type "$T")" in
tmpfs|ramfs) skip "the writer's write_bytes: the scratch directory is on $(fs_type "$T"), which accounts no write" ;;
*)
	written=$(awk -v p=$DD '$1 == "seconds" { s = $2 } $1 == "rate" && $2 == p { w = $5 } END { printf "%.0f", w * s }' "$T/snap")
	check_eq "the writer, gone between two samples: its write_bytes as it said them at its end, under its name" \
		"$DD_WRITTEN shortwriter" "$written $(awk -v p=$DD '$1 == "rate" && $2 == p { print $3 }' "$T/snap")"
	check "… at least the 4 MiB it wrote ($DD_WRITTEN)" [ "${DD_WRITTEN:-0}" -ge $((4 << 20)) ]
	;;
esac
echo "1..$t_count"
