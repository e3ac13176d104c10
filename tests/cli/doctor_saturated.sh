#!/usr/bin/env bash
# doctor_saturated.sh: doctor's rule saturated (with each way this kernel lets it see block requests' submitters) on a loop device over a slow FUSE file served one read at a time (over the disk without FUSE): fio at queue depth 128 makes its queue stand and its latency rise above the QD1 latency of the capacity bench saved for it: found, naming fio, its low-load latency the capacity file's; the same disk at QD1 and a light rate: not found; the recording judged again the same.
. "$(dirname "$0")/lib.sh"

is_root || skip_all "a loop device needs root"
command -v fio >/dev/null && command -v losetup >/dev/null || skip_all "needs fio and losetup"
why=$(ebpf_expected)
[ -z "$why" ] || skip_all "the percentiles and requests per process need eBPF: $why"
case "$(fs_type "$T")" in
tmpfs|ramfs) skip_all "the scratch directory is on $(fs_type "$T"): a loop device over it has no disk below" ;;
esac

# The disk: a loop device over a file of examples/fuse-passthrough serving one request at a time,
# each read 2 ms longer (--single-thread, --slow-op FUSE_READ:2): a device that does one thing at
# a time, as a disk's head, whose requests wait for each other at depth whatever the CPUs do. Where
# FUSE is missing, a loop device over the disk under $T: fio must outrun that disk, which a busy
# machine may not let it do (an ASan run once queued 30 requests at 1.74 times the QD1 latency).
loopdev=""
if slow_device "$T/slow" $((32 << 20)) --single-thread --slow-op FUSE_READ:2; then
	loopdev=$SLOW_LOOP
	kill -USR2 "$SLOW_SERVER" # its reads 2 ms slower from here on
	echo "# $loopdev: a file of a FUSE server that reads one request at a time, 2 ms each"
else
	echo "# no slow device ($SLOW_WHY): a loop device over the disk"
fi
if [ -z "$loopdev" ]; then
	# A loop device whose requests go to the disk under $T (direct I/O where the file system allows it).
	make_file "$T/sat.img" $((128 << 20))
	sync "$T/sat.img"
	loopdev=$(losetup -f --show "$T/sat.img" 2>"$T/losetup.err") || skip_all "losetup: $(head -1 "$T/losetup.err")"
	on_exit "loop_release $loopdev $T/sat.img"
	losetup --direct-io=on "$loopdev" 2>/dev/null || echo "# $loopdev reads its file through the page cache"
fi
disk=${loopdev#/dev/}
command -v udevadm >/dev/null && udevadm settle 2>/dev/null
export IOLENS_CAPACITY_DIR=$T/capacity # bench's; doctor is given --capacity-dir at QD128, the variable at QD1

# The disk's capacity, measured here and now: its QD1 latency is what "low load" means.
run "$IOLENS" bench --profile --force --save-capacity --size 4m --runtime 30 --repeat 1 --json "$loopdev"
check_eq "bench --profile --save-capacity on $loopdev ($(head -c 200 <<<"$ERR"))" 0 "$RC"
qd1=$(python3 -c 'import json, sys
print([p for p in json.loads(sys.stdin.read())["points"] if p["case"] == "rnd4k_q1t1_read"][0]["lat_ns"]["p50"])' <<<"$OUT")
echo "# QD1 random read p50 of $disk: $qd1 ns"

# field JSON KEY: data[KEY] of the saturated finding of this disk ("absent" when none).
field() { python3 "$TOP/tests/cli/doctor_query.py" get saturated "$2" device "$disk" <<<"$1"; }
reads_of() { diskstats_sum "$disk" 4; }
# fio_load ARGS...: fio reading the loop device until killed, under way (100 reads done).
fio_load() {
	fio --name=load --filename="$loopdev" --readonly --rw=randread --bs=4k --direct=1 --randrepeat=0 \
		--time_based --runtime=300 --output=/dev/null "$@" &
	FIO=$!
	on_exit "kill $FIO 2>/dev/null"
	local r0
	r0=$(reads_of)
	reading() { [ "$(reads_of)" -ge $((r0 + 100)) ]; }
	wait_until reading
}
stop_fio() { kill "$FIO" 2>/dev/null; wait "$FIO" 2>/dev/null; }

# ---- Saturated: 128 requests in flight ----------------------------------------------------------
# Doctor watches once with each way this kernel lets it see the submitters (lib.sh,
# bio_mechanisms), one after the other while fio runs, each held to the same truths.
MECHS=($(bio_mechanisms))
fio_load --ioengine=libaio --iodepth=128
jobs_of_fio="$FIO $(children_of "$FIO" | tr '\n' ' ')"
# The queue stands at once; the latency rise is the disk's: a run where the machine held fio back
# (too few requests in flight) is tried again, three times at most.
for m in "${MECHS[@]}"; do
	for try in 1 2 3; do
		run env IOLENS_BIO_MECHANISM=$m "$IOLENS" doctor --json --record "$T/sat.$m.snapshot" --capacity-dir "$T/capacity" 3
		[ "$(field "$OUT" device)" = "$disk" ] && break
		echo "# $m: try $try: not found ($(python3 "$TOP/tests/cli/doctor_query.py" rules <<<"$OUT"))"
	done
	printf '%s\n' "$OUT" >"$T/sat.$m.json"
	printf '%s\n' "$RC" >"$T/sat.$m.rc"
	printf '%s\n' "$ERR" >"$T/sat.$m.err"
done
stop_fio
# conditions SNAPSHOT: what the recording says of the disk's second half: "aqu-sz p50_ns qd1_ns" (the rule's inputs).
conditions() { python3 - "$1" "$disk" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1])]
at = [i for i, l in enumerate(lines) if l[:2] == ["disk", sys.argv[2]]][0]
block = []
for l in lines[at + 1:]:
    if l[0] not in ("disk_sample", "disk_latency", "disk_capacity"):
        break
    block.append(l)
