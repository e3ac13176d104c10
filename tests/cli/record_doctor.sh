#!/usr/bin/env bash
# record_doctor.sh: iolens record --doctor keeps doctor's window of each interval, and doctor --from/--to judges them: a process reading with O_DIRECT and a hung libvtrace server, found as live doctor finds them, with the windows they were in; the reader not after it stopped; windows one after the other, nothing left out between them.
. "$(dirname "$0")/lib.sh"

case "$(fs_type "$T")" in
tmpfs|ramfs) skip_all "the scratch directory is on $(fs_type "$T"): no O_DIRECT" ;;
esac

S=$T/store
export VTRACE_DIR=$T/shm # the hung server's segment: this test's own
mkdir -p "$VTRACE_DIR"
READER=${BUILD:-$TOP/build}/tests/helpers/odirect_reader
# frame_kinds STORE: the kinds of its frames, in order (1 the system's, 2 doctor's), with their codecs' sizes.
frame_kinds() {
	python3 - "$1" <<'PY'
import glob, struct, sys
kinds = []
for seg in sorted(glob.glob(sys.argv[1] + "/*.seg")):
    b = open(seg, "rb").read()
    at = 32
    while at + 40 <= len(b):
        payload, = struct.unpack_from("<I", b, at + 8)
        kinds.append(str(struct.unpack_from("<H", b, at + 32)[0]))
        at += 40 + payload
print(" ".join(kinds))
PY
}
# at NS: a moment as TIME takes it, to the nanosecond (@EPOCH.FRACTION).
at() { echo "@${1:0:${#1}-9}.${1:${#1}-9}"; }
# finding RULE PID: what doctor --json (on stdin) says of RULE's finding about PID: "severity windows".
finding() {
	python3 -c '
import json, sys
for f in json.load(sys.stdin)["findings"]:
    if f["rule"] == sys.argv[1] and f["data"].get("pid") == int(sys.argv[2]):
        print(f["severity"], f["data"].get("windows"))
        break' "$@"
}

# ---- Usage ---------------------------------------------------------------------------------------
run "$IOLENS" doctor --to now
check_eq "doctor --to without --from: exit 2" 2 "$RC"
run "$IOLENS" doctor --from -1h --replay "$T/x"
check_eq "doctor --from with --replay: exit 2" 2 "$RC"
run "$IOLENS" doctor --from -1h --record-dir "$T/none"
check_eq "doctor --from of a store that is not there: exit 1" 1 "$RC"

# ---- A reader with O_DIRECT during the recording -------------------------------------------------
# The truth: the test's own reader, its pid, the file it reads; and live doctor on the same reader.
f=$T/direct.dat
head -c $((4 << 20)) /dev/urandom >"$f"
"$READER" "$f" "$T/started" &
reader=$!
on_exit "kill $reader 2>/dev/null"
wait_until test -e "$T/started"
begin=$(now_ns)
run "$IOLENS" record --doctor --dir "$S" --count 3 0.5
check_eq "record --doctor, three intervals: exit 0" 0 "$RC"
# The frames as the store holds them (kind 1 the system's, 2 doctor's), each with its stamps: in
# the order of both clocks, a window's frame stamped as it ended, before the system frame read
# then (a reader stops at the first frame past its --to).
frames=$(python3 - "$S" <<'PY'
import glob, struct, sys
for seg in sorted(glob.glob(sys.argv[1] + "/*.seg")):
    b = open(seg, "rb").read()
    at = 32
    while at + 40 <= len(b):
        payload, = struct.unpack_from("<I", b, at + 8)
        real, mono = struct.unpack_from("<QQ", b, at + 16)
        kind, = struct.unpack_from("<H", b, at + 32)
        print(kind, real, mono)
        at += 40 + payload
PY
)
check_eq "… its frames: system, then a window and a system frame each interval" "1 2 1 2 1" "$(awk '{ printf "%s%s", (NR > 1 ? " " : ""), $1 }' <<<"$frames")"
check "… in the order of their stamps, real and monotonic ($(tr '\n' ';' <<<"$frames"))" \
	awk 'NR > 1 && ($2 < real || $3 < mono) { exit 1 } { real = $2; mono = $3 }' <<<"$frames"
