#!/usr/bin/env bash
# doctor_direct.sh: iolens doctor finds the O_DIRECT service, that opens its file with O_DIRECT, reads 32 MiB, closes it and sleeps 1 s, in every run (eBPF sees each open); without eBPF, fdinfo at every sample finds a file opened after the window began.
. "$(dirname "$0")/lib.sh"

case "$(fs_type "$T")" in
tmpfs|ramfs) skip_all "the scratch directory is on $(fs_type "$T"): no O_DIRECT" ;;
esac
READER=${BUILD:-$TOP/build}/tests/helpers/odirect_reader
[ -x "$READER" ] || skip_all "$READER is not built (make check builds it)"

# dq QUERY ...: what doctor --json says (tests/cli/doctor_query.py lists the queries).
dq() { python3 "$TOP/tests/cli/doctor_query.py" "$@" 2>>"$T/dq.err"; }
# finding PID KEY: data[KEY] of the odirect finding of PID in $OUT ("absent" without one).
finding() { dq get odirect "$2" pid "$1" <<<"$OUT"; }

f=$T/direct.dat
make_file "$f" $((32 << 20))

# watching PID: waits until doctor PID's O_DIRECT watch is attached, a check; where it is not, the
# check says why: doctor ended first (its status and what it said), or it never attached.
watching() {
	local status
	if wait_while "$1" 60 prog_attached "$1" on_enter; then
		ok "doctor's O_DIRECT watch attached (odirect.bpf.c's on_enter)"
	elif kill -0 "$1" 2>/dev/null; then
		not_ok "doctor's O_DIRECT watch attached (odirect.bpf.c's on_enter): not after 1200 looks"
	else
		wait "$1"
		status=$?
		not_ok "doctor's O_DIRECT watch attached (odirect.bpf.c's on_enter): doctor ended first, exit $status: $(head -c 300 "$T/doctor.err")"
	fi
}