sample = {l[1]: l for l in block if l[0] == "disk_sample"}
mid, end = int(sample["mid"][13]), int(sample["end"][13]) # time_in_queue, ms
seconds = [float(l[1]) - float(l[2]) for l in lines if l[0] == "disk_seconds"][0]
latency = [float(l[3]) for l in block if l[:2] == ["disk_latency", "second"]]
qd1 = [float(l[1]) for l in block if l[0] == "disk_capacity"]
print("%.2f %s %s" % ((end - mid) / 1000 / seconds, latency[0] if latency else "-", qd1[0] if qd1 else "-"))
PY
}
judged=""
for m in "${MECHS[@]}"; do
	OUT=$(cat "$T/sat.$m.json") RC=$(cat "$T/sat.$m.rc")
	if [ "$(field "$OUT" device)" != "$disk" ] && [ -s "$T/sat.$m.snapshot" ]; then
		read -r aqu p50 low < <(conditions "$T/sat.$m.snapshot")
		# Held to the rule's conditions, not to a speed: fio held back by a busy machine may not queue.
		if ! python3 -c 'import sys; a, p, l = sys.argv[1:]; sys.exit(not (float(a) >= 2 and p != "-" and l != "-" and float(p) >= 2 * float(l)))' \
			"$aqu" "$p50" "$low"; then
			skip "[$m] fio could not saturate $disk on this machine now (aqu-sz $aqu, p50 $p50 ns against QD1 $low ns): the rule's conditions unmet, not judged"
			run "$IOLENS" doctor --replay "$T/sat.$m.snapshot" --json
			check_eq "[$m] … and doctor, judging that recording, finds no saturation of it" absent "$(field "$OUT" device)"
			continue
		fi
	fi
	judged=$m
	check_eq "[$m] fio at QD128 on $disk: saturated found" "$disk" "$(field "$OUT" device)"
	check "[$m] … a warning or worse (exit $RC)" test "$RC" -ge 3
	check_match "[$m] … bio_mode ebpf" '"bio_mode": "ebpf"' "$OUT"
	check_match "[$m] … bio_mechanism: the tracepoint it saw the requests' processes at" '"bio_mechanism": "'"$m"'"' "$OUT"
	grep -E 'block_getrq|block I/O|disk latencies|no eBPF' "$T/sat.$m.err" >"$T/sat.$m.bio-err"
	check "[$m] … no word on stderr of eBPF but what it says once of this kernel" bio_quiet "$m" "$T/sat.$m.bio-err"
	check_eq "[$m] … the low-load latency is the capacity file's QD1 read p50" "capacity $qd1" \
		"$(field "$OUT" low_load_source) $(python3 -c 'import sys; print(round(float(sys.argv[1])))' "$(field "$OUT" low_load_ns)")"
	check "[$m] … the latency ($(field "$OUT" latency_ns) ns) is twice it or more, as the rule asks" python3 -c '
import sys; sys.exit(not float(sys.argv[1]) >= 2 * float(sys.argv[2]))' "$(field "$OUT" latency_ns)" "$qd1"
	check "[$m] … the queue: aqu-sz $(field "$OUT" aqu_sz_second_half) in the second half, 2 or more (standing), or waiting" \
		python3 -c 'import sys; sys.exit(not (sys.argv[1] == "waiting" or float(sys.argv[2]) >= 2 or sys.argv[1] == "rising"))' \
		"$(field "$OUT" queue)" "$(field "$OUT" aqu_sz_second_half)"
	check_eq "[$m] … by eBPF: percentiles, p50 <= p99, device and queue time known" ok "$(python3 -c '