run "$IOLENS" doctor --json 0.5
live=$(finding odirect "$reader" <<<"$OUT")
check_match "live doctor finds the reader (the truth the recording is held to)" "^(warning|critical) None$" "$live"
kill "$reader"
wait "$reader" 2>/dev/null
after=$(now_ns)

run "$IOLENS" doctor --json --record-dir "$S" --from "$(at "$begin")" --to "$(at "$after")"
check "doctor --from/--to over the recording: a warning or worse (exit $RC)" test "$RC" -eq 3 -o "$RC" -eq 4
check_eq "… the reader found, as live, in both windows doctor kept" "${live% *} 2" "$(finding odirect "$reader" <<<"$OUT")"
run "$IOLENS" doctor --record-dir "$S" --from "$(at "$begin")"
check_match "… the text says it, with the windows it was in" \
	"process $reader \(odirect_reader\) does its I/O with O_DIRECT on $f" "$OUT"
check_match "… and when" "; in 2 of the 2 windows recorded, from [0-9:]+ to [0-9:]+$" "$OUT"

# After the reader stopped: the next windows have no such finding.
sleep_to=$(now_ns)
run "$IOLENS" record --doctor --dir "$S" --count 2 0.5
run "$IOLENS" doctor --json --record-dir "$S" --from "$(at "$sleep_to")"
check_eq "windows recorded after the reader stopped: no O_DIRECT finding about it" "" "$(finding odirect "$reader" <<<"$OUT")"
run "$IOLENS" doctor --record-dir "$S" --from "$(at "$after")" --to "$(at "$after")"
check_eq "a range with no window in it: exit 1" 1 "$RC"
check_match "… said" "no window of doctor's recorded" "$ERR"

# ---- The O_DIRECT service: open, read, close, again ----------------------------------------------
# Its file is open a few milliseconds a time, so only its opens show it: each window of the
# recorder, whose O_DIRECT watch stays attached from one to the next, must see them again (the
# truth: the reader opens its file every 100 ms, in every window).
"$READER" "$f" "$T/service-started" $((1 << 20)) 100 &
service=$!
on_exit "kill $service 2>/dev/null"
wait_until test -e "$T/service-started"
from=$(now_ns)
run "$IOLENS" record --doctor --dir "$T/service" --count 4 1
kill "$service"
wait "$service" 2>/dev/null
run "$IOLENS" doctor --json --record-dir "$T/service" --from "$(at "$from")"
check_match "the O_DIRECT service: found in each of the 3 windows recorded, by its opens" "^(warning|critical) 3$" \
	"$(finding odirect "$service" <<<"$OUT")"