# holds PID FILE: process PID has FILE open.
holds() {
	local fd
	for fd in /proc/"$1"/fd/*; do [ "$(readlink "$fd")" = "$2" ] && return 0; done
	return 1
}

# ---- eBPF: every O_DIRECT open seen as it happens ---------------------------------------------

if why=$(ebpf_expected); then
	# The O_DIRECT service: open, read the 32 MiB whole in one read, close, sleep 1 s, again.
	"$READER" "$f" "$T/cycling" $((32 << 20)) 1000 &
	cycler=$!
	on_exit "kill $cycler 2>/dev/null"
	check "the O_DIRECT service reads $f with O_DIRECT, closes it and sleeps 1 s, in a loop" \
		wait_while "$cycler" 60 test -e "$T/cycling"
	found=0 seen="" bad=""
	# Four windows, each at another phase of the reader's cycle (1 s of sleep, then its read).
	for i in $(seq 4); do
		run "$IOLENS" doctor --json 3
		# mode, and the finding of the reader: pid, files, seen_by, read_bytes_per_s, severity
		set -- $(python3 -c 'import json, sys
doc = json.load(sys.stdin)
f = next((f for f in doc["findings"] if f["rule"] == "odirect" and f["data"]["pid"] == int(sys.argv[1])), None)
print(doc["odirect_mode"], *(["absent"] * 5 if f is None else
      [f["data"]["pid"], " ".join(f["data"]["files"]) or "-", f["data"]["seen_by"], f["data"]["read_bytes_per_s"], f["severity"]]))' "$cycler" <<<"$OUT")
		[ "$1" = ebpf ] || bad+="run $i: O_DIRECT looked for with $1 ($(head -c 300 <<<"$ERR")); "
		if [ "$2 $3" = "$cycler $f" ]; then
			found=$((found + 1))
			seen+="$4 "
			# What it did in the window, as /proc/PID/io counts: 32 MiB a second.
			awk -v r="$5" 'BEGIN { exit !(r + 0 > 1048576) }' || bad+="run $i: read $5 B/s; "
			[ "$6" = warning ] || bad+="run $i: $6; "
		else # what it found instead, in a line (the log keeps the end of stderr)
			echo "# run $i: the service $cycler ($f): $*; O_DIRECT findings: $(python3 -c 'import json, sys
print("; ".join("%s %s %s" % (f["data"]["pid"], f["data"].get("seen_by"), " ".join(f["data"]["files"]))
                for f in json.load(sys.stdin)["findings"] if f["rule"] == "odirect"))' <<<"$OUT" 2>&1 | head -c 1500)" >&2
		fi
	done
	check_eq "the O_DIRECT service found, by its pid and its file, in every run of doctor --json 3 (seen by: $seen)" \
		"4/4" "$found/4"
	check_eq "… with eBPF each time, a warning, reading over 1 MiB/s from storage (32 MiB a second)" "" "$bad"
	run "$IOLENS" doctor --json 3
	check_more "the O_DIRECT service, alive" "$OUT"
	check_eq "… seen by eBPF when its file was closed as the window began, or by fdinfo: $(finding "$cycler" seen_by)" ok \
		"$(case $(finding "$cycler" seen_by) in ebpf|fdinfo) echo ok ;; *) echo "$(finding "$cycler" seen_by)" ;; esac)"
	if [ "$(finding "$cycler" seen_by)" = ebpf ]; then
		check_eq "… the call that gave it O_DIRECT" openat "$(finding "$cycler" call)"
		check "… its descriptor ($(finding "$cycler" fd)) and how many opens eBPF saw ($(finding "$cycler" opens))" \
			test "$(finding "$cycler" fd)" -ge 0 -a "$(finding "$cycler" opens)" -ge 1
		check_match "… said in numbers" "openat with O_DIRECT \(0[0-7]+\) gave it fd [0-9]+ [0-9.]+ s into the window" \
			"$(finding "$cycler" numbers)"
	else
		skip "… the call, its descriptor and the opens: fdinfo saw it first this time"
		skip "…"
		skip "…"
	fi
	check_eq "… the page cache's pages of its file counted" "$(pages_of "$f")" "$(finding "$cycler" file_pages)"
	kill "$cycler"
	wait "$cycler" 2>/dev/null

	# A process that reads with O_DIRECT and ends, all within the window: dd, once eBPF is attached.
	# The window is ended by SIGTERM once dd has (doctor reports the time it watched; 300 s would end
	# it anyway): a fixed one of 3 s ended before the watch was seen attached under qemu without KVM.
	"$IOLENS" doctor --json 300 >"$T/doctor.out" 2>"$T/doctor.err" &
	doctor=$!
	on_exit "kill $doctor 2>/dev/null"
	watching "$doctor"
	# (Its pid, and the bytes its block reads made as the kernel accounted them to it: getrusage's
	# ru_inblock, which counts its start-up's page faults too when another test evicted its libraries.)
	read -r dd inblock < <(python3 -c 'import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:])
print(p.pid, os.wait4(p.pid, 0)[2].ru_inblock * 512)' dd if="$f" of=/dev/null bs=1M iflag=direct status=none)
	check "dd read $f with O_DIRECT and ended, while doctor watched" kill -TERM "$doctor"
	wait "$doctor"
	OUT=$(cat "$T/doctor.out")
	check_eq "a process gone by the end is still reported: dd, by its pid" "$dd dd" "$(finding "$dd" pid) $(finding "$dd" comm)"
	check_eq "… its file, as it passed it" "$f" "$(finding "$dd" files)"
	check_eq "… said to have ended" True "$(finding "$dd" ended)"
	check_match "… with its flags (O_DIRECT set)" "^[0-9]+$" "$(finding "$dd" flags)"
	check "… O_DIRECT among them" test $(( $(finding "$dd" flags) & 040000 )) -ne 0
	if [ "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["bio_mode"])' <<<"$OUT")" = ebpf ]; then
		got=$(( $(finding "$dd" read_bytes) + $(finding "$dd" read_bytes_unended) ))
		check_eq "… its reads as eBPF counted its block requests (those seen ending and not): the bytes the kernel accounted to dd ($inblock; 32 MiB asked)" \
			"ebpf $inblock" "$(finding "$dd" rates_from) $got"
		check "… at least the $((32 << 20)) bytes dd was told to read" test "$got" -ge $((32 << 20))
		check "… in $(finding "$dd" read_requests) read requests, at least one" test "$(finding "$dd" read_requests)" -ge 1
		check_eq "… its rate over the window ($(finding "$dd" rate_seconds) s), not over the few ms dd lived" ok \
			"$(python3 -c 'import sys; r, s, b = map(float, sys.argv[1:]); print("ok" if abs(r * s - b) <= r * 0.0005 + b * 1e-4 else r)' \
				"$(finding "$dd" read_bytes_per_s)" "$(finding "$dd" rate_seconds)" "$(finding "$dd" read_bytes)")"
	else
		skip "… its block requests counted by eBPF: block requests per process not counted here"
		skip "…"
		skip "…"
	fi

	# A reader that is a new process each time (a script's dd every 0.3 s), each living a few ms,
	# started once doctor's watch is attached; the window ended by SIGTERM once four have started
	# (three have ended): every one but the last is reported with all it read, its rate over the
	# window, a warning when that is 1 MiB/s or more.
	small=$T/small.dat
	make_file "$small" $((4 << 20))
	: >"$T/dd.pids"
	"$IOLENS" doctor --json 300 >"$T/doctor.out" 2>"$T/doctor.err" &
	doctor=$!
	on_exit "kill $doctor 2>/dev/null"
	watching "$doctor"
	(while [ ! -e "$T/dd.stop" ]; do
		sh -c 'echo $$ >>"$1"; exec dd if="$2" of=/dev/null bs=256k iflag=direct status=none' sh "$T/dd.pids" "$small"
		sleep 0.3
	done) &
	looper=$!
	on_exit "touch $T/dd.stop; wait $looper 2>/dev/null"
	# (Five pids written: the first four have ended, one after the other; the fifth may not have
	# opened its file yet when the window ends.)
	wait_while "$doctor" 120 lines_at_least "$T/dd.pids" 5
	check "five dd processes started while doctor watched" kill -TERM "$doctor"
	wait "$doctor"
	touch "$T/dd.stop"
	wait "$looper"
	OUT=$(cat "$T/doctor.out")
	check_more "dd processes, ended" "$OUT"
	set -- $(python3 -c 'import json, sys
pids = {int(x) for x in open(sys.argv[1]).read().split()}
doc = json.load(sys.stdin)
whole = [f for f in doc["findings"] if f["rule"] == "odirect" and f["data"]["pid"] in pids and f["data"]["ended"]]
# (the last one opened may have been reading still when the window ended, and ended a moment later)
whole = sorted(whole, key=lambda f: f["data"]["first_seen_seconds"])[:-1]
def expected(f):
    d = f["data"]
    return "warning" if d.get("rate_seconds") and (4 << 20) / d["rate_seconds"] >= (1 << 20) else "info"
# read_bytes and those of its requests no eBPF program saw end (the kernel ran none at their completion)
def read(d):
    return d["read_bytes"] + (d.get("read_bytes_unended") or 0) if d.get("read_bytes") is not None else None
print(len(whole), " ".join("%d:%s:%s:%s:%s" % (f["data"]["pid"], f["severity"], expected(f), read(f["data"]),
      f["data"].get("rates_from")) for f in whole) or "-")' "$T/dd.pids" <<<"$OUT")
	n=$1
	shift
	check "dd processes seen whole in the window, the last aside: $n of the $(lines_of "$T/dd.pids") the test started" test "$n" -ge 3
	if [ "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["bio_mode"])' <<<"$OUT")" = ebpf ]; then
		# (Each also reads what its start-up faults in when another test evicted dd's pages from
		# the cache: a few pages at most, charged to it as the kernel charges them. Its requests
		# whose completion the kernel ran no eBPF program for, 8 of 16 once on a busy machine, are
		# said apart, as not seen ending: counted with the rest.)
		check_eq "… each with the $((4 << 20)) bytes it read (and at most 64 KiB of its start-up), by eBPF (those seen ending and not), a warning when 4 MiB over the window is 1 MiB/s ($*)" "" \
			"$(for x in "$@"; do IFS=: read -r _ sev want bytes from <<<"$x"
				[ "$sev" = "$want" ] && [ "$from" = ebpf ] && [ "$bytes" -ge $((4 << 20)) ] && [ "$bytes" -le $(((4 << 20) + (64 << 10))) ] || echo "$x"; done)"
	else
		skip "… each with the bytes it read: block requests per process not counted here"
	fi

	# The other ways to O_DIRECT: fcntl(F_SETFL) on a file opened without it, openat2 (its flags
	# in struct open_how), and openat with a path relative to the working directory.
	mkdir "$T/calls"
	for x in a b c; do make_file "$T/calls/$x.dat" $((1 << 20)); done
	"$IOLENS" doctor --json 300 >"$T/doctor.out" 2>"$T/doctor.err" &
	doctor=$!
	on_exit "kill $doctor 2>/dev/null"
	watching "$doctor"
	python3 -c 'import ctypes, fcntl, os, struct, sys
os.chdir(sys.argv[1])
a = os.open("a.dat", os.O_RDONLY)
fcntl.fcntl(a, fcntl.F_SETFL, os.O_DIRECT)
how = struct.pack("QQQ", os.O_RDONLY | os.O_DIRECT, 0, 0)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
b = libc.syscall(437, -100, os.path.join(sys.argv[1], "b.dat").encode(), how, len(how))  # openat2
if b < 0:
    sys.exit("openat2: " + os.strerror(ctypes.get_errno()))
c = os.open("c.dat", os.O_RDONLY | os.O_DIRECT)
for fd in (a, b, c):
    os.pread(fd, 0, 0)
    os.close(fd)' "$T/calls" 2>"$T/calls.err" &
	calls=$!
	wait "$calls"
	check_eq "fcntl(F_SETFL, O_DIRECT), openat2 and a relative openat, in a process that ended ($(cat "$T/calls.err"))" 0 $?
	check "… while doctor watched" kill -TERM "$doctor"
	wait "$doctor"
	OUT=$(cat "$T/doctor.out")
	check_eq "… all three O_DIRECT opens seen, each of a file of its own" 3 "$(finding "$calls" opens)"
	check_more "fcntl, openat2, a relative openat, ended" "$OUT"
	check_eq "… the first by fcntl" fcntl "$(finding "$calls" call)"
	files=$(python3 -c 'import json, sys
f = next(f for f in json.load(sys.stdin)["findings"] if f["rule"] == "odirect" and f["data"]["pid"] == int(sys.argv[1]))
print("\n".join(f["data"]["files"]))' "$calls" <<<"$OUT")
	# Named by its open descriptor when doctor looked in time, else by what is known: for fcntl, the
	# file's name and inode; for a relative path, the path joined to its working directory while it lived.
	check_match "… fcntl's file named ($(grep 'a\.dat' <<<"$files"))" "^($T/calls/a\.dat|a\.dat \(inode $(stat -c %i "$T/calls/a.dat") on [0-9]+:[0-9]+\))\$" "$files"
	check_match "… openat2's by its path" "^$T/calls/b\.dat\$" "$files"
	check_match "… the relative path's ($(grep 'c\.dat' <<<"$files"))" "^($T/calls/)?c\.dat\$" "$files"

	# io_uring's opens (IORING_OP_OPENAT): no open system call at all. tests/helpers/uring_open opens
	# two files O_DIRECT through io_uring, reads and closes them, and waits for its standard input
	# to close; strace says which open calls it made.
	URING=${BUILD:-$TOP/build}/tests/helpers/uring_open
	if [ ! -x "$URING" ]; then
		skip "io_uring's opens: $URING is not built (make check builds it)"
	elif [ "$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')" -lt 6000 ]; then
		skip "io_uring's opens: io_uring_complete passes the request from 5.18 (tried from 6.1), not on $(uname -r)"
	else
		mkdir "$T/uring"
		for x in u1 u2; do make_file "$T/uring/$x.dat" $((1 << 20)); done
		"$IOLENS" doctor --json 300 >"$T/doctor.out" 2>"$T/doctor.err" &
		doctor=$!
		on_exit "kill $doctor 2>/dev/null"
		watching "$doctor"
		# on_enter is attached first, the io_uring program last: a loaded machine can run the
		# reader between the two.
		check "… and its io_uring program (odirect.bpf.c's on_uring_complete)" \
			wait_while "$doctor" 60 prog_attached "$doctor" on_uring_complete
		mkfifo "$T/uring/hold"
		(cd "$T/uring" && exec strace -f -qq -e trace=open,openat,openat2 -o "$T/uring/strace" \
			"$URING" "$T/uring/done" u1.dat "$T/uring/u2.dat" <"$T/uring/hold") &
		uring=$!
		exec {hold}>"$T/uring/hold"
		if wait_while "$uring" 60 test -e "$T/uring/done"; then
			upid=$(children_of "$uring" | tail -1) # strace's child
			ok "uring_open opened both files O_DIRECT through io_uring and read them"
		else
			upid=
			not_ok "uring_open opened both files O_DIRECT through io_uring and read them: $(head -c 300 "$T/uring/strace")"
		fi
		check_eq "… with no open system call asking O_DIRECT (strace)" "" \
			"$(grep -E 'O_DIRECT' "$T/uring/strace" | grep -v -- '---' | head -3)"
		check "… while doctor watched" kill -TERM "$doctor"
		wait "$doctor"
		OUT=$(cat "$T/doctor.out")
		exec {hold}>&-
		wait "$uring"
		check_eq "… both opens seen, by its pid, by io_uring" "${upid:-?} 2 io_uring" \
			"$(finding "${upid:-0}" pid) $(finding "${upid:-0}" opens) $(finding "${upid:-0}" call)"
		files=$(python3 -c 'import json, sys
f = next((f for f in json.load(sys.stdin)["findings"] if f["rule"] == "odirect" and f["data"]["pid"] == int(sys.argv[1])), None)
print("\n".join(f["data"]["files"]) if f else "")' "${upid:-0}" <<<"$OUT")
		check_match "… the files named: by path while open, else by name and inode ($(tr '\n' ' ' <<<"$files"))" \
			"^($T/uring/u1\.dat|u1\.dat \(inode $(stat -c %i "$T/uring/u1.dat") on [0-9]+:[0-9]+\))\$" "$files"
		check_match "… said to be io_uring's, at io_uring_complete" "io_uring with O_DIRECT .*\(eBPF, io_uring_complete\)" \
			"$(finding "${upid:-0}" numbers)"
	fi
else
	skip "the O_DIRECT service with eBPF, a process that ends in the window, fcntl and openat2: $why"
fi

# ---- Without eBPF (not root): fdinfo at every sample ------------------------------------------

if is_root && command -v setpriv >/dev/null; then
	# The reader and doctor both as nobody, who sees only its own processes' fdinfo.
	chmod 755 "$T"
	chmod 644 "$f"
	mkdir -m 777 "$T/nobody"
	# (a window ended by SIGTERM once the reader has been seen reading: a fixed one of 5 s ended
	# before the reader had its file open under qemu without KVM)
	"${AS_NOBODY[@]}" "$IOLENS" doctor -v --json 300 >"$T/nobody.out" 2>"$T/nobody.err" &
	doctor=$!
	check "doctor as nobody says it looks for O_DIRECT in fdinfo at every sample, and why" \
		wait_while "$doctor" 60 grep -q "O_DIRECT files looked for in /proc/PID/fdinfo at each sample" "$T/nobody.err"
	check_match "… the reason in one line (-v adds the detail)" \
		"^iolens doctor: no eBPF \(needs root or CAP_BPF\+CAP_PERFMON\): estimating from /proc$" "$(cat "$T/nobody.err")"
	# Opened after doctor began, and kept open: found by a later sample, not by a look before the window.
	"${AS_NOBODY[@]}" "$READER" "$f" "$T/nobody/holding" &
	holder=$!
	on_exit "kill $holder 2>/dev/null"
	check "nobody's reader has $f open O_DIRECT" wait_while "$holder" 60 holds "$holder" "$f"
	check "… and keeps it open, reading it over and over" wait_while "$holder" 60 test -e "$T/nobody/holding"
	sampled() { [ "$(($(date +%s%N) - opened_ns))" -ge 2000000000 ]; }
	opened_ns=$(date +%s%N)
	wait_until sampled # (a sample every 0.25 s, less often on a slow machine: several after the open)
	check "… while doctor still watches" kill -TERM "$doctor"
	wait "$doctor"
	OUT=$(cat "$T/nobody.out")
	check_eq "without eBPF: odirect_mode fdinfo" fdinfo "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["odirect_mode"])' <<<"$OUT")"
	check_eq "… the reader found by its pid, with its file" "$holder $f" "$(finding "$holder" pid) $(finding "$holder" files)"
	check_eq "… seen by fdinfo ($(finding "$holder" first_seen_seconds) s into the window)" fdinfo "$(finding "$holder" seen_by)"
	check_eq "… no call, no count of opens (eBPF's)" "None None" "$(finding "$holder" call) $(finding "$holder" opens)"
	fd=$(finding "$holder" fd)
	check_match "… quoting its fdinfo flags line" "fdinfo/$fd says \"flags: $(awk '/^flags:/ { print $2 }' /proc/$holder/fdinfo/$fd)\"" \
		"$(finding "$holder" numbers)"
	kill "$holder"
	wait "$holder" 2>/dev/null
else
	skip "without eBPF: needs root to run doctor and the reader as nobody (setpriv)"
fi

echo "1..$t_count"
