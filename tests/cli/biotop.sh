#!/usr/bin/env bash
# biotop.sh: iolens biotop by eBPF on a loop device, with each way this kernel lets it see the submitters (block_io_start; block_getrq, the only one before Linux 6.5) side by side on the same I/O: fio's N O_DIRECT reads counted as N requests (but for 0.5 % the tracepoints may miss) and 4 KiB each on its row (a process that ended before the sample), their p50, p99 and max held to an independent tracer's (bpftrace on the same tracepoints, lib.sh) of the same requests; one process on two disks: a row on each, with its own count, size and latencies (stat --top-bio sums them); requests that wait in a scheduler timed from their start, not their issue; two readers in two new cgroups told apart by -C, each with the bytes it read, and one process renamed and moved between them, its row named by its last request and each cgroup charged its reads there; without eBPF (nobody) a clear refusal, exit 1.
. "$(dirname "$0")/lib.sh"

# ---- Bad usage ---------------------------------------------------------------------------------------
run "$IOLENS" biotop --sort nope
check_eq "--sort nope: exit 2" 2 "$RC"
check_match "… says what sorts there are" "--sort: 'nope' is not pid, comm, io, bytes, avg, p50, p99 or max" "$ERR"
run "$IOLENS" biotop -C -p 1
check_eq "-C with -p: exit 2" 2 "$RC"

# ---- A kernel older than the block programs: refused, with the reason ------------------------------
if bio_too_old; then
	run "$IOLENS" biotop --json 0.1 1
	check_eq "a kernel without BPF's atomics (Linux 5.12): exit 1" 1 "$RC"
	check_match "… says why" "^iolens biotop: block I/O per process needs eBPF: this kernel .*$BIO_TOO_OLD_SAYS" "$ERR"
	echo "1..$t_count"
	exit 0
fi

# ---- Without eBPF: nobody is refused, with the reason ----------------------------------------------
if is_root && command -v setpriv >/dev/null; then
	run "${AS_NOBODY[@]}" "$IOLENS" biotop --json 0.1 1
	check_eq "as nobody: exit 1" 1 "$RC"
	check_match "… says that block I/O per process needs eBPF, and why not" \
		"^iolens biotop: block I/O per process needs eBPF: needs root or CAP_BPF\+CAP_PERFMON$" "$ERR"
	check_eq "… and prints nothing" "" "$OUT"
	run "${AS_NOBODY[@]}" "$IOLENS" biotop -C 0.1 1
	check_match "-C as nobody: block I/O per cgroup, the same reason" "^iolens biotop: block I/O per cgroup needs eBPF: needs root or CAP_BPF\+CAP_PERFMON$" "$ERR"
else
	skip "without eBPF: needs root to run it as nobody (setpriv)"
fi

why=$(ebpf_expected) || { skip "biotop by eBPF: $why"; echo "1..$t_count"; exit 0; }
command -v fio >/dev/null && command -v losetup >/dev/null || { skip "biotop by eBPF: needs fio and losetup"; echo "1..$t_count"; exit 0; }