# ---- A hung libvtrace server ---------------------------------------------------------------------
# vtload (a libvtrace server the test drives) begins a READ and never ends it: live doctor calls it
# hung past a second; so does doctor --from on the windows recorded while it hung.
start_vtload night READ
vtload_say "hold READ"
hung_begin=$(now_ns)
run "$IOLENS" record --doctor --dir "$T/hung" --count 4 0.5
check_eq "record --doctor beside a hung server: exit 0" 0 "$RC"
run "$IOLENS" doctor --json 0.2
live=$(python3 -c 'import json, sys
print(" ".join(sorted(f["data"]["service"] for f in json.load(sys.stdin)["findings"] if f["rule"] == "vtrace-hang")))' <<<"$OUT")
check_eq "live doctor: the server hung (the truth)" night "$live"
run "$IOLENS" doctor --json --record-dir "$T/hung" --from "$(at "$hung_begin")"
check_eq "doctor --from: the same server hung, in the windows after its READ was a second old" "night yes" \
	"$(python3 -c 'import json, sys
f = [f for f in json.load(sys.stdin)["findings"] if f["rule"] == "vtrace-hang"]
print(" ".join(x["data"]["service"] for x in f), "yes" if f and 1 <= f[0]["data"]["windows"] <= 3 else "no")' <<<"$OUT")"

# ---- A thread in D all along: stuck, sampled every second ----------------------------------------
# The truth: taskrows --vfork, a parent in D (a vfork's) through the whole recording, as /proc says
# before and after it. A recorder samples a window every 3 s while no thread is in D, and every
# second while one is: each 4 s window has it in D in all of its samples (5: 4 s apart at the ends).
"${BUILD:-$TOP/build}/tests/helpers/taskrows" --vfork 120 &
V=$!
on_exit "vfork_end $V"
wait_until 60 in_state "$V" D
run "$IOLENS" record --doctor --dir "$T/stuck" --count 3 4
check_eq "record --doctor beside a thread in D: exit 0 (${ERR:0:300})" 0 "$RC"
stuck_frames=$(frame_kinds "$T/stuck")
check_eq "… /proc says it is in D still" D "$(state_of "$V")"
vfork_end "$V"
run "$IOLENS" doctor --json --record-dir "$T/stuck" --from -1h
check_eq "… doctor --from: stuck in both windows, in D at all of 4 samples or more over 3.5 s or more (frames: $stuck_frames)" "warning 2 yes" \
	"$(python3 -c 'import json, re, sys
for f in json.load(sys.stdin)["findings"]:
    if f["rule"] == "stuck" and f["data"]["pid"] == int(sys.argv[1]):
        m = re.search(r"in all (\d+) samples over ([0-9.]+) s", f["numbers"])
        print(f["severity"], f["data"]["windows"], "yes" if m and int(m.group(1)) >= 4 and float(m.group(2)) >= 3.5
              else f["numbers"])' "$V" <<<"$OUT")"

# ---- biotop --at and cachetop --at: what a window held, by the counts the test caused ------------
# dd writes 200 requests of 64 KiB with O_DIRECT to a loop device of the test's own, and cat reads a
# file of 1024 pages already in the page cache, both inside the first 8 s window of record --doctor
# (begun once its programs are attached: the O_DIRECT watch, attached last).
if is_root && command -v losetup >/dev/null; then
	truncate -s 64M "$T/loop.img"
	loopdev=$(losetup -f --show "$T/loop.img") && on_exit "loop_release $loopdev $T/loop.img"
	head -c 4M /dev/urandom >"$T/cached"
	cat "$T/cached" >/dev/null
	head -c 1M /dev/urandom >"$T/dropped"
	sync "$T/dropped" # (dirty pages are not dropped)
	cat "$T/dropped" >/dev/null
	"$IOLENS" record --doctor --dir "$T/at" --count 3 8 2>/dev/null &
	rec=$!
	wait_while "$rec" 60 prog_attached "$rec" on_enter
	inside=$(now_ns)
	dd if=/dev/zero of="$loopdev" bs=64k count=200 oflag=direct status=none &
	ddpid=$!
	wait $ddpid
	cat "$T/cached" >/dev/null &
	catpid=$!
	wait $catpid
	# A file whose pages are only dropped in the window (evictions, no page read): no row.
	dd if="$T/dropped" iflag=nocache count=0 status=none
	# The same file read again by two processes, one after the other, alone in a cgroup of the
	# test's own (where cgroup v2 lets it make one): the truth for --cgroup, their 2 x 1024 hits summed there.
	mycg=$(sed -n 's/^0:://p' /proc/self/cgroup)
	cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	own=
	if [ -n "$mycg" ] && [ -n "$cg2" ] && mkdir "$cg2${mycg%/}/iolens-record-$$" 2>/dev/null; then
		own=${mycg%/}/iolens-record-$$
		on_exit "remove_cgroup '$cg2$own'"
		for _ in 1 2; do
			bash -c 'echo $$ >"$1/cgroup.procs" && exec cat "$2"' _ "$cg2$own" "$T/cached" >/dev/null || own=
		done
	fi
	wait $rec
	run "$IOLENS" biotop --at "$(at "$inside")" --record-dir "$T/at" --json --pid "$ddpid"
	check_eq "biotop --at: dd's requests and bytes on the loop device, as dd was told to write" \
		"${loopdev#/dev/} 200 13107200" "$(python3 -c 'import json, sys
d = json.load(sys.stdin)
print(" ".join("%s %d %d" % (p["disk"], p["requests"], p["bytes"]) for p in d["processes"] if p["disk"] == sys.argv[1]))' \
		"${loopdev#/dev/}" <<<"$OUT")"
	run "$IOLENS" cachetop --at "$(at "$inside")" --record-dir "$T/at" --json --pid "$catpid"
	check_eq "cachetop --at: cat's hits at least the file's 1024 pages, no miss (it was cached)" "yes 0" \
		"$(python3 -c 'import json, sys
p = json.load(sys.stdin)["processes"]
print("yes" if p and p[0]["hits"] >= 1024 else "no", p[0]["misses"] if p else "-")' <<<"$OUT")"
	run "$IOLENS" cachetop --at "$(at "$inside")" --record-dir "$T/at" --json --files
	check_eq "cachetop --at --files: the file cat read (its device and inode, as stat says), its hits at least its 1024 pages" \
		yes "$(python3 -c 'import json, sys
f = [f for f in json.load(sys.stdin)["files"] if f["file"] in (sys.argv[1], sys.argv[2])]
print("yes" if len(f) == 1 and f[0]["hits"] >= 1024 else f)' "$T/cached" \
		"dev $(stat -c '%Hd:%Ld inode %i' "$T/cached")" <<<"$OUT")"
	run "$IOLENS" cachetop --at "$(at "$inside")" --record-dir "$T/at" --json --files --all
	check_eq "cachetop --at --files --all: no row for the file whose pages were only dropped (fincore: none left)" \
		"0 0" "$(fincore -nb -o RES "$T/dropped" | tr -d ' ') $(python3 -c 'import json, sys
print(len([f for f in json.load(sys.stdin)["files"] if f["file"] in (sys.argv[1], sys.argv[2])]))' "$T/dropped" \
		"dev $(stat -c '%Hd:%Ld inode %i' "$T/dropped")" <<<"$OUT")"
	run "$IOLENS" biotop --at "$(at "$inside")" --record-dir "$T/at"
	check_match "biotop --at's table: dd's row, its writes (D: W)" "^$ddpid +dd +W +7 +[0-9]+ ${loopdev#/dev/} +200 " "$OUT"
	# The next window (its programs kept loaded from the first): dd and cat did nothing in it.
	next=@$(( inside / 1000000000 + 12 ))
	run "$IOLENS" biotop --at "$next" --record-dir "$T/at" --json --pid "$ddpid"
	check_eq "biotop --at in the next window: none of dd's requests again" "0 " \
		"$RC $(python3 -c 'import json, sys; print(" ".join(p["disk"] for p in json.load(sys.stdin)["processes"]))' <<<"$OUT")"
	run "$IOLENS" cachetop --at "$next" --record-dir "$T/at" --json --pid "$catpid"
	check_eq "cachetop --at in the next window: none of cat's hits again" "0 0" \
		"$RC $(python3 -c 'import json, sys; print(len(json.load(sys.stdin)["processes"]))' <<<"$OUT")"
	# Live biotop and the recorder over the same requests: one dd reading 100 requests of 64 KiB
	# and writing 100 (O_DIRECT, the loop device), in one of live's 3 s intervals and in the
	# recorder's 12 s window. Truth: dd's counts, on a row for its reads and one for its writes,
	# as live shows them; the latencies are live's (two programs timing the same requests).
	for try in 1 2 3; do
		rm -rf "$T/both"
		"$IOLENS" record --doctor --dir "$T/both" --count 2 12 2>/dev/null &
		rec=$!
		wait_while "$rec" 60 prog_attached "$rec" on_enter
		"$IOLENS" biotop --json 3 >"$T/live.json" 2>"$T/live.err" &
		top=$!
		wait_until 60 lines_at_least "$T/live.json" 1
		during=$(now_ns)
		dd if="$loopdev" of="$loopdev" bs=64k count=100 skip=300 iflag=direct oflag=direct status=none &
		both=$!
		wait $both
		wait_until 60 lines_at_least "$T/live.json" 2
		kill -INT $top
		wait $top
		wait $rec
		live_rows=$(python3 -c 'import json, sys
rows = [r for r in json.loads(open(sys.argv[1]).read().splitlines()[1])["processes"] if r["pid"] == int(sys.argv[2])]
print(" ".join("%s:%d:%d" % (r["op"], r["requests"], r["bytes"]) for r in sorted(rows, key=lambda r: r["op"])))' \
			"$T/live.json" "$both")
		[ "$live_rows" = "R:100:6553600 W:100:6553600" ] && break
		echo "# live's interval held dd's rows as '$live_rows': again (dd straddled two intervals)"
	done
	check_eq "live biotop: dd's reads and writes, a row each, as dd made them" "R:100:6553600 W:100:6553600" "$live_rows"
	run "$IOLENS" biotop --at "$(at "$during")" --record-dir "$T/both" --json --pid "$both"
	check_eq "biotop --at over the same requests: the same rows, R and W apart (exit 0)" "0 R:100:6553600 W:100:6553600" \
		"$RC $(python3 -c 'import json, sys
rows = json.load(sys.stdin)["processes"]
print(" ".join("%s:%d:%d" % (r["op"], r["requests"], r["bytes"]) for r in sorted(rows, key=lambda r: r["op"])))' <<<"$OUT")"
	# (the average is exact, a sum over the requests; a percentile or the max may fall a bucket of
	# the histogram, 25 % wide, away when a request's two timings straddle its edge)
	check_eq "… each one's average within 10 % of live's, its p50, p99 and max within 30 %" "" "$(python3 -c 'import json, sys
live = {r["op"]: r for r in json.loads(open(sys.argv[1]).read().splitlines()[1])["processes"] if r["pid"] == int(sys.argv[2])}
for r in json.load(sys.stdin)["processes"]:
    for k, within in (("avg_ns", 0.1), ("p50_ns", 0.3), ("p99_ns", 0.3), ("max_ns", 0.3)):
        a, b = r.get(k), live.get(r["op"], {}).get(k)
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or abs(a - b) > within * b:
            print(r["op"], k, a, "live", b)' "$T/live.json" "$both" <<<"$OUT")"
	# Windows that follow one another leave nothing out between them: 40 dd, each 10 requests of
	# 64 KiB with O_DIRECT, paced across half-second windows. Truth: the 400 requests they made,
	# summed over every window that holds some (each found by biotop --at, by its end).
	rm -rf "$T/tiles"
	"$IOLENS" record --doctor --dir "$T/tiles" --count 24 0.5 2>/dev/null &
	rec=$!
	wait_while "$rec" 60 prog_attached "$rec" on_enter
	first=$(now_ns)
	for i in $(seq 40); do
		dd if=/dev/zero of="$loopdev" bs=64k count=10 seek=$((i * 10)) oflag=direct status=none
		sleep 0.05 # (the pace of the writes, spread over several windows)
	done
	last=$(now_ns)
	check "… the writes ended before the recorder (its 24 windows outlast them)" kill -0 "$rec"
	wait $rec
	sum=$(python3 - "$IOLENS" "$T/tiles" "$first" "$last" "${loopdev#/dev/}" <<'PY'
import json, subprocess, sys
iolens, store, first, last, disk = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
seen, total, t = set(), 0, first
while t <= last + 10**9:
    out = subprocess.run([iolens, "biotop", "--at", "@%d.%09d" % divmod(t, 10**9), "--record-dir", store, "--json"],
                         capture_output=True, text=True).stdout
    if out:
        d = json.loads(out)
        if d["time_ns"] not in seen:
            seen.add(d["time_ns"])
            total += sum(p["requests"] for p in d["processes"] if p["comm"] == "dd" and p["disk"] == disk)
    t += 10**8
print(total, len(seen))
PY
)
	check_eq "windows one after the other: dd's 400 requests, every one in a window (${sum#* } windows)" 400 "${sum%% *}"
	if [ -n "$own" ]; then
		run "$IOLENS" cachetop --at "$(at "$inside")" --record-dir "$T/at" --json --cgroup
		check_eq "cachetop --at --cgroup: the test's cgroup by its path, its hits at least its two processes' 2 x 1024 pages" \
			"0 yes" "$RC $(python3 -c 'import json, sys
c = [c for c in json.load(sys.stdin)["cgroups"] if c["cgroup"] == sys.argv[1]]
print("yes" if len(c) == 1 and c[0]["hits"] >= 2048 else c)' "$own" <<<"$OUT")"
	else
		skip "cachetop --at --cgroup: no cgroup of the test's own here (cgroup v2 would not make one)"
	fi
	run "$IOLENS" cachetop --at 2001-01-01 --record-dir "$T/at"
	check_match "--at before the recording: the next window, said" "nothing recorded at 2001-01-01: the next window" "$ERR"
	run "$IOLENS" biotop --at now --record-dir "$T/at"
	check_eq "--at after the recording: exit 1" 1 "$RC"
	run "$IOLENS" biotop --at now --cgroup
	check_eq "biotop --at with --cgroup: exit 2" 2 "$RC"
	run "$IOLENS" cachetop --at now 1
	check_eq "cachetop --at with an interval: exit 2" 2 "$RC"
else
	skip "biotop --at and cachetop --at: need root and losetup"
fi

# ---- A file's name kept from window to window, and the name it has now -----------------------
# A file read from storage (16 MiB evicted first: all misses) in one 5 s window, renamed, evicted
# and read again in the next: each window names its files as they are then, so the second
# window's name must be the new one (stat's), not the one the first window learnt.
if is_root && can_evict; then
	head -c 16M /dev/urandom >"$T/first"
	"$IOLENS" evict "$T/first" >/dev/null
	"$IOLENS" record --doctor --dir "$T/names" --count 3 5 2>"$T/names.err" &
	rec=$!
	wait_while "$rec" 60 prog_attached "$rec" on_enter
	one=$(now_ns)
	cat "$T/first" >/dev/null
	# The next window: once the first's frames are in the store (the system's first frame, then
	# the first window's system frame and doctor's).
	frames() { "$IOLENS" record --list --json --dir "$T/names" 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["frames"])' 2>/dev/null || echo 0; }
	wait_until 60 eval '[ "$(frames)" -ge 3 ]'
	mv "$T/first" "$T/second"
	"$IOLENS" evict "$T/second" >/dev/null
	two=$(now_ns)
	cat "$T/second" >/dev/null
	wait $rec
	names_of() { "$IOLENS" cachetop --at "$(at "$1")" --record-dir "$T/names" --json --files | python3 -c 'import json, sys
print(" ".join(f["file"] for f in json.load(sys.stdin)["files"] if f["file"].startswith(sys.argv[1])))' "$T/"; }
	check_eq "a file read from storage in a window: named by its path" "$T/first" "$(names_of "$one")"
	check_eq "… renamed and read again in the next window: named by its new path" "$T/second" "$(names_of "$two")"
else
	skip "files' names from window to window: need root and a scratch directory that can be evicted"
fi

# Short processes that each write to the disk (a build's, a CI's): a recorder's table of each
# process's block I/O holds them while they live, and lets go of each once its window is kept;
# else the table fills (8192 entries of ~1 KB, read whole twice a window) and the last process's
# requests still count. The truth: the dd processes' own pids, and their requests as dd was told.
if is_root && command -v bpftool >/dev/null && [ "$(fs_type "$T")" != tmpfs ]; then
	"$IOLENS" record --doctor --dir "$T/short" 2 2>"$T/short.err" &
	rec=$!
	on_exit "kill $rec 2>/dev/null"
	wait_while "$rec" 60 prog_attached "$rec" on_enter
	# its table: the map named processes among those it holds (fdinfo's map_id)
	table=$(for id in $(sed -n 's/^map_id:[[:space:]]*//p' /proc/$rec/fdinfo/* 2>/dev/null | sort -u); do
		bpftool map show id "$id" 2>/dev/null | grep -q "name processes" && echo "$id"; done | head -1)
	dds=
	for _ in $(seq 40); do
		dd if=/dev/zero of="$T/short.dat" bs=4k count=2 oflag=direct status=none &
		dds+=" $!"
		wait $!
	done
	inside=$(now_ns)
	holds() { bpftool -j map dump id "$table" 2>/dev/null | python3 -c 'import json, sys
ids = {int(e["key"]["id"]) if isinstance(e.get("key"), dict) else int.from_bytes(bytes(int(b, 16) for b in e["key"][:8]), "little")
       for e in json.load(sys.stdin)}
print(len(ids & {int(p) for p in sys.argv[1:]}))' $dds; }
	check "the short processes' block I/O in the recorder's table as they ended ($(holds) of 40)" \
		test "$(holds)" -gt 0
	wait_until 30 eval '[ "$(holds)" = 0 ]'
	check_eq "… none of them once their window was kept" 0 "$(holds)"
	wait_until 30 eval '[ "$("$IOLENS" record --list --json --dir "$T/short" 2>/dev/null |
		python3 -c "import json, sys; print(json.load(sys.stdin)[\"frames\"])" 2>/dev/null || echo 0)" -ge 5 ]'
	kill $rec
	wait $rec 2>/dev/null
	run "$IOLENS" biotop --at "$(at "$inside")" --record-dir "$T/short" --json
	# (a row per process, disk and direction: one that also read, a block of the file's, has two)
	check_eq "… and each one's two writes in the window it ran in (biotop --at)" 40 "$(python3 -c 'import json, sys
pids = {int(p) for p in sys.argv[1:]}
print(len({p["pid"] for p in json.load(sys.stdin)["processes"]
           if p["pid"] in pids and p["op"] == "W" and p["requests"] >= 2}))' \
		$dds <<<"$OUT")"
else
	skip "short processes' block I/O in a recorder's table: needs root, bpftool and a disk"
fi

# A file deleted while a process reads it on from storage (a temporary file; a build or CI makes
# them by the thousand), beside one it keeps, on an ext4 and on an xfs of the test's own. A
# deleted file has no name to find. On the ext4 the looker opens each file by its handle: the
# deleted one is known gone, the kept one named by the kernel, no directory read; on an xfs (no
# handle asked) it looks for the deleted one once, not every window (every process's open files
# read, its directories walked, again and again). The truth: strace's record of what the
# looker children opened, and each window's names held to stat's.
unfound_fs() { # why this machine cannot, or nothing
	is_root || { echo "needs root"; return; }
	command -v strace >/dev/null || { echo "needs strace"; return; }
	command -v mkfs.xfs >/dev/null || { echo "needs mkfs.xfs (make test-deps: xfsprogs)"; return; }
	grep -qw xfs /proc/filesystems || modprobe -q xfs 2>/dev/null || { echo "this kernel has no xfs"; return; }
	truncate -s 320M "$T/unfound.xfs" && mkfs.xfs -q -f "$T/unfound.xfs" >/dev/null 2>&1 || echo "mkfs.xfs failed"
	truncate -s 32M "$T/unfound.ext4" && mkfs.ext4 -q -F "$T/unfound.ext4" >/dev/null 2>&1 || echo "mkfs.ext4 failed"
}
why=$(unfound_fs)
if [ -z "$why" ]; then
	for fs in ext4 xfs; do
		mkdir -p "$T/un.$fs"
		loop=$(loop_attach_apart "$T/unfound.$fs") || { not_ok "a loop device for the $fs"; continue; }
		on_exit "umount '$T/un.$fs' 2>/dev/null"
		on_exit "loop_release '$loop' '$T/unfound.$fs'"
		mount "$loop" "$T/un.$fs" || not_ok "mount $loop ($fs) at $T/un.$fs"
	done
	python3 -c 'import os, sys, time
fds = []
for d in sys.argv[1:]:
    for name in ("gone", "kept"):
        with open(d + "/" + name, "wb") as f:
            f.write(os.urandom(4 << 20))
    fds += [os.open(d + "/" + name, os.O_RDONLY) for name in ("gone", "kept")]
    os.unlink(d + "/gone")
with open(sys.argv[1] + "/reading", "w") as f:
    f.write(" ".join(str(os.fstat(fd).st_ino) for fd in fds[0::2]) + "\n")
while True:
    for fd in fds:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.pread(fd, 4 << 20, 0)
    time.sleep(0.1)' "$T/un.ext4" "$T/un.xfs" &
	unreader=$!
	on_exit "kill $unreader 2>/dev/null"
	wait_until test -s "$T/un.ext4/reading"
	read -r gone4 gonex <"$T/un.ext4/reading"
	"${STATFS_TRACED[@]/statfs/openat}" -o "$T/unfound.strace" \
		"$IOLENS" record --doctor --dir "$T/unfound" --count 4 1 2>"$T/unfound.err"
	check_eq "a deleted file read on: record --doctor, three windows: exit 0 ($(head -c 300 "$T/unfound.err"))" 0 $?
	recorder=$(traced_iolens "$T/unfound.strace")
	# opened PATTERN: the looker children (not the recorder) that opened a path matching PATTERN.
	opened() { awk -v main="$recorder" -v re="$1" '$1 != main && /openat\(/ && $0 ~ re { print $1 }' \
		"$T/unfound.strace" | sort -u | wc -l; }
	# (A walk of the ext4 reads its lost+found; its root is opened once, for the handles.)
	check_eq "… on the ext4, no directory of it walked by a looker" 0 "$(opened "\"$T/un.ext4/")"
	check_eq "… on the xfs, its directory read in one window of three, not each" 1 "$(opened "\"$T/un.xfs\"")"
	check_eq "… processes' open files read in one window of three (for the xfs's)" 1 \
		"$(opened '"/?proc/[0-9]+/fd"')"
	# Each window's files (cachetop --at half a second before the window's frame was stamped).
	named=
	for end in $(python3 - "$T/unfound" <<'PY'
import glob, struct, sys
for seg in sorted(glob.glob(sys.argv[1] + "/*.seg")):
    b = open(seg, "rb").read()
    at = 32
    while at + 40 <= len(b):
        payload, = struct.unpack_from("<I", b, at + 8)
        real, = struct.unpack_from("<Q", b, at + 16)
        if struct.unpack_from("<H", b, at + 32)[0] == 2:
            print(real - 500000000)
        at += 40 + payload
PY
	); do
		named+=$("$IOLENS" cachetop --at "$(at "$end")" --record-dir "$T/unfound" --json --files |
			python3 -c 'import json, sys
f = [f["file"] for f in json.load(sys.stdin)["files"]]
print("", *["yes" if n in f else "no" for n in sys.argv[1:]], end="")' \
			"$T/un.ext4/kept" "dev $(stat -c '%Hd:%Ld' "$T/un.ext4/kept") inode $gone4" \
			"$T/un.xfs/kept" "dev $(stat -c '%Hd:%Ld' "$T/un.xfs/kept") inode $gonex")
	done
	check_eq "… each window (three): the kept files by their paths, the deleted ones by device and inode" \
		" yes yes yes yes yes yes yes yes yes yes yes yes" "$named"
	kill $unreader
	wait $unreader 2>/dev/null
else
	skip "a deleted file read on: $why"
fi

echo "1..$t_count"
