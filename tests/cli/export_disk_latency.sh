#!/usr/bin/env bash
# export_disk_latency.sh: iolens export's disk latency histograms (disklatency collector, eBPF): counts held to /proc/diskstats for the reads and writes fio makes on a loop device, sums to diskstats' time (what each covers, the difference held to the tracer's completion-to-accounting time), device + queue = total, the reads' median to an independent tracer's (bpftrace on the same tracepoints, lib.sh); without eBPF, said and left out.
. "$(dirname "$0")/lib.sh"

# sample NAME LABELS <<<TEXT: the value of one sample ("" when absent). LABELS as printed: {a="b",...}
sample() { awk -v key="$1$2" '$1 == key { print $2; found = 1; exit } END { if (!found) print "" }'; }
# scrape PORT: the metrics, or nothing.
scrape() { curl -s --max-time 10 "http://127.0.0.1:$1/metrics"; }
serving() { scrape "$1" | grep -q '^iolens_build_info'; }
# buckets_ok FAMILY LABELS TEXT: the _bucket lines of one series never go down, and +Inf is _count.
buckets_ok() { awk -v f="$1_bucket" -v l="${2%\}}" -v c="$(sample "$1_count" "$2" <<<"$3")" '
	index($1, f l ",le=") == 1 { if ($2 + 0 < last) bad = 1; last = $2 + 0; n++; inf = $2 }
	END { exit !(n == 23 && !bad && inf == c && c != "") }' <<<"$3"; }

port=$(free_port)
why=$(bio_expected)
loopdev=
if [ -n "$why" ]; then
	skip "disk latency histograms: $why"
elif ! command -v fio >/dev/null || ! command -v losetup >/dev/null || ! command -v curl >/dev/null; then
	skip "disk latency histograms: needs fio, losetup and curl"
else
	make_file "$T/lat.img" $((32 << 20))
	sync "$T/lat.img"
	loopdev=$(losetup -f --show "$T/lat.img" 2>"$T/losetup.err") || { skip "losetup: $(head -1 "$T/losetup.err")"; loopdev=; }
fi
if [ -n "$loopdev" ]; then
	on_exit "loop_release $loopdev $T/lat.img"
	losetup --direct-io=on "$loopdev" 2>/dev/null
	disk=${loopdev#/dev/}
	command -v udevadm >/dev/null && udevadm settle 2>/dev/null
	# The block tracer (lib.sh) times the same reads, the truth of their median below; started
	# first, its program runs before the exporter's at each completion, not between the exporter's
	# end of a read and /proc/diskstats' (its time summed below).
	block_tracer_start lat "$(dev_of "$loopdev")"
	"$IOLENS" export --listen "127.0.0.1:$port" --collector.disable-defaults --collector.disklatency \
		--collector.diskstats.device-include "^$disk\$" 2>"$T/export.err" &
	exporter=$!
	on_exit "kill $exporter 2>/dev/null"
	wait_until serving "$port"
	# Counting began before the exporter answered: everything from here on is in its histograms.
	r0=$(diskstats_sum "$disk" 4) w0=$(diskstats_sum "$disk" 8) rt0=$(diskstats_sum "$disk" 7)
	R="{device=\"$disk\",op=\"read\"}" W="{device=\"$disk\",op=\"write\"}"
	# The reads again (three runs at most, the counts over all of them) when fewer than 99.5 % were
	# counted: a burst of completions the kernel ran no eBPF program for (lib.sh, all_but_missed).
	for try in 1 2 3; do
		fio --name=r --filename="$loopdev" --rw=randread --bs=4k --direct=1 --ioengine=psync --number_ios=3000 \
			--size=32M --randrepeat=0 --output-format=json >"$T/fio_r.json" 2>"$T/fio.err"
		fio_r=$?
		r1=$(diskstats_sum "$disk" 4)
		reads=$(scrape "$port" | sample iolens_disk_request_duration_seconds_count "$R")
		[ "$fio_r" = 0 ] && ! all_but_missed $((r1 - r0)) "$reads" && [ $try != 3 ] || break
		echo "# try $try: $reads reads counted of /proc/diskstats's $((r1 - r0)): fio's reads again"
	done
	# O_DSYNC: each write with FUA, which the loop device (no FUA) runs as a flush sequence: the write
	# completes, then ends again with the sequence; counted once, as /proc/diskstats counts it.
	fio --name=w --filename="$loopdev" --rw=randwrite --bs=4k --direct=1 --sync=dsync --ioengine=psync --number_ios=500 \
		--size=32M --randrepeat=0 --output-format=json >"$T/fio_w.json" 2>>"$T/fio.err"
	fio_w=$?
	r1=$(diskstats_sum "$disk" 4) w1=$(diskstats_sum "$disk" 8) rt1=$(diskstats_sum "$disk" 7)
	OUT=$(scrape "$port")
	block_tracer_stop
	seen_r="" seen_w=""
	if [ -n "$TRACE" ]; then
		seen_r=$(python3 "$BLOCK_LATENCY" count "$TRACE" --dev "$(dev_of "$loopdev")" --op R)
		seen_w=$(python3 "$BLOCK_LATENCY" count "$TRACE" --dev "$(dev_of "$loopdev")" --op W)
	fi
	check_eq "fio ran ($(head -c 300 "$T/fio.err"))" "0 0" "$fio_r $fio_w"
	check_eq "no warning when eBPF runs" "" "$(cat "$T/export.err" | grep -v serving)"
	reads=$(sample iolens_disk_request_duration_seconds_count "$R" <<<"$OUT")
	writes=$(sample iolens_disk_request_duration_seconds_count "$W" <<<"$OUT")
	# The truth: the kernel's own count of requests completed on the device over the same span, but
	# for the completions it ran no eBPF program for (lib.sh, all_but_missed): at most 0.5 % fewer,
	# or as many as the block tracer saw of them (all_the_tracer_saw).
	check "reads counted: /proc/diskstats's $((r1 - r0)), or 0.5 % fewer, or the tracer's ${seen_r:-(none)} at least ($reads; fio made 3000 a run)" \
		eval 'all_but_missed "$((r1 - r0))" "$reads" || all_the_tracer_saw "$((r1 - r0))" "$reads" "$seen_r"'
	check "writes counted: /proc/diskstats's $((w1 - w0)), or 0.5 % fewer, or the tracer's ${seen_w:-(none)} at least ($writes; fio made 500)" \
		eval 'all_but_missed "$((w1 - w0))" "$writes" || all_the_tracer_saw "$((w1 - w0))" "$writes" "$seen_w"'
	for f in request device queue; do
		check "iolens_disk_${f}_duration_seconds, reads: 22 bounds and +Inf, never going down, +Inf = _count" \
			buckets_ok "iolens_disk_${f}_duration_seconds" "$R" "$OUT"
		check "… writes too" buckets_ok "iolens_disk_${f}_duration_seconds" "$W" "$OUT"
	done
	check_match "a histogram family, with HELP" "# TYPE iolens_disk_request_duration_seconds histogram" "$OUT"
	# Each request's time from its start is its queue time and then its device time: sums agree.
	total=$(sample iolens_disk_request_duration_seconds_sum "$R" <<<"$OUT")
	dev=$(sample iolens_disk_device_duration_seconds_sum "$R" <<<"$OUT")
	queue=$(sample iolens_disk_queue_duration_seconds_sum "$R" <<<"$OUT")
	check "request time = device time + queue time, summed over the reads ($total = $dev + $queue)" \
		awk -v t="$total" -v d="$dev" -v q="$queue" 'BEGIN { x = t - d - q; exit !(t > 0 && x * x < 1e-12 * t * t + 1e-18) }'
	# What each sum covers: both count a read from the kernel's start time (start_time_ns); ours ends
	# at block_rq_complete (blk_update_request: the driver says it is done), /proc/diskstats' at its
	# accounting (blk_account_io_done, its clock read after the bios' completion: for a read, the
	# reader woken), later. So ours is at most diskstats' (a millisecond for its rounding: both
	# deltas of whole ms), and diskstats' at most ours and the time from completion to accounting
	# that the block tracer measured for the same reads (block_io_done, Linux 6.5), whose clock reads
	# come after the kernel's at both ends; the difference is that time. Judged when every read's
	# completion ran the programs: those the kernel ran none for (lib.sh, all_but_missed) are in
	# diskstats' time alone, of a length no program saw.
	check "reads' summed time at most /proc/diskstats' ($total s, $((rt1 - rt0)) ms)" \
		awk -v s="$total" -v ms="$((rt1 - rt0))" 'BEGIN { exit !(s > 0 && s * 1000 <= ms + 1) }'
	done_ns=""
	[ -z "$TRACE" ] || read -r done_ns done_n < <(python3 "$BLOCK_LATENCY" done "$TRACE" --dev "$(dev_of "$loopdev")" --op R)
	if [ -z "$TRACE" ]; then
		skip "diskstats' read time held to ours and the tracer's completion to accounting: $BLOCK_TRACER_WHY"
	elif [ -z "$done_ns" ]; then
		skip "diskstats' read time held to ours and the tracer's completion to accounting: no block_io_done before Linux 6.5"
	elif [ "$reads" != $((r1 - r0)) ] || [ "$done_n" != "$reads" ]; then
		skip "diskstats' read time held to ours and the tracer's completion to accounting: of diskstats' $((r1 - r0)) reads, $reads completions ran our programs, $done_n the tracer's: those missed are in diskstats' time alone"
	else
		echo "# reads: ours $total s, diskstats' $((rt1 - rt0)) ms, the tracer's completion to accounting $done_ns ns over $done_n"
		check "/proc/diskstats' read time at most ours and the tracer's completion to accounting ($((rt1 - rt0)) ms <= $total s + $done_ns ns)" \
			awk -v s="$total" -v ms="$((rt1 - rt0))" -v d="$done_ns" 'BEGIN { exit !(ms <= (s + d / 1e9) * 1000 + 1) }'
	fi
	# The histogram's median: in a bucket that holds a value the block tracer's spans of the same
	# reads bound it to (block_latency.py range: start to completion, from below and from above,
	# the ranks the two may differ by, 3 us either side). Not fio's completion latency, which holds
	# its system call and wake-up.
	if [ -z "$TRACE" ]; then
		skip "the reads' median held to the block tracer's: $BLOCK_TRACER_WHY"
	else
		read -r median_low median_high < <(python3 "$BLOCK_LATENCY" range "$TRACE" --dev "$(dev_of "$loopdev")" --count "$reads")
		check "the reads' median in a bucket between the block tracer's bounds of it ($median_low .. $median_high ns)" \
			awk -v lo="$median_low" -v hi="$median_high" -v n="$reads" '
			index($1, "iolens_disk_request_duration_seconds_bucket{device=\"'"$disk"'\",op=\"read\",le=") == 1 && !done {
				le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le)
				if ($2 + 0 >= int((n + 1) / 2)) { done = 1; ok = (le == "+Inf" || le * 1e9 >= lo) && prev * 1e9 < hi }
				prev = le }
			END { exit !ok }' <<<"$OUT"
	fi
	if command -v promtool >/dev/null; then
		check_eq "promtool check metrics accepts it" "" "$(promtool check metrics <<<"$OUT" 2>&1)"
	else
		skip "promtool is not installed (make test-deps: prometheus)"
	fi

	# ---- Protobuf, as a scraper that wants native histograms asks for it -------------------------------
	PB='application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3'
	curl -s --max-time 10 -H "Accept: $PB" -D "$T/pb.headers" "http://127.0.0.1:$port/metrics" >"$T/metrics.pb"
	check_match "Accept protobuf (delimited MetricFamily): answered in it" \
		"Content-Type: application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited" \
		"$(cat "$T/pb.headers")"
	check_match "… every family, histograms as such (type 4)" "iolens_disk_queue_duration_seconds:4" \
		"$(python3 "$TOP/tests/cli/prom_protobuf.py" families <"$T/metrics.pb")"
	# The same histogram as the text's (read again: the scrapes are apart, the loop device idle since).
	OUT=$(scrape "$port")
	classic=$(awk -v f="iolens_disk_request_duration_seconds_bucket{device=\"$disk\",op=\"read\",le=" '
		index($1, f) == 1 && $1 !~ /Inf/ { le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le); s = s (s ? "," : "") le ":" $2 }
		END { print s }' <<<"$OUT")
	read -r labels pcount pclassic pnative low high whole < <(python3 "$TOP/tests/cli/prom_protobuf.py" histograms \
		iolens_disk_request_duration_seconds <"$T/metrics.pb" | grep "^device=$disk,op=read ")
	reads=$(sample iolens_disk_request_duration_seconds_count "$R" <<<"$OUT")
	check_eq "protobuf: the reads' sample_count is the text's _count" "$reads" "$pcount"
	check_eq "… its classic buckets the text's" "$classic" "$pclassic"
	check_eq "… its native buckets (schema 6, zero bucket and spans of deltas) add up to it" "$reads deltas-ok" "$pnative $whole"
	# Native bucket i holds (2^((i-1)/64), 2^(i/64)] s: from about 50 us to 10 ms here.
	check "… native indexes where 5 us .. 20 s fall ($low .. $high)" \
		awk -v l="$low" -v h="$high" 'BEGIN { exit !(l != "none" && l >= -1127 && h <= 277 && l <= h) }'
	if command -v prometheus >/dev/null; then
		# A real Prometheus with native histograms on scrapes it, and takes the median from them.
		pport=$(free_port)
		cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: iolens
    static_configs:
      - targets: ['127.0.0.1:$port']
YML
		prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" --enable-feature=native-histograms \
			--web.listen-address="127.0.0.1:$pport" >"$T/prometheus.log" 2>&1 &
		prom=$!
		on_exit "kill $prom 2>/dev/null; wait $prom 2>/dev/null"
		query() { curl -s --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" | python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "none")' 2>/dev/null; }
		sel="{device=\"$disk\",op=\"read\"}"
		counted() { [ "$(query "histogram_count(iolens_disk_request_duration_seconds$sel)")" = "$reads" ]; }
		wait_until counted
		check_eq "Prometheus (native histograms): histogram_count is the _count" "$reads" \
			"$(query "histogram_count(iolens_disk_request_duration_seconds$sel)")"
		p50=$(query "histogram_quantile(0.5, iolens_disk_request_duration_seconds$sel)")
		# The classic bucket the median falls in, from the text: the native one is within it.
		bounds=$(tr ',' '\n' <<<"$classic" | awk -F: -v n="$reads" 'BEGIN { lo = 0 } $2 + 0 >= n / 2 { print lo, $1; exit } { lo = $1 }')
		check "… histogram_quantile(0.5) of the native histogram ($p50 s) within the classic bucket of the median ($bounds)" \
			awk -v p="$p50" -v b="$bounds" 'BEGIN { split(b, x, " "); exit !(p != "none" && p + 0 >= x[1] * 0.98 && p + 0 <= x[2] * 1.02) }'
		if [ -n "$TRACE" ]; then
			# Its native buckets are 2^(1/64) wide (schema 6): a bucket either side of the bounds.
			check "… and between the block tracer's bounds of the reads' median ($median_low .. $median_high ns), but for a native bucket either side" \
				awk -v p="$p50" -v lo="$median_low" -v hi="$median_high" 'BEGIN { w = 2 ^ (1 / 64); exit !(p != "none" && p * 1e9 >= lo / w && p * 1e9 <= hi * w) }'
		else
			skip "the native histogram's median held to the block tracer's: $BLOCK_TRACER_WHY"
		fi
		kill "$prom"; wait "$prom" 2>/dev/null
	else
		skip "Prometheus with native histograms: not installed (make test-deps: prometheus)"
	fi
	kill "$exporter"; wait "$exporter" 2>/dev/null
fi

# ---- Where nothing is counted: --once, the collector off, no eBPF ---------------------------------------
OUT=$("$IOLENS" export --once --collector.disable-defaults --collector.disklatency 2>"$T/once.err")
check_no_match "--once: no latencies (none were counted before it)" "duration_seconds" "$OUT"
check_eq "… and nothing said about it" "" "$(cat "$T/once.err")"
if is_root && command -v curl >/dev/null; then
	# As nobody, loading eBPF is refused: the exporter says so once and serves the rest.
	nport=$(free_port)
	"${AS_NOBODY[@]}" "$IOLENS" export --listen "127.0.0.1:$nport" --collector.disable-defaults --collector.disklatency \
		--collector.diskstats 2>"$T/nobody.err" &
	nobody=$!
	on_exit "kill $nobody 2>/dev/null"
	wait_until serving "$nport"
	OUT=$(scrape "$nport")
	check_match "not root: eBPF's refusal said, once, the histograms named" \
		"^iolens export: no eBPF \(.*\): disk latency histograms left out$" \
		"$(cat "$T/nobody.err")"
	check_no_match "… no latency histogram" "duration_seconds" "$OUT"
	check_match "… diskstats still served" "^iolens_disk_reads_completed_total" "$OUT"
	kill "$nobody"; wait "$nobody" 2>/dev/null
	# Turned off: not loaded, so nothing to refuse or say.
	"${AS_NOBODY[@]}" "$IOLENS" export --listen "127.0.0.1:$nport" --no-collector.disklatency 2>"$T/off.err" &
	off=$!
	on_exit "kill $off 2>/dev/null"
	wait_until serving "$nport"
	check_no_match "--no-collector.disklatency: not loaded, nothing said" "disk latency" "$(cat "$T/off.err")"
	kill "$off"; wait "$off" 2>/dev/null
else
	skip "the refusal of eBPF as nobody: needs root (to become nobody) and curl"
fi
echo "1..$t_count"