import json, sys
d = [f["data"] for f in json.load(open(sys.argv[1]))["findings"] if f["rule"] == "saturated" and f["data"]["device"] == sys.argv[2]][0]
ok = d["latency_source"] == "ebpf" and 0 < d["p50_ns"] <= d["p99_ns"] and d["device_p50_ns"] > 0 and d["queue_p50_ns"] is not None and d["requests"] >= 20
print("ok" if ok else d)' "$T/sat.$m.json" "$disk")"
	# Its requests are those on this disk (eBPF counts them per process and disk): no more than the
	# disk's own (diskstats, the same window: 10 % and 10 requests for the moments apart), half or
	# more of them (fio makes nearly all).
	process=$(python3 -c '
import json, sys
d = [f["data"] for f in json.load(open(sys.argv[1]))["findings"] if f["rule"] == "saturated" and f["data"]["device"] == sys.argv[2]][0]
p = d["process"]
print(p["comm"], p["pid"], p["by"], 0.5 * d["requests"] <= p["requests"] <= 1.1 * d["requests"] + 10, 0 < p["p50_ns"] <= p["p99_ns"],
      p["requests"], d["requests"])' "$T/sat.$m.json" "$disk")
	check_match "[$m] … the process whose I/O suffers: fio, one of its processes ($jobs_of_fio), by eBPF, its requests on $disk alone, its own p50 <= p99 ($process)" \
		"^fio ($(tr ' ' '|' <<<"${jobs_of_fio% }")) ebpf True True " "$process"
	check_match "[$m] … the capacity share is given" "[0-9]" "$(field "$OUT" capacity_pct)"
	run "$IOLENS" doctor --replay "$T/sat.$m.snapshot" --json
	check_eq "[$m] the recording judged again: the same finding, the same numbers" \
		"$(python3 "$TOP/tests/cli/doctor_query.py" get saturated numbers device "$disk" <"$T/sat.$m.json")" \
		"$(field "$OUT" numbers)"
	check_eq "[$m] … and the same bio_mode and bio_mechanism" "$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["bio_mode"], d["bio_mechanism"])' "$T/sat.$m.json")" \
		"$(python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(d["bio_mode"], d["bio_mechanism"])' "$OUT")"
	run "$IOLENS" doctor --replay "$T/sat.$m.snapshot"
	check_match "[$m] … as text: the disk, the median against low load, the percentiles" \
		"disk $disk is saturated: .* a request takes [0-9.]+ ms at the median, [0-9.]+x what it takes at low load" "$OUT"
	check_match "[$m] … with device and queue time, and fio" "p50 [0-9.]+ ms, p99 [0-9.]+ ms \(device time .*queue time .*fio \([0-9]+\) made the most block requests" "$OUT"
done
[ -n "$judged" ] || { echo "1..$t_count"; exit 0; }
cp "$T/sat.$judged.snapshot" "$T/sat.snapshot"

# Without eBPF (the recording without its latencies and requests per process): diskstats' averages, said as such.
grep -v -E '^(disk_latency|bio_proc) ' "$T/sat.snapshot" | sed 's/^bio_known 1$/bio_known 0/' >"$T/noebpf.snapshot"
run "$IOLENS" doctor --replay "$T/noebpf.snapshot" --json
check_eq "without eBPF: bio_mode procfs, no bio_mechanism" "procfs None" "$(python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(d["bio_mode"], d["bio_mechanism"])' "$OUT")"
check_eq "without eBPF: found from /proc/diskstats' await against the capacity's QD1 p50" "$disk diskstats capacity" \
	"$(field "$OUT" device) $(field "$OUT" latency_source) $(field "$OUT" low_load_source)"
check_match "… said as such, the process by /proc/PID/io" "averages: no eBPF, no percentiles.*/proc/PID/io" "$(field "$OUT" numbers)"

# ---- Not saturated: one read at a time, 100 a second ---------------------------------------------
fio_load --ioengine=psync --rate_iops=100
run "$IOLENS" doctor --json 3
stop_fio
check_eq "fio at QD1, 100 reads a second on $disk: not saturated" absent "$(field "$OUT" device)"
reads=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["seconds"])' <<<"$OUT")
check "… the doctor watched ($reads s)" test -n "$reads"

