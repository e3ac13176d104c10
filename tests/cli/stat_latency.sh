#!/usr/bin/env bash
# stat_latency.sh: iolens stat -x --latency's percentiles per disk (eBPF), start to completion, device and queue time, held to an independent tracer's (bpftrace on the same tracepoints, lib.sh) of the same requests on a loop device, and on one whose requests take 10 ms; their counts to /proc/diskstats; the table shows the same figures as its CSV (--output) of that run; without eBPF unknown, said once, and the table has iostat's columns alone; -x without --latency loads no eBPF (strace: no bpf() call) and says nothing of it.
. "$(dirname "$0")/lib.sh"

# lat KEY FILE LINE: a key of the loop device's dsk-ext group on a line (0: the first after the header) of stat's CSV.
lat() { python3 -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[2])))
v = rows[int(sys.argv[3])]["dskext_" + sys.argv[4] + "_" + sys.argv[1]]
print("null" if v == "" else "%.0f" % float(v))' "$1" "$2" "$3" "$disk"; }
# fio_clat FILE WHAT: fio's read completion latency (ns): a percentile ("50.000000"), or "max".
fio_clat() { python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["jobs"][0]["read"]["clat_ns"]
print(c["max"] if sys.argv[2] == "max" else c["percentile"][sys.argv[2]])' "$1" "$2"; }
# latency_checks LINE DEV: the read latencies of the CSV's line held to the tracer's of the same
# requests (their count, r_lat_count, the histogram's), as block_latency.py bounds them: start to
# completion (p50, p99; max, the upper bound of its bucket), device time and queue time (p50, p99),
# each percentile interpolated within its bucket (64 per power of two): anywhere in it.
latency_checks() {
	local line=$1 dev=$2 n span p key
	n=$(lat r_lat_count "$T/lat.csv" "$line")
	for span in total device queue; do
		for p in 50 99; do
			key=$(case $span in total) echo r_p$p ;; device) echo r_dev_p$p ;; queue) echo r_queue_p$p ;; esac)
			check_latency "${key}_ns, $span, held to the block tracer's" "$(lat "${key}_ns" "$T/lat.csv" "$line")" \
				--span $span --dev "$dev" --count "$n" --quantile "0.$p" --scale stat
		done
	done
	check_latency "r_max_ns, its bucket's upper bound" "$(lat r_max_ns "$T/lat.csv" "$line")" \
		--dev "$dev" --count "$n" --quantile 1 --scale stat-max
}
# at_most A B RATIO: A <= B * RATIO.
at_most() { python3 -c 'import sys; a, b, r = map(float, sys.argv[1:]); sys.exit(not a <= b * r)' "$@"; }
# busy_lines FILE: the lines (after the first) whose interval had reads on the device.
busy_lines() { python3 -c 'import csv, sys
for i, row in enumerate(csv.DictReader(open(sys.argv[1]))):
    if i and float(row["dskext_" + sys.argv[2] + "_r_per_s"]):
        print(i)' "$1" "$disk"; }
# table_vs_csv TABLE CSV LINE: each latency column of the table's line (ms, as many decimals as
# fit, or k for thousands) against its CSV key (ns) on the same line: "ok" or what differs.
table_vs_csv() { python3 -c 'import csv, sys
reports = [r.splitlines() for r in open(sys.argv[1]).read().split("\n\n") if r.strip()]
names, values = reports[int(sys.argv[3])][0].split(), reports[int(sys.argv[3])][1].split()
row = list(csv.DictReader(open(sys.argv[2])))[int(sys.argv[3])]
bad = []
for col in ("r_p50", "r_p99", "r_max", "w_p50", "w_p99", "w_max"):
    shown = values[names.index(col)]
    ns = float(row["dskext_" + sys.argv[4] + "_" + col + "_ns"])
    scale = 1000 if shown.endswith("k") else 1
    digits = shown.rstrip("k")
    step = (10 ** -len(digits.split(".")[1]) if "." in digits else 1) * scale
    if abs(float(digits) * scale - ns / 1e6) > step / 2 + 1e-9:
        bad.append("%s %s ms, CSV %.0f ns" % (col, shown, ns))
print("ok" if not bad else "; ".join(bad))' "$1" "$2" "$3" "$disk"; }

# measure DISK DEVICE IOS SIZE [SECONDS]: stat -x of DISK ($T/lat.csv, the table in $T/lat.txt), and
# the block tracer of it ($TRACE), while fio makes IOS random 4 KiB O_DIRECT reads of the first SIZE
# of DEVICE (psync: one at a time). One interval (SECONDS, 2 by default) must hold the whole run: fio
# starts right after a line; if its reads spread over two lines all the same (a busy machine), again
# with a longer interval (lib.sh, next_interval). Sets fio_rc, busy (the lines with reads), d0 and d1 (DISK's completed reads in
# /proc/diskstats before and after fio). FIO_PREFIX: a command fio runs under (chrt); FIO_ENGINE:
# fio's I/O engine options.
FIO_PREFIX=() FIO_ENGINE=(--ioengine=psync)
measure() {
	local disk=$1 device=$2 ios=$3 size=$4 interval=${5:-2} try stat began
	for try in 1 2 3 4 5 6; do
		rm -f "$T/lat.csv"
		block_tracer_start lat "$(dev_of "$device")"
		"$IOLENS" stat -x --latency -D "$disk" --no-boot-sample --output "$T/lat.csv" $interval >"$T/lat.txt" 2>"$T/lat.err" &
		stat=$!
		wait_until lines_at_least "$T/lat.csv" 2
		d0=$(diskstats_sum "$disk" 4)
		began=$(now_ns)
		"${FIO_PREFIX[@]}" fio --name=lat --filename="$device" --readonly --rw=randread --bs=4k --direct=1 "${FIO_ENGINE[@]}" \
			--number_ios=$ios --size=$size --randrepeat=0 --output-format=json >"$T/fio.json" 2>"$T/fio.err"
		fio_rc=$?
		d1=$(diskstats_sum "$disk" 4)
		block_tracer_stop
		wait_until lines_at_least "$T/lat.csv" $(($(lines_of "$T/lat.csv") + 1))
		kill $stat
		wait $stat 2>/dev/null
		busy=$(busy_lines "$T/lat.csv")
		[ "$fio_rc" = 0 ] && [ "$(wc -w <<<"$busy")" = 1 ] && break
		echo "# the run spread over lines $(echo $busy) with ${interval}s: again, longer"
		interval=$(next_interval $interval $(($(now_ns) - began)))
	done
}

# ---- By eBPF: fio's random 4 KiB reads on a loop device -------------------------------------------
IOS=5000
why=$(bio_expected)
if [ -n "$why" ]; then
	skip "latencies by eBPF: $why"
elif ! command -v fio >/dev/null || ! command -v losetup >/dev/null; then
	skip "latencies by eBPF: needs fio and losetup"
else
	# The image's blocks on the disk under $T (written and synced), read by the loop device with
	# direct I/O where the file system allows it: each request of the loop device is then a read
	# of the disk below, tens of microseconds or more, not a copy from the page cache.
	make_file "$T/lat.img" $((64 << 20))
	sync "$T/lat.img"
	loopdev=$(losetup -f --show "$T/lat.img" 2>"$T/losetup.err") || { skip "losetup: $(head -1 "$T/losetup.err")"; loopdev=; }
fi
if [ -n "$loopdev" ]; then
	on_exit "loop_release $loopdev $T/lat.img"
	losetup --direct-io=on "$loopdev" 2>/dev/null || echo "# $loopdev reads its file through the page cache (no direct I/O on $(fs_type "$T"))"
	disk=${loopdev#/dev/}
	command -v udevadm >/dev/null && udevadm settle 2>/dev/null
	# Measured again (three tries) when the histogram holds fewer than 99.5 % of the reads: a burst of
	# completions the kernel ran no eBPF program for (lib.sh, all_but_missed; 35 of 5000 once here).
	for try in 1 2 3; do
		measure "$disk" "$loopdev" $IOS 64M
		line=$(echo $busy | cut -d' ' -f1)
		n=$( [ -n "$line" ] && lat r_lat_count "$T/lat.csv" "$line")
		[ "$fio_rc" = 0 ] && [ -n "$line" ] && ! all_but_missed $IOS "$n" && [ $try != 3 ] || break
		echo "# try $try: the histogram holds $n of fio's $IOS reads: again"
	done
	check_eq "fio ran ($(head -c 300 "$T/fio.err"))" 0 "$fio_rc"
	check_eq "one line holds the whole run" 1 "$(wc -w <<<"$busy")"
	check_no_match "as root: eBPF is used, no word of unknown latencies" "no latency percentiles" "$(cat "$T/lat.err")"
	# Counts: fio's reads are the loop device's (/proc/diskstats, completed reads) and the histogram's.
	check_eq "/proc/diskstats counts fio's $IOS reads on $disk, nothing else" $IOS $((d1 - d0))
	check "the read histogram's requests ($n): those diskstats counted ($IOS), but for at most 0.5 % missed" \
		all_but_missed $IOS "$n"
	check_eq "no write histogram entry (fio only read)" 0 "$(lat w_lat_count "$T/lat.csv" "$line")"
	# Latencies: held to the block tracer's spans of the same requests. Not to fio's completion
	# latency (clat, said in the log): it holds fio's system call and its wake-up after the
	# completion, 4 to 33 us at p50 on reads of 80 to 140 us here, and at p99 up to three times
	# ours on a busy machine (scheduling delays outside the block layer).
	ours=$(lat r_p50_ns "$T/lat.csv" "$line")
	echo "# p50: stat -x $ours ns, fio clat $(fio_clat "$T/fio.json" 50.000000) ns"
	latency_checks "$line" "$(dev_of "$loopdev")"
	max=$(lat r_max_ns "$T/lat.csv" "$line")
	check "r_max_ns is at least r_p99_ns" at_most "$(lat r_p99_ns "$T/lat.csv" "$line")" "$max" 1
	check "device time p50 (issue to completion) is at most the whole's p50 + 2 %" \
		at_most "$(lat r_dev_p50_ns "$T/lat.csv" "$line")" "$ours" 1.02
	check "queue time p50 (start to issue) is at most the whole's p50" \
		at_most "$(lat r_queue_p50_ns "$T/lat.csv" "$line")" "$ours" 1
	check_eq "the line before the run: known, no reads, 0 as r_await" "0 0" \
		"$(lat r_p50_ns "$T/lat.csv" $((line - 1))) $(lat r_lat_count "$T/lat.csv" $((line - 1)))"
	# The table of the same run (to a file: every column): iostat -x's, in iostat's order, then the percentiles.
	check_match "the table's header: iostat -x's columns in iostat's order, then the percentiles" \
		"^Device +r/s +rkB/s +rrqm/s +%rrqm +r_await +rareq-sz +w/s +wkB/s +wrqm/s +%wrqm +w_await +wareq-sz +d/s +dkB/s +drqm/s +%drqm +d_await +dareq-sz +f/s +f_await +aqu-sz +%util +r_p50 +r_p99 +r_max +w_p50 +w_p99 +w_max$" \
		"$(sed -n 1p "$T/lat.txt")"
	check_eq "the table's reports are the CSV's lines, a row of $loopdev each" \
		"$(($(lines_of "$T/lat.csv") - 1)) $(($(lines_of "$T/lat.csv") - 1))" \
		"$(grep -c '^Device ' "$T/lat.txt") $(grep -c "^${loopdev#/dev/} " "$T/lat.txt")"
	for l in $((line - 1)) $line; do
		check_eq "table line $l: r_p50 .. w_max are the CSV's of the same line, to the digits shown" ok \
			"$(table_vs_csv "$T/lat.txt" "$T/lat.csv" $l)"
	done
fi

# ---- Requests that wait in the scheduler: each span from its own moment -----------------------------
# On the loop device above a request's start and its issue are a microsecond apart: the whole and
# the device time are the same figures, and a program that took one span for the other would pass.
# Here they are not (lib.sh, queued_device: 60 of fio's 64 reads in flight wait in mq-deadline).
# Truth: the tracer's spans, as above; and that the whole is no program's that timed from the
# issue, the device time none's that timed from the start.
if [ -n "$why" ]; then
	skip "requests that wait in the scheduler: $why"
elif ! command -v fio >/dev/null; then
	skip "requests that wait in the scheduler: needs fio"
elif ! queued_device; then
	skip "requests that wait in the scheduler: $QUEUED_WHY"
else
	disk=${QUEUED_LOOP#/dev/} qdev=$(dev_of "$QUEUED_LOOP") # disk: what lat reads
	FIO_ENGINE=(--ioengine=libaio --iodepth=64)
	# The premise, on the tracer's own spans: the requests waited (start to issue at least as long
	# as issue to completion at the median). A loop device that kept up with fio (no queue built up)
	# cannot tell the spans apart: measured again, up to three times.
	waited_enough=
	for try in 1 2 3; do
		measure "$disk" "$QUEUED_LOOP" 4096 64M
		[ -z "$TRACE" ] && break
		from_issue=$(python3 "$BLOCK_LATENCY" value "$TRACE" --span from_issue --dev "$qdev" 2>/dev/null)
		waited=$(python3 "$BLOCK_LATENCY" value "$TRACE" --span start_to_issue --dev "$qdev" 2>/dev/null)
		[ -n "$from_issue" ] && [ -n "$waited" ] && at_most "$from_issue" "$waited" 1 && waited_enough=1 && break
		echo "# try $try: the requests hardly waited (p50 start to issue ${waited:-?} ns, issue to completion ${from_issue:-?} ns): again"
	done
	FIO_ENGINE=(--ioengine=psync)
	line=$(echo $busy | cut -d' ' -f1)
	check_eq "queued: fio ran ($(head -c 300 "$T/fio.err"))" 0 "$fio_rc"
	check_eq "… one line holds the whole run" 1 "$(wc -w <<<"$busy")"
	check_eq "… /proc/diskstats counts its 4096 reads, none merged" 4096 $((d1 - d0))
	n=$(lat r_lat_count "$T/lat.csv" "$line")
	check "… the histogram's ($n): those, but for at most 0.5 % missed" all_but_missed 4096 "$n"
	latency_checks "$line" "$qdev"
	if [ -z "$TRACE" ] || [ -n "$waited_enough" ]; then
		check_latency_not "… r_p50_ns is no program's that timed the requests from their issue" \
			"$(lat r_p50_ns "$T/lat.csv" "$line")" --span from_issue --dev "$qdev" --count "$n" --scale stat
		check_latency_not "… r_dev_p50_ns none's that timed them from their start" \
			"$(lat r_dev_p50_ns "$T/lat.csv" "$line")" --span from_start --dev "$qdev" --count "$n" --scale stat
	else
		# (the machine kept up with fio three times: the two spans are one, and cannot be told apart)
		skip "… r_p50_ns is no program's that timed the requests from their issue: they hardly waited in 3 tries"
		skip "… r_dev_p50_ns none's that timed them from their start: they hardly waited in 3 tries"
	fi
fi

# ---- Requests made and issued under one plug: the issue timed as it is ------------------------------
# fio's batches of 16 reads (libaio, one io_submit each: the kernel plugs the batch) become 16
# requests that wait in the submitter's plug until the batch is submitted whole, then are issued
# from it. The kernel's clock stands still within a plug (since Linux 6.9): their start_time_ns and
# io_start_time_ns are the same moment, and a program that took the issue's time from the request
# gave them no queue time and a device time as long as the whole. Truth: the tracer's own issue
# (device time: from_issue itself; queue time's median at least start_to_issue's: the start is the
# plug's, so earlier than each request's block_io_start, and no bound above); the device time is none of a
# program that timed from the start. A loop device over memory: no disk below, the device time
# short beside the plug's wait.
if [ -n "$why" ]; then
	skip "requests plugged: $why"
elif ! command -v fio >/dev/null || ! command -v losetup >/dev/null; then
	skip "requests plugged: needs fio and losetup"
elif ! pimage=$(mktemp -p /dev/shm iolens-plugged.XXXXXX) || ! head -c $((64 << 20)) /dev/zero >"$pimage" ||
	! ploop=$(losetup -f --show "$pimage" 2>"$T/losetup.err"); then
	skip "requests plugged: no loop device over /dev/shm ($(head -1 "$T/losetup.err" 2>/dev/null))"
	rm -f "$pimage"
else
	on_exit "loop_release $ploop $pimage; rm -f '$pimage'"
	disk=${ploop#/dev/} pdev=$(dev_of "$ploop")
	FIO_ENGINE=(--ioengine=libaio --iodepth=16 --iodepth_batch_submit=16 --iodepth_batch_complete_min=16)
	measure "$disk" "$ploop" 4096 64M
	FIO_ENGINE=(--ioengine=psync)
	line=$(echo $busy | cut -d' ' -f1)
	check_eq "plugged: fio ran ($(head -c 300 "$T/fio.err"))" 0 "$fio_rc"
	check_eq "… one line holds the whole run" 1 "$(wc -w <<<"$busy")"
	n=$(lat r_lat_count "$T/lat.csv" "$line")
	check "… the histogram's requests ($n): /proc/diskstats' ($((d1 - d0))), but for at most 0.5 % missed" \
		all_but_missed $((d1 - d0)) "$n"
	for p in 50 99; do
		check_latency "… r_dev_p${p}_ns, issue to completion, the tracer's own" "$(lat r_dev_p${p}_ns "$T/lat.csv" "$line")" \
			--span device --dev "$pdev" --count "$n" --quantile "0.$p" --scale stat
	done
	check_latency "… r_queue_p50_ns, at least the tracer's start to issue" "$(lat r_queue_p50_ns "$T/lat.csv" "$line")" \
		--span queue-plugged --dev "$pdev" --count "$n" --quantile 0.5 --scale stat
	check_latency_not "… r_dev_p50_ns is no program's that timed them from their start" "$(lat r_dev_p50_ns "$T/lat.csv" "$line")" \
		--span from_start --dev "$pdev" --count "$n" --scale stat
fi

# ---- A device slower than a system call: within 5 % of fio at p50, 10 % at p99 ------------------------
# fio's clat holds the read's system call and its wake-up (microseconds) beside the request: on a
# device whose requests take milliseconds that part is below a percent, and the issue's goal (our
# p50 within 5 % of fio's, p99 within 10 %) can be held; the block tracer's spans of the same
# requests hold each figure as above. The device: a loop device (direct I/O) over
# a file on examples/fuse-passthrough, whose every FUSE_READ sleeps 10 ms more (--slow-op); fio in
# the real-time class (chrt), so that a busy machine does not make fio's wake-up late (that delay
# is fio's alone, and on CPU hogs it reaches milliseconds), and fio and the server on one CPU
# (taskset): the completion then wakes fio where it runs, not on another virtual CPU that the host
# may have put to sleep (a CI run with the server's 10 ms become 13.8 at p50 had fio's p50 2.6 ms
# above ours). A run whose requests took more than 11 ms at p50 while the host took ticks from this
# machine (steal) was on a machine late to give CPU: measured again, three tries at most, and the
# last one judged. Not without steal: in a guest under TCG the server's every read costs 2 ms more
# of emulation (11.8 to 12.3 ms at p50 on 6.12), the same again each try (and 70 s a try there).
# 200 reads of 10 ms take 2 s: lines of 4 s from the first.
# The request flags' bits the program reads (RQF_IO_STAT says whether the kernel's start time is
# the request's), held to bpftool's dump of the kernel's BTF: the enumerator's value where there is
# one (an enum without a name on 6.12), else the bits before 6.9 (4 and 13).
why=$(bio_expected)
if [ -n "$why" ]; then
	skip "the request flags' bits: $why"
elif ! command -v bpftool >/dev/null; then
	skip "the request flags' bits: needs bpftool"
else
	bpftool btf dump file /sys/kernel/btf/vmlinux >"$T/btf.txt" 2>/dev/null
	want= unknown=
	for flag in FLUSH_SEQ IO_STAT; do
		bit=$(sed -n "s/^[[:space:]]*'__RQF_$flag' val=\([0-9]*\)$/\1/p" "$T/btf.txt" | head -n 1)
		[ -z "$bit" ] && ! grep -q "'__RQF_" "$T/btf.txt" && bit=$([ $flag = IO_STAT ] && echo 13 || echo 4)
		want+="RQF_$flag: bit $bit "
		[ -n "$bit" ] || unknown=${unknown:-__RQF_$flag}
	done
	IOLENS_BPF_DEBUG=1 "$IOLENS" stat -x --latency 0.1 1 2>"$T/bits.err" >/dev/null
	got=$(sed -n 's/^bio: \(RQF_[A-Z_]*: bit [0-9]*\) .*/\1/p' "$T/bits.err" | tr '\n' ' ')
	if [ -z "$unknown" ]; then
		check_eq "the request flags' bits, from the kernel's BTF (bpftool): $(sed -n 's/^bio: //p' "$T/bits.err" | tr '\n' ' ')" "$want" "$got"
	else
		# A flag the BTF does not give: no bit guessed, the latencies refused with the reason.
		check_eq "the request flags: none taken ($unknown is not in the kernel's BTF)" "" "$got"
		check_match "… said" "has request flags \\(__RQF_\\*\\) but not $unknown" "$(cat "$T/bits.err")"
	fi
fi
sloop=
if [ -n "$why" ]; then
	skip "a slow device: $why"
elif ! command -v fio >/dev/null; then
	skip "a slow device: needs fio"
else
	PIN=()
	if command -v taskset >/dev/null; then
		cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
		PIN=(taskset -c "$cpu")
	fi
	if slow_device "$T/slow" $((16 << 20)) "${PIN[@]}" -- --slow-op FUSE_READ:10; then
		sloop=$SLOW_LOOP slow_server=$SLOW_SERVER
	else
		skip "a slow device: $SLOW_WHY"
	fi
fi
if [ -n "$sloop" ]; then
	sdisk=${sloop#/dev/}
	disk=$sdisk # what lat reads
	command -v udevadm >/dev/null && udevadm settle 2>/dev/null
	kill -USR2 "$slow_server" # its reads 10 ms slower from here on
	FIO_PREFIX=("${PIN[@]}")
	command -v chrt >/dev/null && FIO_PREFIX+=(chrt -f 10)
	steal() { awk '$1 == "cpu" { print $9 }' /proc/stat; } # the ticks the host took from this machine's CPUs
	for try in 1 2 3; do
		steal0=$(steal)
		measure "$sdisk" "$sloop" 200 16M 4
		[ "$fio_rc" = 0 ] || break
		p50=$(lat r_p50_ns "$T/lat.csv" "$(echo $busy | cut -d' ' -f1)")
		stolen=$(($(steal) - steal0))
		[ "$p50" != null ] && { [ "$p50" -le 11000000 ] || [ "$stolen" = 0 ]; } && break
		echo "# slow device, try $try: the requests' p50 $p50 ns (10 ms asked, 11 at most), $stolen ticks stolen: a machine late to give CPU$([ $try = 3 ] || echo ", again")"
	done
	check_eq "slow device: fio ran ($(head -c 300 "$T/fio.err"))" 0 "$fio_rc"
	check_eq "… one line holds the whole run" 1 "$(wc -w <<<"$busy")"
	line=$(echo $busy | cut -d' ' -f1)
	check_eq "… /proc/diskstats counts fio's 200 reads" 200 $((d1 - d0))
	n=$(lat r_lat_count "$T/lat.csv" "$line")
	check "… the histogram's ($n): those, but for at most 0.5 % missed" python3 -c "import sys; sys.exit(not 199 <= $n <= 200)"
	ours=$(lat r_p50_ns "$T/lat.csv" "$line") theirs=$(fio_clat "$T/fio.json" 50.000000)
	echo "# slow device p50: stat -x $ours ns, fio clat $theirs ns"
	check "… r_p50_ns ($ours) within 5 % of fio's clat p50 ($theirs)" \
		python3 -c "import sys; sys.exit(not 0.95 * $theirs <= $ours <= 1.05 * $theirs)"
	check "… and above 10 ms: the requests are the slow ones" test "$ours" -ge 10000000
	latency_checks "$line" "$(dev_of "$sloop")"
	ours=$(lat r_p99_ns "$T/lat.csv" "$line") theirs=$(fio_clat "$T/fio.json" 99.000000)
	echo "# slow device p99: stat -x $ours ns, fio clat $theirs ns"
	check "… r_p99_ns ($ours) within 10 % of fio's clat p99 ($theirs)" \
		python3 -c "import sys; sys.exit(not 0.9 * $theirs <= $ours <= 1.1 * $theirs)"
	kill -USR2 "$slow_server"
fi

# ---- Without eBPF: unknown, said once; diskstats' averages stay -----------------------------------
if is_root && command -v setpriv >/dev/null; then
	"${AS_NOBODY[@]}" "$IOLENS" stat --json -x --latency --no-boot-sample 0.1 2 >"$T/nobody.json" 2>"$T/nobody.err"
	check_eq "as nobody: exit 0" 0 $?
	ERR=$(cat "$T/nobody.err")
	check_match "… one line says there are no percentiles, and why" \
		"^iolens stat: -x: no latency percentiles: (eBPF needs root or CAP_BPF\+CAP_PERFMON|.*Linux 5.12.*)$" "$ERR"
	check_eq "… that line alone" 1 "$(grep -c . <<<"$ERR")"
	check_eq "… within 100 characters" "" "$(awk 'length($0) > 100' <<<"$ERR")"
	# (The first reason: a kernel before the block programs, else that nobody cannot load eBPF.)
	reason='iolens stat: eBPF: loading a program needs root, or CAP_BPF and CAP_PERFMON'
	bio_too_old && reason="iolens stat: -x: no latency percentiles: this kernel .*$BIO_TOO_OLD_SAYS"
	"${AS_NOBODY[@]}" "$IOLENS" stat -x --latency --no-boot-sample --verbose 0.1 1 >"$T/nobody.txt" 2>"$T/nobody.err"
	check_match "--verbose: the whole reason" "^$reason" "$(cat "$T/nobody.err")"
	check_match "… the table has iostat's columns, ending with %util" "^Device +r/s .* %util$" "$(sed -n 1p "$T/nobody.txt")"
	check_no_match "… and no percentile column" "p50|p99|max" "$(cat "$T/nobody.txt")"
	check_eq "… null in JSON, r_await known" "None None True" "$(python3 -c 'import json, sys
d = [v for k, v in json.loads(open(sys.argv[1]).readline()).items() if k.startswith("dskext_")][0]
print(d["r_p50_ns"], d["w_max_ns"], d["r_await_ns"] is not None)' "$T/nobody.json")"
else
	skip "without eBPF: needs root to run stat as nobody (setpriv)"
fi
FIX=$TOP/tests/fixtures/stat
run env IOLENS_REPLAY="$FIX/vm1" "$IOLENS" stat --json -x --latency 1 2
check_match "a recording: unknown, as it has no kernel to trace" \
	"^iolens stat: -x: no latency percentiles: a recording has no kernel to trace$" "$ERR"
check_match "… null in its JSON" '"r_p50_ns":null' "$OUT"
run "$IOLENS" stat --sysroot "$FIX/vm1/0" -x --latency 1 1
check_match "--sysroot: the same" "^iolens stat: -x: no latency percentiles: --sysroot's tree has no kernel to trace$" "$ERR"


# ---- -x without --latency: iostat's columns, no eBPF loaded -----------------------------------------
# The kernel's own account (strace of the bpf() system call): -x alone makes none; --latency, where
# eBPF loads, makes them (so the count would see a program loaded).
if ! command -v strace >/dev/null; then
	skip "-x alone loads no eBPF: needs strace"
else
	# (LeakSanitizer cannot run under ptrace: off for the traced runs of a sanitized build.)
	nolsan=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	ASAN_OPTIONS=$nolsan strace -f -qq -e trace=bpf -o "$T/x.strace" "$IOLENS" stat --json -x 0.1 2 >"$T/x.json" 2>"$T/x.err"
	check_eq "-x alone: exit 0, no bpf() system call (strace), nothing on stderr" "0 0 " \
		"$? $(grep -c 'bpf(' "$T/x.strace") $(cat "$T/x.err")"
	check_eq "… its percentiles null in JSON, r_await known" "None None True" "$(python3 -c 'import json, sys
d = [v for k, v in json.loads(open(sys.argv[1]).readlines()[-1]).items() if k.startswith("dskext_")][0]
print(d["r_p50_ns"], d["w_max_ns"], d["r_await_ns"] is not None)' "$T/x.json")"
	run "$IOLENS" stat -x --no-boot-sample 0.1 1
	check_match "… the table: iostat -x's columns alone, ending with %util" "^Device +r/s .* %util$" "$(sed -n 1p <<<"$OUT")"
	if [ -z "$why" ]; then
		ASAN_OPTIONS=$nolsan strace -f -qq -e trace=bpf -o "$T/latency.strace" "$IOLENS" stat -x --latency 0.1 2 >/dev/null 2>&1
		check "-x --latency: bpf() system calls, the program loaded (strace)" grep -q 'BPF_PROG_LOAD' "$T/latency.strace"
	else
		skip "-x --latency's bpf() calls: $why"
	fi
fi
if is_root && command -v setpriv >/dev/null; then
	"${AS_NOBODY[@]}" "$IOLENS" stat -x --no-boot-sample 0.1 1 >/dev/null 2>"$T/nobody.err"
	check_eq "-x alone as nobody: exit 0, nothing said of eBPF" "0 " "$? $(cat "$T/nobody.err")"
fi

echo "1..$t_count"