# A loop device on a file of the disk under $T, reading it with direct I/O where it can: its
# requests take tens of microseconds, not a copy from the page cache.
make_file "$T/bio.img" $((64 << 20))
sync "$T/bio.img"
loopdev=$(losetup -f --show "$T/bio.img" 2>"$T/losetup.err") || { skip "losetup: $(head -1 "$T/losetup.err")"; echo "1..$t_count"; exit 0; }
on_exit "loop_release $loopdev $T/bio.img"
losetup --direct-io=on "$loopdev" 2>/dev/null || echo "# $loopdev reads its file through the page cache"
disk=${loopdev#/dev/} dev=$(dev_of "$loopdev")
command -v udevadm >/dev/null && udevadm settle 2>/dev/null

# rows FILE COMM DISK: the requests and bytes of the rows of COMM on DISK (reads), over every line
# after the first; and how many lines had such rows, and their pids.
rows() { python3 -c 'import json, os, sys
requests = nbytes = lines = 0
pids = set()
for l in open(sys.argv[1]).read().splitlines():
    d = json.loads(l)
    if d["time_ns"] <= int(os.environ.get("ROWS_SINCE", "0")):
        continue
    mine = [r for r in d["processes"] if r["comm"] == sys.argv[2] and r["disk"] == sys.argv[3] and r["op"] == "R"]
    lines += bool(mine)
    for r in mine:
        requests += r["requests"]; nbytes += r["bytes"]; pids.add(r["pid"])
print(requests, nbytes, lines, ",".join(map(str, sorted(pids))))' "$@"; }
# rows_since FILE NS COMM DISK: rows' sums over the lines sampled after NS (Unix time, ns).
rows_since() { ROWS_SINCE=$2 rows "$1" "${@:3}"; }
# row_key FILE COMM DISK KEY: KEY of the one row of COMM on DISK.
row_key() { python3 -c 'import json, sys
for l in open(sys.argv[1]).read().splitlines():
    for r in json.loads(l)["processes"]:
        if r["comm"] == sys.argv[2] and r["disk"] == sys.argv[3] and r["op"] == "R":
            print(r[sys.argv[4]])' "$@"; }
# stop_sampled PIDS FILE...: once each FILE has a line sampled from now on (all that ended before is
# in its lines), the processes PIDS get SIGINT and are waited for; the status is the first non-zero one's.
stop_sampled() {
	local pids=$1 since file pid rc=0
	shift
	since=$(now_ns)
	for file in "$@"; do wait_until sampled_since "$file" "$since"; done
	kill -INT $pids
	for pid in $pids; do wait "$pid" || [ "$rc" != 0 ] || rc=$?; done
	return "$rc"
}
# Each way iolens sees the submitters here (lib.sh): biotop runs once with each, side by side, on
# the same I/O, each held to the same truths; a file of each is NAME.MECHANISM.
MECHS=($(bio_mechanisms))
# start_tops FILE ARGS...: a biotop with each mechanism, writing FILE.MECH.json (stderr .err);
# their pids in $tops, once each has printed its first line (the counting started).
start_tops() {
	local file=$1 m
	shift
	tops=""
	for m in "${MECHS[@]}"; do
		IOLENS_BIO_MECHANISM=$m "$IOLENS" biotop "$@" >"$file.$m.json" 2>"$file.$m.err" &
		tops+=" $!"
	done
	for m in "${MECHS[@]}"; do wait_until lines_at_least "$file.$m.json" 1; done
}
# files_of FILE: FILE.MECH.json of each mechanism.
files_of() { local m; for m in "${MECHS[@]}"; do echo "$1.$m.json"; done; }
declare -A requests nbytes lines pids

# The latencies' truth: the block tracer (lib.sh), bpftrace on the same tracepoints, timing the
# same requests. Not fio's completion latency (clat): it holds fio's system call and its wake-up
# after the completion, tens of us more (its p50 101 us, the requests' 75, with a CPU hog on each
# core), ten times more on a machine shared with busy virtual machines (774 us against 74).
# latency_checks M FILE COMM DISK DEV: the p50, p99 and max of the row of COMM on DISK (its only row,
# of all its requests) held to the tracer's spans of its process's requests there, start to
# completion, as block_latency.py bounds them: p50 and p99 interpolated in the bucket (4 per power of two)
# of the values they may be, max exact (but for a stall between the two programs' ends).
latency_checks() {
	local m=$1 file=$2 comm=$3 disk=$4 dev=$5 pid count p50 p99 max
	read -r pid count p50 p99 max < <(echo $(row_key "$file" "$comm" "$disk" pid) $(row_key "$file" "$comm" "$disk" requests) \
		$(row_key "$file" "$comm" "$disk" p50_ns) $(row_key "$file" "$comm" "$disk" p99_ns) $(row_key "$file" "$comm" "$disk" max_ns))
	check_latency "[$m] $disk's p50, held to the block tracer's" "$p50" \
		--dev "$dev" --pid "$pid" --count "$count" --scale biotop --at-most "$max"
	check_latency "[$m] … p99" "$p99" --dev "$dev" --pid "$pid" --count "$count" --quantile 0.99 --scale biotop --at-most "$max"
	check_latency "[$m] … max" "$max" --dev "$dev" --pid "$pid" --count "$count" --quantile 1 --scale exact
}

# ---- fio's N reads of 4 KiB: N requests, N x 4 KiB, on the loop device; their latencies ----------
# One line must hold the whole run for its p50 to be of all of them: longer intervals until it does.
N=2000
# fio_line_time FILE DISK: when the line holding fio's row on DISK was sampled (the last such).
fio_line_time() {
	python3 -c 'import json, sys
t = ""
for l in open(sys.argv[1]).read().splitlines():
    d = json.loads(l)
    if any(r["comm"] == "fio" and r["disk"] == sys.argv[2] for r in d["processes"]):
        t = d["time_ns"]
print(t)' "$1" "$2"
}
interval=2
for try in 1 2 3 4 5; do
	block_tracer_start bio "$dev"
	start_tops "$T/bio" --json $interval
	d0=$(diskstats_sum "$disk" 4)
	began=$(now_ns)
	fio --name=biotop --filename="$loopdev" --readonly --rw=randread --bs=4k --direct=1 --ioengine=psync \
		--number_ios=$N --size=64M --randrepeat=0 --output-format=json >"$T/fio.json" 2>"$T/fio.err"
	fio_rc=$?
	ended=${EPOCHREALTIME/./}000 # (no fork: on a loaded machine a date(1) may come seconds late)
	d1=$(diskstats_sum "$disk" 4)
	# Its line: one sampled after fio ended (the job process is gone: eBPF kept its counts).
	stop_sampled "$tops" $(files_of "$T/bio")
	top_rc=$?
	block_tracer_stop
	whole=yes
	for m in "${MECHS[@]}"; do
		read -r "requests[$m]" "nbytes[$m]" "lines[$m]" "pids[$m]" < <(rows "$T/bio.$m.json" fio "$disk")
		[ "${lines[$m]}" = 1 ] && all_but_missed $N "${requests[$m]}" || whole=""
		# (A line sampled between fio's last completion and its exit holds them all, but shows
		# nothing of counts kept once it is gone: again.)
		[ "$(fio_line_time "$T/bio.$m.json" "$disk")" -gt "$ended" ] 2>/dev/null || whole=""
	done
	[ "$fio_rc" = 0 ] && [ -n "$whole" ] && break
	# A burst of completions the kernel ran no eBPF program for (lib.sh, all_but_missed) is rare:
	# measured again; a program that forgets requests is short every time.
	echo "# fio's requests of $N on lines with ${interval}s intervals: $(for m in "${MECHS[@]}"; do echo -n "$m ${requests[$m]} on ${lines[$m]}; "; done)again, longer"
	interval=$(next_interval $interval $((ended - began)))
done
check_eq "fio ran ($(head -c 300 "$T/fio.err"))" 0 "$fio_rc"
READ_NS=$(((ended - began) / N)) # (fio's time per read here, to start the sections below from)
check_eq "biotop ends 0 on SIGINT" 0 "$top_rc"
check_eq "/proc/diskstats: $disk completed fio's $N reads while it ran, nothing else" $N $((d1 - d0))
for m in "${MECHS[@]}"; do
	f=$T/bio.$m.json
	check "[$m] no word on stderr but what it says once of this kernel ($(head -c 300 "$T/bio.$m.err"))" bio_quiet "$m" "$T/bio.$m.err"
	check_match "[$m] its mechanism on each line" '"mechanism":"'"$m"'"' "$(tail -n 1 "$f")"
	check "[$m] fio's row on $disk: its $N reads, as requests (${requests[$m]}), but for at most 0.5 % missed" \
		all_but_missed $N "${requests[$m]}"
	check_eq "[$m] … and 4 KiB each, as bytes" $((requests[$m] * 4096)) "${nbytes[$m]}"
	check_eq "[$m] … in one line" 1 "${lines[$m]}"
	printed=$(fio_line_time "$f" "$disk")
	check "[$m] … a line sampled after its process ended ($printed > $ended): counts of a process gone are kept" test "$printed" -gt "$ended"
	for pid in ${pids[$m]//,/ }; do
		check "[$m] … its pid $pid is no process any more" test ! -e /proc/$pid
	done
	latency_checks "$m" "$f" fio "$disk" "$dev"
	read -r avg p50 p99 max < <(echo $(row_key "$f" fio "$disk" avg_ns) $(row_key "$f" fio "$disk" p50_ns) \
		$(row_key "$f" fio "$disk" p99_ns) $(row_key "$f" fio "$disk" max_ns))
	check "[$m] p50 <= p99 <= max, avg <= max ($p50 $p99 $max, avg $avg)" \
		python3 -c 'import sys; p50, p99, mx, avg = map(int, sys.argv[1:]); sys.exit(not (0 < p50 <= p99 <= mx and 0 < avg <= mx))' \
		"$p50" "$p99" "$max" "$avg"
	check_eq "[$m] its disk by number: the loop device's" "$dev" "$(row_key "$f" fio "$disk" major):$(row_key "$f" fio "$disk" minor)"
done
run env IOLENS_BIO_MECHANISM=nope "$IOLENS" biotop --json 0.1 1
check_eq "IOLENS_BIO_MECHANISM=nope: exit 1" 1 "$RC"
check_match "… says which there are" "^iolens biotop: block I/O per process needs eBPF: IOLENS_BIO_MECHANISM=nope: not block_io_start or block_getrq" "$ERR"
if [[ " ${MECHS[*]} " != *" block_io_start "* ]]; then
	run env IOLENS_BIO_MECHANISM=block_io_start "$IOLENS" biotop --json 0.1 1
	check_match "IOLENS_BIO_MECHANISM=block_io_start on $(uname -r): refused, the tracepoint missing said" \
		"IOLENS_BIO_MECHANISM=block_io_start: this kernel \($(uname -r)\) has no tracepoint block_io_start" "$ERR"
fi

# The table and CSV: the same row's figures.
run "$IOLENS" biotop --csv 0.2 1
check_match "--csv: a header of JSON's keys" "^time_ns,interval_ns,unattributed_bytes,unseen_completions,mechanism,pid,comm,cgroup_id,container,container_id,container_name,pod,namespace,container_uid,op,major,minor,disk,requests,bytes,avg_ns,p50_ns,p99_ns,max_ns$" "$(head -1 <<<"$OUT")"

# The full screen on a terminal: keys typed once the screen shows what they act on. What it
# showed is played on an emulator of the terminal (term_lines.py): its lines as a person saw them.
TERM_LINES=$TOP/tests/cli/term_lines.py
if command -v script >/dev/null; then
	(wait_until grep -q "Sort: bytes" "$T/screen"; printf '>'; wait_until grep -q "Sort: avg" "$T/screen"; printf 'q') |
		TERM=xterm script -qfec "stty rows 24 cols 130; $IOLENS biotop 0.3" /dev/null >"$T/screen" 2>&1
	check_eq "on a terminal: full screen, q quits with exit 0" 0 "$?"
	check_match "… > sorts by the next column (avg)" "Sort: avg" "$(cat "$T/screen")"
	check_match "… 130 columns: every column, under the titles" \
		"^PID +COMM +D +MAJ +MIN DISK +I/O +BYTES +AVG_us +P50_us +P99_us +MAX_us +CONTAINER$" \
		"$(python3 "$TERM_LINES" "$T/screen" 24 130)"

	# 80 columns, and a reader's 8 O_DIRECT reads of 4 KiB of the loop device, made in one burst
	# just after a screen was drawn (in one interval of 1 s): its row has its 8 requests, 32768
	# bytes and all four latencies; what was left out for room is said, not dropped silently.
	# screen_row FILE PID: the screen FILE showed PID's row with its figures (and the dd it ran).
	# (A figure longer than its column, 289666.83 us in 8 characters on a loaded machine, loses decimals.)
	screen_row() { python3 "$TERM_LINES" "$1" 24 80 | grep -E "^$2 +dd +R +$disk +8 +32768( +[0-9]+(\.[0-9]{1,2})?){4}$" >/dev/null; }
	: >"$T/pid80"
	(wait_until grep -q "Order: descending" "$T/screen80"
	 dd if="$loopdev" of=/dev/null bs=4k count=8 skip=$((RANDOM % 16000)) iflag=direct status=none &
	 echo $! >"$T/pid80"
	 wait
	 wait_until screen_row "$T/screen80" "$(cat "$T/pid80")"
	 printf q) |
		TERM=xterm script -qfec "stty rows 24 cols 80; $IOLENS biotop 1" /dev/null >"$T/screen80" 2>&1
	check_eq "80 columns: q quits with exit 0" 0 "$?"
	lines80=$(python3 "$TERM_LINES" "$T/screen80" 24 80)
	check_match "… the latency columns fit, MAJ and MIN made room" \
		"^PID +COMM +D +DISK +I/O +BYTES +AVG_us +P50_us +P99_us +MAX_us$" "$lines80"
	check_match "… and the screen says which columns it left out" \
		"^not shown \(a wider terminal has room\): CONTAINER MAJ MIN$" "$lines80"
	# (On a busy machine every row of the screen may be another process's, each with more bytes:
	# said, not failed. The screen is full then: 24 lines, rows to the last.)
	if screen_row "$T/screen80" "$(cat "$T/pid80")"; then
		ok "… the reader's row: its 8 reads, 32768 bytes, avg, p50, p99 and max"
	elif [ "$(wc -l <<<"$lines80")" -ge 24 ] && grep -qE '^[0-9]+ ' <<<"$(tail -n 1 <<<"$lines80")"; then
		skip "… the reader's row: the screen was full of busier processes' rows (a busy machine)"
	else
		not_ok "… the reader's row: its 8 reads, 32768 bytes, avg, p50, p99 and max ($(grep -E \
			"^$(cat "$T/pid80") +dd +R +$disk " <<<"$lines80" | tail -n 1))"
	fi
	check "… no line wider than the terminal" awk 'length > 80 { exit 1 }' <<<"$lines80"
else
	skip "script(1) is not installed"
fi

# ---- One request: its p50 and p99 are its latency, the same as its average and max --------------------
# One O_DIRECT read of 4 KiB: one request, whose latency is known exactly (the sum of one); its
# bucket's middle (25 % wide) would read below it. Held to the block tracer's latency of it too.
for try in 1 2 3; do
	block_tracer_start one "$dev"
	"$IOLENS" biotop --json 0.3 >"$T/one.json" 2>"$T/one.err" &
	top=$!
	wait_until lines_at_least "$T/one.json" 1
	dd if="$loopdev" of=/dev/null bs=4k count=1 skip=$((RANDOM % 16000)) iflag=direct status=none &
	one=$!
	wait $one
	stop_sampled "$top" "$T/one.json"
	block_tracer_stop
	read -r count avg p50 p99 max < <(python3 -c 'import json, sys
rows = [r for l in open(sys.argv[1]).read().splitlines() for r in json.loads(l)["processes"]
        if r["pid"] == int(sys.argv[2]) and r["disk"] == sys.argv[3] and r["op"] == "R"]
print(sum(r["requests"] for r in rows), *(rows[0][k] if len(rows) == 1 else "-" for k in ("avg_ns", "p50_ns", "p99_ns", "max_ns")))' \
		"$T/one.json" "$one" "$disk")
	[ "$count" = 1 ] && break
	echo "# the one read's row held $count requests: again (the tracepoints may miss one)"
done
check_eq "one O_DIRECT read: one request, on one row" 1 "$count"
check_eq "… its p50 is its exact latency, the average" "$avg" "$p50"
check_eq "… and its p99" "$avg" "$p99"
check_eq "… and its max" "$avg" "$max"
# The tracer's spans of that request: from its issue and from its bio to its completion. The
# kernel's start of a lone request falls between the two (as much as 60 us from block_io_start's
# time here, under load: as far from the tracer's start to completion as a bucket is wide).
if [ -n "$TRACE" ]; then
	from_issue=$(python3 "$BLOCK_LATENCY" value "$TRACE" --span from_issue --dev "$dev" --pid "$one" --quantile 1)
	from_bio=$(python3 "$BLOCK_LATENCY" value "$TRACE" --span from_bio --dev "$dev" --pid "$one" --quantile 1)
	check "… that latency ($p50 ns) is the block tracer's of the request: from its issue ($from_issue ns) or later, to its bio's ($from_bio ns)" \
		test -n "$from_issue" -a "$p50" -ge $((${from_issue:-0} - 3000)) -a "$p50" -le $((${from_bio:-0} + 3000))
else
	skip "… held to the block tracer: $BLOCK_TRACER_WHY"
fi

# ---- One process, two disks: a row on each, each with its own requests ------------------------------
# fio's two jobs as threads of one process: 64 KiB reads of the loop device, 4 KiB reads of a
# second one, at once. Truth: each job's count and size on its disk's row (bcc's biotop keys rows
# by process and disk too), each row's latencies held to the tracer's of its own disk's requests;
# and stat --top-bio, run alongside, shows the process with the bytes of both (its rows summed).
make_file "$T/bio2.img" $((16 << 20))
sync "$T/bio2.img"
loop2=$(losetup -f --show "$T/bio2.img")
on_exit "loop_release $loop2 $T/bio2.img"
losetup --direct-io=on "$loop2" 2>/dev/null
disk2=${loop2#/dev/} dev2=$(dev_of "$loop2")
NA=300 NB=500
interval=4
for try in 1 2 3 4; do
	block_tracer_start two "$dev" "$dev2"
	start_tops "$T/two" --json $interval
	"$IOLENS" stat --top-bio --json $interval >"$T/two-stat.json" 2>"$T/two-stat.err" &
	stat=$!
	wait_until lines_at_least "$T/two-stat.json" 1
	began=$(now_ns)
	fio --thread --readonly --rw=randread --direct=1 --ioengine=psync --randrepeat=0 --output-format=json \
		--name=big --filename="$loopdev" --bs=64k --number_ios=$NA --size=64M \
		--name=small --filename="$loop2" --bs=4k --number_ios=$NB --size=16M >"$T/two-fio.json" 2>"$T/two-fio.err"
	fio_rc=$?
	ended=$(now_ns)
	stop_sampled "$tops $stat" $(files_of "$T/two") "$T/two-stat.json"
	block_tracer_stop
	whole=yes
	for m in "${MECHS[@]}"; do
		read -r "requests[a$m]" "nbytes[a$m]" "lines[a$m]" "pids[a$m]" < <(rows "$T/two.$m.json" fio "$disk")
		read -r "requests[b$m]" "nbytes[b$m]" "lines[b$m]" "pids[b$m]" < <(rows "$T/two.$m.json" fio "$disk2")
		[ "${lines[a$m]}" = 1 ] && [ "${lines[b$m]}" = 1 ] && all_but_missed $NA "${requests[a$m]}" &&
			all_but_missed $NB "${requests[b$m]}" || whole=""
	done
	[ "$fio_rc" = 0 ] && [ -n "$whole" ] && break
	echo "# fio's requests of $NA and $NB with ${interval}s intervals: $(for m in "${MECHS[@]}"; do echo -n "$m ${requests[a$m]} and ${requests[b$m]} on ${lines[a$m]} and ${lines[b$m]} lines; "; done)again, longer"
	interval=$(next_interval $interval $((ended - began)))
done
check_eq "two disks: fio ran ($(head -c 300 "$T/two-fio.err"))" 0 "$fio_rc"
for m in "${MECHS[@]}"; do
	check "[$m] $disk's row: the 64 KiB job's $NA reads (${requests[a$m]}), but for at most 0.5 % missed" \
		all_but_missed $NA "${requests[a$m]}"
	check_eq "[$m] … 64 KiB each" $((requests[a$m] * 65536)) "${nbytes[a$m]}"
	check "[$m] … $disk2's row: the 4 KiB job's $NB reads (${requests[b$m]}), but for at most 0.5 % missed" \
		all_but_missed $NB "${requests[b$m]}"
	check_eq "[$m] … 4 KiB each" $((requests[b$m] * 4096)) "${nbytes[b$m]}"
	check_eq "[$m] … both rows of one process (fio's threads)" "${pids[a$m]}" "${pids[b$m]}"
	latency_checks "$m" "$T/two.$m.json" fio "$disk" "$dev"
	latency_checks "$m" "$T/two.$m.json" fio "$disk2" "$dev2"
done
# stat --top-bio (this kernel's own mechanism, the first): over the lines whose top process is
# fio's, its bytes (rate x interval) those of both rows.
m=${MECHS[0]}
# Another process doing more I/O (a busy machine) is the top of some lines: those are left out,
# named, and fio's shown bytes may then only be fewer than its rows', never more.
read -r shown others < <(python3 -c 'import json, sys
total, others = 0, set()
for l in open(sys.argv[1]).read().splitlines()[1:]:
    d = json.loads(l)
    g = d["top_bio"]
    if g is None:
        continue
    if g["pid"] == int(sys.argv[2]):
        total += g["read_bytes_per_s"] * d["interval_ns"] / 1e9
    elif g.get("read_bytes_per_s", 0) + g.get("write_bytes_per_s", 0) > 0:
        others.add("%s:%d" % (g["name"], g["pid"]))
print(round(total), ",".join(sorted(others)) or "-")' "$T/two-stat.json" "${pids[a$m]%%,*}")
# Its rows in biotop, every disk's (fio reads a little of others as it starts: its own files).
read -r all_bytes all_rows < <(python3 -c 'import json, sys
total, rows = 0, []
for l in open(sys.argv[1]).read().splitlines():
    for r in json.loads(l)["processes"]:
        if r["pid"] == int(sys.argv[2]) and r["op"] == "R":
            total += r["bytes"]; rows.append("%s:%d" % (r["disk"], r["bytes"]))
print(total, ",".join(rows))' "$T/two.$m.json" "${pids[a$m]%%,*}")
check "stat --top-bio alongside: fio with the bytes of its rows on every disk, $all_bytes ($all_rows), both loop devices' among them (shown: $shown; 0.5 % and 1 KiB for rounding; lines another process topped: $others)" \
	python3 -c 'import sys; v, t, both = map(float, sys.argv[1:4]); busy = sys.argv[4] != "-"
sys.exit(not (t >= both and (0 if busy else t * 0.995 - 1024) <= v <= t + 1024))' \
	"$shown" "$all_bytes" "$((nbytes[a$m] + nbytes[b$m]))" "$others"

# read_in_one_line NAME N DEVICE DEV FIO-ARGS...: the tracer of DEV (DEVICE's MAJ:MIN) and a biotop
# with each mechanism ($T/NAME.MECH.json) while fio makes N random 4 KiB reads of DEVICE (O_DIRECT,
# and FIO-ARGS); again with longer intervals until each biotop has them all (but for 0.5 % missed)
# on one line. Sets fio_rc, completed (the reads /proc/diskstats counted on DEVICE meanwhile) and
# requests[MECH].
read_in_one_line() {
	local name=$1 n=$2 device=$3 dev=$4 interval try m whole d0 began took
	shift 4
	# (The first interval from fio's pace in the first section: twice its time here, at least 2 s.)
	interval=$(next_interval 1 $((n * READ_NS)))
	for try in 1 2 3 4 5; do
		block_tracer_start "$name" "$dev"
		start_tops "$T/$name" --json $interval
		d0=$(diskstats_sum "${device#/dev/}" 4)
		began=$(now_ns)
		fio --name="$name" --filename="$device" --readonly --rw=randread --bs=4k --direct=1 --number_ios="$n" \
			--randrepeat=0 --output-format=json "$@" >"$T/$name-fio.json" 2>"$T/$name-fio.err"
		fio_rc=$?
		took=$(($(now_ns) - began))
		completed=$(($(diskstats_sum "${device#/dev/}" 4) - d0))
		stop_sampled "$tops" $(files_of "$T/$name")
		block_tracer_stop
		whole=yes
		for m in "${MECHS[@]}"; do
			read -r "requests[$m]" _ "lines[$m]" _ < <(rows "$T/$name.$m.json" fio "${device#/dev/}")
			[ "${lines[$m]}" = 1 ] && all_but_missed "$n" "${requests[$m]}" || whole=""
		done
		[ "$fio_rc" = 0 ] && [ -n "$whole" ] && return 0
		echo "# fio's $n reads with ${interval}s intervals: $(for m in "${MECHS[@]}"; do echo -n "$m ${requests[$m]} on ${lines[$m]} lines; "; done)again, longer"
		# (Twice fio's time, not the whole try's: the wait for a line after it is up to two
		# intervals, and counting it made each try's interval four times the last, 900 s in all.)
		interval=$(next_interval $interval "$took")
	done
}

# ---- A disk whose iostats are off: its requests timed by the program itself ----------------------
# The kernel keeps a request's start (start_time_ns) only when the queue counts iostats; off, the
# field may hold the start of the request's earlier life (since Linux 6.11 it is not cleared: a
# loop device once showed 422 s). Truth: fio's N reads, as requests, with their latencies held to
# the tracer's as above (the first request's latency is unknown: it tells the program to time the
# disk's, at the tracepoint its mechanism starts at, block_io_start or block_getrq).
if echo 0 2>/dev/null >"/sys/block/$disk/queue/iostats"; then
	on_exit "echo 1 >/sys/block/$disk/queue/iostats 2>/dev/null"
	N3=500
	read_in_one_line untimed $N3 "$loopdev" "$dev" --ioengine=psync --size=64M
	echo 1 >"/sys/block/$disk/queue/iostats"
	check_eq "iostats 0: fio ran ($(head -c 200 "$T/untimed-fio.err"))" 0 "$fio_rc"
	for m in "${MECHS[@]}"; do
		check "[$m] … its $N3 reads, as requests (${requests[$m]}), but for at most 0.5 % missed" \
			all_but_missed $N3 "${requests[$m]}"
		latency_checks "$m" "$T/untimed.$m.json" fio "$disk" "$dev"
	done
else
	skip "a disk with iostats off: cannot write /sys/block/$disk/queue/iostats"
fi

# ---- Requests that wait in the scheduler: timed from their start, not their issue ----------------
# On the disk above a request's start and its issue are a microsecond apart: timed from either, the
# same figures. Here they are not (lib.sh, queued_device: 60 of fio's 64 reads in flight wait in
# mq-deadline). Truth: the tracer's spans of them, as above; and that a program timing each
# request from its issue (block_rq_issue), as one that confused the two would, could not have
# printed ours (its p50 was 20 to 30 times shorter here, also with a CPU hog on each core).
if ! queued_device; then
	skip "requests that wait in the scheduler: $QUEUED_WHY"
else
	qdisk=${QUEUED_LOOP#/dev/} qdev=$(dev_of "$QUEUED_LOOP")
	NQ=4096
	read_in_one_line queued $NQ "$QUEUED_LOOP" "$qdev" --ioengine=libaio --iodepth=64 --size=64M
	check_eq "queued: fio ran ($(head -c 200 "$T/queued-fio.err"))" 0 "$fio_rc"
	check_eq "… /proc/diskstats counted its $NQ reads, none merged" $NQ "$completed"
	for m in "${MECHS[@]}"; do
		check "[$m] … its $NQ reads, as requests (${requests[$m]}), but for at most 0.5 % missed" \
			all_but_missed $NQ "${requests[$m]}"
		latency_checks "$m" "$T/queued.$m.json" fio "$qdisk" "$qdev"
		read -r pid p50 < <(echo $(row_key "$T/queued.$m.json" fio "$qdisk" pid) $(row_key "$T/queued.$m.json" fio "$qdisk" p50_ns))
		# (Only where the requests waited long enough to tell: the tracer's own start-timed p50 is
		# outside what timing from the issue allows.)
		tp50=$([ -z "$TRACE" ] || python3 "$BLOCK_LATENCY" value "$TRACE" --span from_start --dev "$qdev" --pid "$pid")
		if [ -n "$tp50" ] && python3 "$BLOCK_LATENCY" holds "$TRACE" --value "$tp50" --span from_issue --dev "$qdev" \
			--pid "$pid" --count "${requests[$m]}" --scale biotop >/dev/null; then
			skip "[$m] … its p50 against one timed from the issue: the requests hardly waited this time (the tracer's p50 from their start, $tp50 ns, is one from their issue too)"
		else
			check_latency_not "[$m] … its p50 is no program's that timed the requests from their issue" "$p50" \
				--span from_issue --dev "$qdev" --pid "$pid" --count "${requests[$m]}" --scale biotop
		fi
	done
fi

# ---- No request left behind: requests merged into others never complete on their own -------------
# The program keeps each request from its start to its completion in its place in an array
# (in_flight_slots, by address) or, when another request holds that place, in a hash (in_flight);
# one the kernel merges into another (the scheduler's request merges) is taken out as it merges.
# Truth: once the I/O has ended, the two hold no more requests than /proc/diskstats has in flight
# (its 12th field, all devices), a few more for those that start between the two looks.
# bio_maps: the ids of the in_flight and in_flight_slots maps loaded now, and of bio.bpf.c's .bss.
bio_maps() { bpftool -j map show 2>/dev/null | python3 -c 'import json, sys
print(" ".join(str(m["id"]) for m in json.load(sys.stdin) if m.get("name") in ("in_flight", "in_flight_slots", "bio_bpf.bss")))'; }
# held ID...: the requests the maps hold (the hash's entries, the array's places with a request);
# then the hash's entries alone, and what the program counts of them (in_flight_hashed, in .bss).
held() { for id in "$@"; do bpftool -j map dump id "$id" 2>/dev/null; echo; done | python3 -c 'import json, sys
held = entries = hashed = 0
for text in sys.stdin.read().split("\n"):
    if not text.strip():
        continue
    for e in json.loads(text):
        value = e.get("formatted", {}).get("value", {})
        if ".bss" in value:
            hashed = next(v["in_flight_hashed"] for v in value[".bss"] if "in_flight_hashed" in v)
        elif "rq" in value:
            held += value["rq"] != 0
        else:
            held += 1
            entries += 1
print(held, entries, hashed)'; }
# in_flight_now: the requests in flight on every disk (/proc/diskstats).
in_flight_now() { awk '{ s += $12 } END { print s }' /proc/diskstats; }
# maps_agree: the maps hold no more requests than are in flight (+ 8), and the program's count of the
# hash's entries is the hash's but for those; sets n, entries, hashed and busy (the most in flight
# before and after the maps were read). Other programs' requests come and go meanwhile (with
# IOLENS_BIO_PLACES=1 all of them are in the hash): waited for, 10 s at most; a request left
# behind, or a count that drifted, stays, and fails every time.
maps_agree() {
	local b
	busy=$(in_flight_now)
	read -r n entries hashed < <(held $maps)
	b=$(in_flight_now)
	[ "$b" -gt "$busy" ] && busy=$b
	[ "${n:-99999}" -le $((busy + 8)) ] &&
		python3 -c "import sys; sys.exit(not abs(${hashed:-99999} - ${entries:-0}) <= $busy + 8)"
}
# new_bio_maps: sets maps to those loaded since $before (the three of biotop's), or fails.
new_bio_maps() { maps=""; for id in $(bio_maps); do [[ $before == *" $id "* ]] || maps+=" $id"; done; [ "$(wc -w <<<"$maps")" = 3 ]; }
if ! command -v bpftool >/dev/null; then
	skip "no request left behind: needs bpftool"
	skip "requests whose place is taken: needs bpftool"
else
	# The loop device with mq-deadline (its own, for this test): 4 writers of adjacent 4 KiB blocks.
	# Here the kernel merged their bios into requests already made (4096 merges counted), not requests
	# into requests (on_merge ran none: the device is too quick for requests to wait side by side): so
	# this holds the maps to leaving nothing behind in what the kernel does here, merged bios included.
	# Each request is inserted in the scheduler (block_rq_insert: where block_getrq's entry moves to
	# the request), and merged bios make its bytes: the writers' 16 MiB, in their rows.
	# wrote FILE DISK: the bytes the rows of fio's writes on DISK hold, over every line.
	wrote() { python3 -c 'import json, sys
print(sum(r["bytes"] for l in open(sys.argv[1]).read().splitlines() for r in json.loads(l)["processes"]
          if r["comm"] == "fio" and r["disk"] == sys.argv[2] and r["op"] == "W"))' "$@"; }
	if ! echo mq-deadline 2>/dev/null >"/sys/block/$disk/queue/scheduler"; then
		skip "no request left behind: no mq-deadline for $disk"
	else
		for m in "${MECHS[@]}"; do
			before=" $(bio_maps) "
			IOLENS_BIO_MECHANISM=$m "$IOLENS" biotop --json 0.5 >"$T/merge.json" 2>"$T/merge.err" &
			top=$!
			wait_until lines_at_least "$T/merge.json" 1
			check "[$m] biotop's in_flight and in_flight_slots maps and .bss listed by bpftool" wait_until new_bio_maps
			# (A completion the kernel ran no program for, rare, leaves its request behind until
			# another takes its place: as above, fio again, up to three runs, each its 16 MiB;
			# a program that forgets requests leaves them every time.)
			for runs in 1 2 3; do
				m0=$(awk '$3 == "'"$disk"'" { print $8 }' /proc/diskstats)
				fio --name=merge --filename="$loopdev" --rw=write --bs=4k --numjobs=4 --offset_increment=4k --ioengine=psync \
					--direct=1 --size=4M --output=/dev/null 2>"$T/merge-fio.err"
				fio_rc=$?
				m1=$(awk '$3 == "'"$disk"'" { print $8 }' /proc/diskstats)
				echo "# $disk: $((m1 - m0)) writes merged (/proc/diskstats)"
				wait_until 10 maps_agree && break
				echo "# [$m] the maps hold $n requests, $busy in flight: fio again"
			done
			check_eq "[$m] fio's 4 writers of adjacent blocks ran ($(head -c 200 "$T/merge-fio.err"))" 0 "$fio_rc"
			check "[$m] … then the maps hold $n requests: at most the $busy in flight (/proc/diskstats) + 8" test "${n:-99999}" -le $((busy + 8))
			stop_sampled $top "$T/merge.json"
			w=$(wrote "$T/merge.json" "$disk") all=$((runs * (16 << 20)))
			check "[$m] … fio's rows: the $runs x 16 MiB its writers wrote ($w), but for 0.5 % missed" \
				test "$w" -le $all -a "$w" -ge $((all - all / 200))
		done
		echo none >"/sys/block/$disk/queue/scheduler" 2>/dev/null
	fi

	# ---- Requests whose place another holds: in the hash, counted all the same -------------------
	# IOLENS_BIO_PLACES=1 leaves one place for all requests: with fio's 8 reads in flight at once,
	# most go to the hash, and two CPUs race for the place (with block_getrq, the bios' entries too).
	# Truth: fio's N reads, as requests and bytes (but for the 0.5 % the tracepoints may miss, as
	# above); then nothing left in either map.
	for m in "${MECHS[@]}"; do
		before=" $(bio_maps) "
		IOLENS_BIO_MECHANISM=$m IOLENS_BIO_PLACES=1 "$IOLENS" biotop --json 1 >"$T/hash.json" 2>"$T/hash.err" &
		top=$!
		wait_until lines_at_least "$T/hash.json" 1
		check "[$m] IOLENS_BIO_PLACES=1: biotop's two maps and .bss listed" wait_until new_bio_maps
		places=$(bpftool -j map show | python3 -c 'import json, sys
print(" ".join(str(m["max_entries"]) for m in json.load(sys.stdin) if m.get("name") == "in_flight_slots" and str(m["id"]) in sys.argv[1:]))' $maps)
		check_eq "[$m] … the array has one place" 1 "$places"
		# (As above: a burst of completions the kernel ran no program for is rare, and measured
		# again, up to three runs of fio under the same biotop; a program that forgets requests is
		# short every time.)
		for try in 1 2 3; do
			mark=$(now_ns)
			fio --name=hash --filename="$loopdev" --readonly --rw=randread --bs=4k --direct=1 --ioengine=libaio --iodepth=8 \
				--number_ios=$N --size=64M --randrepeat=0 --output=/dev/null 2>"$T/hash-fio.err"
			fio_rc=$?
			wait_until sampled_since "$T/hash.json" "$(now_ns)"
			read -r h_requests h_bytes _ _ < <(rows_since "$T/hash.json" "$mark" fio "$disk")
			[ "$fio_rc" = 0 ] && all_but_missed $N "$h_requests" && break
			echo "# [$m] hash: fio's requests of $N: $h_requests, try $try"
		done
		check_eq "[$m] fio's reads, 8 in flight, ran ($(head -c 200 "$T/hash-fio.err"))" 0 "$fio_rc"
		wait_until 10 maps_agree
		kill -INT $top
		wait $top
		check "[$m] … its $N reads, as requests ($h_requests), but for at most 0.5 % missed" \
			all_but_missed $N "$h_requests"
		check_eq "[$m] … and 4 KiB each, as bytes" $((h_requests * 4096)) "$h_bytes"
		check "[$m] … then the maps hold $n requests: at most the $busy in flight (/proc/diskstats) + 8" test "${n:-99999}" -le $((busy + 8))
		# The program counts the hash's entries (in_flight_hashed: none, and a completion does not look
		# there): its count, read just after the hash, differs by the requests that started or ended
		# between (maps_agree).
		check "[$m] … its count of the hash's requests ($hashed) is the hash's ($entries), but for the $busy in flight + 8" \
			python3 -c "import sys; sys.exit(not abs(${hashed:-99999} - ${entries:-0}) <= $busy + 8)"
	done
fi

# ---- Two cgroups: two readers, each in a new cgroup of its own, told apart by -C ------------------
mycg=$(sed -n 's/^0:://p' /proc/self/cgroup)
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
a=${mycg%/}/iolens-biotop-$$-a b=${mycg%/}/iolens-biotop-$$-b
if [ -n "$cg2" ] && [ -n "$mycg" ] && mkdir "$cg2$a" 2>/dev/null && mkdir "$cg2$b" 2>/dev/null; then
	on_exit "remove_cgroup '$cg2$a'; remove_cgroup '$cg2$b'"
	# cg_bytes PATH: the bytes read by the rows of that cgroup path, over all lines (a row's disk is
	# that of its last request: dd's own pages, read as it started, may have come from another).
	# cg_bytes FILE PATH; cg_id FILE PATH: its ids.
	cg_bytes() { python3 -c 'import json, sys
print(sum(r["bytes"] for l in open(sys.argv[1]).read().splitlines() for r in json.loads(l)["cgroups"]
          if r["cgroup"] == sys.argv[2] and r["op"] == "R"))' "$1" "$2"; }
	cg_id() { python3 -c 'import json, sys
print(" ".join(sorted({str(r["cgroup_id"]) for l in open(sys.argv[1]).read().splitlines() for r in json.loads(l)["cgroups"] if r["cgroup"] == sys.argv[2]})))' "$1" "$2"; }
	# at_least_up_to LOW VALUE SLACK: LOW <= VALUE <= LOW + SLACK.
	at_least_up_to() { [ "$2" -ge "$1" ] && [ "$2" -le $(($1 + $3)) ]; }
	# Again (3 tries at most) when a cgroup's lines count less than its reader read, said with the
	# lines (waiting for one line more, not two, A's lines once held 3.5 of its 4 MiB).
	declare -A got_a got_b
	for try in 1 2 3; do
		start_tops "$T/cg" -C --json 0.5
		# Each moves itself into its cgroup, then reads with O_DIRECT: 4 MiB in A, 12 MiB in B.
		sh -c 'echo $$ >"$1/cgroup.procs" && exec dd if="$2" of=/dev/null bs=64k count=64 iflag=direct status=none' _ "$cg2$a" "$loopdev"
		sh -c 'echo $$ >"$1/cgroup.procs" && exec dd if="$2" of=/dev/null bs=64k count=192 iflag=direct status=none' _ "$cg2$b" "$loopdev"
		stop_sampled "$tops" $(files_of "$T/cg")
		whole=yes
		for m in "${MECHS[@]}"; do
			got_a[$m]=$(cg_bytes "$T/cg.$m.json" "$a") got_b[$m]=$(cg_bytes "$T/cg.$m.json" "$b")
			[ "${got_a[$m]}" -ge $((4 << 20)) ] && [ "${got_b[$m]}" -ge $((12 << 20)) ] || whole=""
		done
		[ -n "$whole" ] && break
		for m in "${MECHS[@]}"; do
			echo "# try $try: $m: A ${got_a[$m]}, B ${got_b[$m]} bytes: again"
			python3 -c 'import json, sys
for l in open(sys.argv[1]).read().splitlines():
    d = json.loads(l)
    print("#", d["time_ns"], d["interval_ns"], [(r["cgroup"], r["cgroup_id"], r["op"], r["disk"], r["requests"], r["bytes"]) for r in d["cgroups"]])' "$T/cg.$m.json"
		done
	done
	for m in "${MECHS[@]}"; do
		# (and the pages of dd and its libraries it read as it started, if they were not cached: 1 MiB at most)
		check "[$m] -C: cgroup $a, by its path: the 4 MiB its reader read (${got_a[$m]})" at_least_up_to $((4 << 20)) "${got_a[$m]}" $((1 << 20))
		check "[$m] … cgroup $b: its reader's 12 MiB (${got_b[$m]})" at_least_up_to $((12 << 20)) "${got_b[$m]}" $((1 << 20))
		check_eq "[$m] … A's id: its directory's inode" "$(stat -c %i "$cg2$a")" "$(cg_id "$T/cg.$m.json" "$a")"
		check_eq "[$m] … B's likewise" "$(stat -c %i "$cg2$b")" "$(cg_id "$T/cg.$m.json" "$b")"
		check "[$m] … no word on stderr but what it says once of this kernel" bio_quiet "$m" "$T/cg.$m.err"
	done

	# One process, renamed and moved to the other cgroup between its reads: each CPU remembers the
	# process, name, cgroup and disk of its last start and looks in neither map while they stay, so
	# this holds it to a change of each. Truth: the process's own reads, 2 MiB as iolens-first in A,
	# then 6 MiB as iolens-second in B; its row named by its last request, each cgroup its share.
	cat >"$T/move.py" <<'PY'
import ctypes, mmap, os, sys
device, first, second = sys.argv[1:4]
libc = ctypes.CDLL(None)
buf = mmap.mmap(-1, 1 << 16)  # page-aligned, as O_DIRECT needs
def move(name, cgroup):
    libc.prctl(15, name, 0, 0, 0)  # PR_SET_NAME
    with open(cgroup + "/cgroup.procs", "w") as f:
        f.write(str(os.getpid()))
def read(offset, size):
    fd = os.open(device, os.O_RDONLY | os.O_DIRECT)
    done = 0
    while done < size:
        done += os.preadv(fd, [buf], offset + done)
    os.close(fd)
move(b"iolens-first", first)
read(0, 2 << 20)
move(b"iolens-second", second)
read(2 << 20, 6 << 20)
PY
	# A loop device over memory: its requests make none underneath (a loop device over a disk's file
	# starts one there for each, from a kernel thread on the same CPU, between the reader's).
	shm=$(mktemp -p /dev/shm iolens-biotop.XXXXXX)
	on_exit "rm -f '$shm'"
	head -c $((8 << 20)) /dev/zero >"$shm"
	shmloop=$(losetup -f --show "$shm")
	on_exit "loop_release $shmloop $shm"
	start_tops "$T/mv" --json 0.5
	tops_p=$tops
	start_tops "$T/mvc" -C --json 0.5
	# On one CPU: its requests all start where the last start is remembered (as a process that
	# stays on a CPU does; moving between CPUs, it would find another CPU's memory of it stale).
	cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
	taskset -c "$cpu" python3 "$T/move.py" "$shmloop" "$cg2$a" "$cg2$b" &
	mover=$!
	wait $mover
	mover_rc=$?
	stop_sampled "$tops_p $tops" $(files_of "$T/mv") $(files_of "$T/mvc")
	check_eq "the renamed, moved reader ran" 0 "$mover_rc"
	mvc_bytes() { python3 -c 'import json, sys
print(sum(r["bytes"] for l in open(sys.argv[1]).read().splitlines() for r in json.loads(l)["cgroups"]
          if r["cgroup"] == sys.argv[2] and r["disk"] == sys.argv[3] and r["op"] == "R"))' "$1" "$2" "${shmloop#/dev/}"; }
	for m in "${MECHS[@]}"; do
		# Its rows on that loop device: bytes over every line, and the name of the last.
		read -r mv_bytes mv_name < <(python3 -c 'import json, sys
rows = [r for l in open(sys.argv[1]).read().splitlines() for r in json.loads(l)["processes"]
        if r["pid"] == int(sys.argv[2]) and r["disk"] == sys.argv[3] and r["op"] == "R"]
print(sum(r["bytes"] for r in rows), rows[-1]["comm"] if rows else "-")' "$T/mv.$m.json" "$mover" "${shmloop#/dev/}")
		check "[$m] its row: the 8 MiB it read, but for 0.5 % missed ($mv_bytes)" \
			test "$mv_bytes" -le $((8 << 20)) -a "$mv_bytes" -ge $(( (8 << 20) - (8 << 20) / 200 ))
		check_eq "[$m] … named by its last request" iolens-second "$mv_name"
		mv_a=$(mvc_bytes "$T/mvc.$m.json" "$a") mv_b=$(mvc_bytes "$T/mvc.$m.json" "$b")
		check "[$m] -C: A its 2 MiB read before the move ($mv_a), but for 0.5 % missed" \
			test "$mv_a" -le $((2 << 20)) -a "$mv_a" -ge $(( (2 << 20) - (2 << 20) / 200 ))
		check "[$m] … B its 6 MiB after ($mv_b)" test "$mv_b" -le $((6 << 20)) -a "$mv_b" -ge $(( (6 << 20) - (6 << 20) / 200 ))
	done

	# A process the map forgets between its reads, while its CPU remembers its last start: its entry
	# deleted (bpftool) once its first MiB was sampled, as the LRU forgets one when more than 8192
	# processes did I/O. The completion that finds no entry counts its bytes as unattributed and
	# makes every CPU look again. Truth: the reader's 2 MiB (64 KiB a read, one at a time), in its
	# rows but for that one read, which unattributed_bytes holds: all of them between the two. (If
	# another process started I/O on its CPU in between, its next read makes a new entry at once:
	# all in its rows.) bpftool runs on another CPU where there is one, for that reason.
	if ! command -v bpftool >/dev/null; then
		skip "a process forgotten by the map: needs bpftool"
	else
		other=$(taskset -pc $$ | sed 's/.*: *//' | python3 -c 'import sys
cpus = set()
for part in sys.stdin.read().strip().split(","):
    lo, _, hi = part.partition("-")
    cpus.update(range(int(lo), int(hi or lo) + 1))
print(sorted(cpus)[-1])')
		read -r major minor < <(stat -Lc '%t %T' "$shmloop")
		mkfifo "$T/go"
		cat >"$T/twice.py" <<'PY'
import mmap, os, sys
device, go = sys.argv[1:3]
buf = mmap.mmap(-1, 1 << 16)
fd = os.open(device, os.O_RDONLY | os.O_DIRECT)
def read(offset):
    for done in range(0, 1 << 20, 1 << 16):
        os.preadv(fd, [buf], offset + done)
read(0)
open(go + ".half", "w").close()
open(go).readline()
read(1 << 20)
PY
		process_maps() { bpftool -j map show 2>/dev/null | python3 -c 'import json, sys
print(" ".join(str(m["id"]) for m in json.load(sys.stdin) if m.get("name") == "processes"))'; }
		for m in "${MECHS[@]}"; do
			rm -f "$T/go.half"
			before=" $(process_maps) "
			IOLENS_BIO_MECHANISM=$m "$IOLENS" biotop --json 0.5 >"$T/lost.json" 2>"$T/lost.err" &
			top=$!
			wait_until lines_at_least "$T/lost.json" 1
			map=""
			for id in $(process_maps); do [[ $before == *" $id "* ]] || map=$id; done
			taskset -c "$cpu" python3 "$T/twice.py" "$shmloop" "$T/go" &
			twice=$!
			wait_until test -e "$T/go.half"
			half=$(now_ns)
			wait_until sampled_since "$T/lost.json" "$half"
			# Its key: its tgid and its disk (major << 32 | minor), two little-endian u64.
			key=$(python3 -c 'import struct, sys
print(" ".join("%02x" % b for b in struct.pack("<QQ", int(sys.argv[1]), int(sys.argv[2], 16) << 32 | int(sys.argv[3], 16))))' \
				"$twice" "$major" "$minor")
			taskset -c "$other" bpftool map delete id "$map" key hex $key 2>"$T/delete.err"
			check_eq "[$m] its entry deleted from biotop's processes map ($map) ($(head -c 200 "$T/delete.err"))" 0 $?
			echo go >"$T/go"
			wait $twice
			twice_rc=$?
			stop_sampled $top "$T/lost.json"
			# (unattributed_bytes since the line sampled before its entry went: the machine's
			# requests in flight as biotop began, whose start it did not see, are in it too.)
			read -r lost_bytes unattributed < <(python3 -c 'import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
before = next(d for d in lines if d["time_ns"] >= int(sys.argv[4]))
print(sum(r["bytes"] for d in lines for r in d["processes"] if r["pid"] == int(sys.argv[2]) and r["disk"] == sys.argv[3]),
      lines[-1]["unattributed_bytes"] - before["unattributed_bytes"])' "$T/lost.json" "$twice" "${shmloop#/dev/}" "$half")
			check_eq "[$m] … the reader ran" 0 "$twice_rc"
			echo "# the first read after: $([ "$unattributed" -gt 0 ] && echo "unattributed (its CPU remembered the reader)" || echo "counted (another had started I/O on its CPU)")"
			check "[$m] … its rows hold its 2 MiB but for one 64 KiB read ($lost_bytes)" \
				test "$lost_bytes" -le $((2 << 20)) -a "$lost_bytes" -ge $(( (2 << 20) - (64 << 10) ))
			check_eq "[$m] … the rest unattributed ($unattributed)" $((2 << 20)) $((lost_bytes + unattributed))
		done
	fi
else
	skip "two cgroups: no cgroup2 mount here, or this test cannot make cgroups under ${mycg:-its own}"
fi

echo "1..$t_count"