# ---- A load made by kernel threads: who made it is named, not a bystander ----------------------
# A loop device (upper) over the queued device (lib.sh): fio reads upper at depth 64, and upper's
# workers, kernel threads, make every request on the queued device; a process of the test's makes
# a few O_DIRECT reads of the queued device beside them, one every 0.2 s.
if queued_device; then
	qdisk=${QUEUED_LOOP#/dev/}
	upper=$(losetup -f --show --direct-io=on "$QUEUED_LOOP" 2>"$T/upper.err")
	if [ -n "$upper" ]; then
		on_exit "loop_release $upper $QUEUED_LOOP"
		fio --name=upper --filename="$upper" --readonly --rw=randread --bs=4k --direct=1 --ioengine=libaio \
			--iodepth=64 --randrepeat=0 --time_based --runtime=300 --output=/dev/null &
		UPPER_FIO=$!
		on_exit "kill $UPPER_FIO 2>/dev/null"
		r0=$(diskstats_sum "$qdisk" 4)
		upper_reading() { [ "$(diskstats_sum "$qdisk" 4)" -ge $((r0 + 100)) ]; }
		wait_until upper_reading
		"$IOLENS" doctor --json --record "$T/kernel.snapshot" 3 >"$T/kernel.json" 2>"$T/kernel.err" &
		doctor=$!
		# (one read every 0.2 s while doctor runs, whenever its watch began: a dozen or so)
		python3 -c 'import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buffer = mmap.mmap(-1, 4096)
reads = 0
while os.path.exists("/proc/" + sys.argv[2]) and reads < 100:
    os.preadv(fd, [buffer], reads * 4096 * 97)
    reads += 1
    time.sleep(0.2)
print(os.getpid(), reads)' "$QUEUED_LOOP" "$doctor" >"$T/bystander.pid"
		read -r bystander reads <"$T/bystander.pid"
		wait "$doctor"
		OUT=$(cat "$T/kernel.json")
		check_more "$qdisk saturated by kernel threads" "$OUT"
		kernel_field() { python3 "$TOP/tests/cli/doctor_query.py" get saturated process device "$qdisk" <<<"$OUT" |
			python3 -c 'import ast, sys; v = sys.stdin.read().strip(); d = ast.literal_eval(v) if v.startswith("{") else {}; print(d.get(sys.argv[1], "absent"))' "$1"; }
		named=$(kernel_field pid)
		check_eq "$qdisk saturated by upper's workers: found" "$qdisk" \
			"$(python3 "$TOP/tests/cli/doctor_query.py" get saturated device device "$qdisk" <<<"$OUT")"
		seen=$(awk -v p="$bystander" -v d="$(dev_of "$QUEUED_LOOP" | tr : ' ')" \
			'BEGIN { split(d, m, " ") } $1 == "bio_proc" && $2 == p && $7 == m[1] && $8 == m[2] { print $5 }' "$T/kernel.snapshot")
		check "… the test's process of $reads reads ($bystander) was counted in the window: ${seen:-0} requests, 1 to $reads" \
			test "${seen:-0}" -ge 1 -a "${seen:-0}" -le "$reads"
		check "… and is not named ($named)" test "$named" != "$bystander"
		check_eq "… who made the load: kernel threads" True "$(kernel_field kernel)"
		ppid=$(awk '{ print $4 }' "/proc/$named/stat" 2>/dev/null)
		check "… the thread named, $named ($(kernel_field comm)), is kthreadd's child (/proc/$named/stat: ppid ${ppid:-gone}) or gone" \
			test "${ppid:-2}" = 2
		check "… with a share of the requests of 20 % or more ($(kernel_field share))" \
			python3 -c "import sys; sys.exit(not float('$(kernel_field share)') >= 0.2)"
		check_match "… said in words" "kernel threads? .*made the most block requests on it, [0-9]+ of [0-9]+ \\([0-9]+ %\\)" \
			"$(python3 "$TOP/tests/cli/doctor_query.py" get saturated numbers device "$qdisk" <<<"$OUT")"
		kill "$UPPER_FIO"
		wait "$UPPER_FIO" 2>/dev/null
	else
		skip "a load made by kernel threads: losetup over $QUEUED_LOOP: $(head -1 "$T/upper.err")"
	fi
else
	skip "a load made by kernel threads: $QUEUED_WHY"
fi

check_fails "doctor --capacity-dir '' is refused" "$IOLENS" doctor --capacity-dir "" 1
check_fails "doctor --capacity-dir with --replay is refused" "$IOLENS" doctor --capacity-dir "$T" --replay "$T/sat.snapshot"

echo "1..$t_count"
