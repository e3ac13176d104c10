#!/usr/bin/env bash
# stat_top_bio.sh: iolens stat --top-bio by eBPF (each block request charged to the process that submitted it, with its latency; with each way this kernel lets it see the submitters: block_io_start, block_getrq), held to the bytes a process of the test reads and writes with O_DIRECT and to /proc/diskstats over the same window; without eBPF (not root, a recording) /proc/PID/io's figures, said as such.
# tests/run: alone (the most expensive process of the whole machine: another test's reader would be it)
. "$(dirname "$0")/lib.sh"

can_evict || skip_all "O_DIRECT needs a scratch directory on a disk ($T is on $(fs_type "$T"))"
# The block device under $T, as /proc/diskstats names it.
DEV=$(basename "$(readlink "/sys/dev/block/$(stat -c '%Hd:%Ld' "$T")" 2>/dev/null)")
[ -n "$DEV" ] && grep -q " $DEV " /proc/diskstats || skip_all "$T is on no block device of /proc/diskstats"
MiB=$((1 << 20))

# direct.py MODE FILE BYTES NAME [GO [HOLD]]: a process named NAME that reads (or writes) FILE's
# first BYTES with O_DIRECT, 1 MiB a call, and ends. With GO (a FIFO, "-" for none): ready, it makes
# GO.ready and waits for a line in GO first; with HOLD: it creates HOLD after its I/O and stays, until killed. Nothing
# else it does after GO goes to the disk.
cat >"$T/direct.py" <<'PY'
import ctypes, mmap, os, signal, sys
mode, path, size, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
go, hold = (sys.argv[5:] + ["-", "-"])[:2]
ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME
fd = os.open(path, (os.O_RDONLY if mode == "read" else os.O_WRONLY | os.O_CREAT) | os.O_DIRECT, 0o644)
buf = mmap.mmap(-1, 1 << 20)  # page-aligned, as O_DIRECT needs
buf.write(b"\x5a" * (1 << 20))
if go != "-":
    open(go + ".ready", "w").close()
    open(go).readline()
done = 0
while done < size:
    done += (os.preadv if mode == "read" else os.pwritev)(fd, [buf], done)
if hold != "-":
    open(hold, "w").close()
    while True: signal.pause()
PY

# sums PID KEY FILE [AFTER]: the bytes the lines of FILE (after the first, since boot; and sampled
# after AFTER, CLOCK_REALTIME ns) show for PID under top_bio's KEY (rate x interval), where it is the
# one shown.
sums() {
	python3 -c 'import json, sys
total = 0
for l in open(sys.argv[3]).read().splitlines()[1:]:
    d = json.loads(l)
    if d["top_bio"]["pid"] == int(sys.argv[1]) and d["time_ns"] > int(sys.argv[4]):
        total += d["top_bio"][sys.argv[2]] * d["interval_ns"] / 1e9
print("%.0f" % total)' "$1" "$2" "$3" "${4:-0}"
}
# between LOW VALUE HIGH: LOW <= VALUE <= HIGH, give or take a byte of rounding.
between() { python3 -c 'import sys; l, v, h = map(float, sys.argv[1:]); sys.exit(not l - 1 <= v <= h + 1)' "$@"; }
top_bio_key() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])["top_bio"][sys.argv[2]])' "$@"; }

# ---- By eBPF: a reader and a writer of the test's, against what they did and /proc/diskstats -------
# last_after FILE NS: FILE's last line is a sample taken after NS (CLOCK_REALTIME).
last_after() { [ "$(tail -n 1 "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["time_ns"] > int(sys.argv[1]))' "$2" 2>/dev/null)" = True ]; }
# measure MODE FILE BYTES NAME: direct.py, its I/O let go right after a line of stat's (sampling into
# $T/bio.json), so that it likely falls within one interval. Again (3 tries at most) when the lines
# count less than BYTES of it: another process outdid it in a line (another test's, on a shared
# machine), or the kernel ran no eBPF program for some of its completions. Sets pid, t0
# (CLOCK_REALTIME ns, when it was let go), and disk: the bytes of MODE that /proc/diskstats
# counted for $DEV from then until it ended.
measure() {
	local field=10 key=write_bytes_per_s try t1 d0 d1 others
	[ "$1" = read ] && field=6 key=read_bytes_per_s
	for try in 1 2 3; do
		rm -f "$T/go" "$T/go.ready"
		mkfifo "$T/go"
		python3 "$T/direct.py" "$@" "$T/go" &
		pid=$!
		# Ready (started, its file open), then a line, then go.
		wait_until test -e "$T/go.ready"
		wait_until lines_at_least "$T/bio.json" $(($(lines_of "$T/bio.json") + 1))
		t0=$(date +%s%N)
		d0=$(diskstats_sum "$DEV" $field)
		echo go >"$T/go"
		wait $pid
		d1=$(diskstats_sum "$DEV" $field)
		t1=$(date +%s%N)
		# Its last requests completed before it ended: the next line counts them (eBPF keeps the
		# counts of a process that ended, where /proc/PID/io has nothing of it).
		wait_until last_after "$T/bio.json" "$t1"
		disk=$(((d1 - d0) * 512))
		between "$3" "$(sums $pid $key "$T/bio.json" "$t0")" "$3" && return 0
		others=$(python3 -c 'import json, sys
pid, t0, t1 = map(int, sys.argv[2:5])
for l in open(sys.argv[1]).read().splitlines()[1:]:
    d = json.loads(l)
    g = d["top_bio"]
    if d["time_ns"] > t0 and d["time_ns"] - d["interval_ns"] < t1 and g["pid"] not in (None, pid):
        print("%s:%s" % (g["pid"], g["name"]), end=" ")' "$T/bio.json" $pid "$t0" "$t1")
		if [ -n "$others" ]; then
			echo "# try $try: $others shown while $4 did its I/O"
		else
			# No one else shown, and short: completions the tracepoints' programs did not see
			# (a few in a thousand on a busy machine, in bursts: iolens-stat(1), KNOWN LIMITS).
			echo "# try $try: $4's lines count $(sums $pid $key "$T/bio.json" "$t0") of its $3 bytes, no other process shown"
		fi
	done
}

why=$(ebpf_expected)
if [ -z "$why" ]; then
	make_file "$T/data" $((64 * MiB))
	make_file "$T/wdata" $((32 * MiB))
fi
# Each way iolens sees the submitters on this kernel (lib.sh, bio_mechanisms), held to the same truths:
# block_getrq forced on 6.18 too, to every byte. (It once counted 63 of the reader's 64 MiB: a read
# charged to an earlier request at the same address whose completion the kernel ran no program for,
# until bio.bpf.c's recall_request told requests apart by their start.)
for mech in $([ -z "$why" ] && bio_mechanisms); do
	# On the disk before the window: an O_DIRECT read of dirty pages writes them back first, in the
	# reader's context; and writeback of earlier tests' files is kworker's I/O, not the test's.
	sync
	IOLENS_BIO_MECHANISM=$mech "$IOLENS" stat --json --top-bio 1 >"$T/bio.json" 2>"$T/bio.err" &
	stat=$!
	on_exit "kill $stat 2>/dev/null"
	wait_until lines_at_least "$T/bio.json" 2
	measure read "$T/data" $((64 * MiB)) iolens-dread
	reader=$pid reader_t0=$t0 read_disk=$disk
	measure write "$T/wdata" $((32 * MiB)) iolens-dwrite
	writer=$pid writer_t0=$t0 write_disk=$disk
	kill -INT $stat
	wait $stat
	check_eq "[$mech] stat --top-bio ends 0 on SIGINT" 0 $?
	check "[$mech] as root: eBPF is used, no word on stderr but what it says once of this kernel ($(head -c 300 "$T/bio.err"))" \
		bio_quiet "$mech" "$T/bio.err"
	check_match "[$mech] … its bio_mechanism on each line" '"bio_mechanism":"'"$mech"'"' "$(tail -n 1 "$T/bio.json")"
	first=$(head -1 "$T/bio.json")
	check_eq "[$mech] the line since boot is unknown (eBPF counts from the start): name and figures null" "None None None" \
		"$(top_bio_key "$first" name) $(top_bio_key "$first" read_bytes_per_s) $(top_bio_key "$first" write_bytes_per_s)"
	names=$(python3 -c 'import json, sys
print(" ".join("%s:%s" % (json.loads(l)["top_bio"]["pid"], json.loads(l)["top_bio"]["name"]) for l in open(sys.argv[1]).read().splitlines()[1:]))' "$T/bio.json")
	check_match "[$mech] the reader is named, with its pid ($names)" "(^| )$reader:iolens-dread( |$)" "$names"
	check_match "[$mech] the writer is named, with its pid" "(^| )$writer:iolens-dwrite( |$)" "$names"
	got=$(sums $reader read_bytes_per_s "$T/bio.json" $reader_t0)
	check "[$mech] its reads: at least the 64 MiB it read ($((64 * MiB))), at most what $DEV read meanwhile (/proc/diskstats: $read_disk): $got" \
		between $((64 * MiB)) "$got" "$read_disk"
	check_eq "[$mech] the reader wrote nothing" 0 "$(sums $reader write_bytes_per_s "$T/bio.json")"
	# Its latency in the lines that show it reading: known, ordered (p50 <= p99 <= max, the average
	# between the shortest bucket and the longest), on the table's p99 in ms too.
	lat=$(python3 -c 'import json, sys
for l in open(sys.argv[1]).read().splitlines()[1:]:
    g = json.loads(l)["top_bio"]
    if g["pid"] == int(sys.argv[2]) and g["read_bytes_per_s"] > 0:
        ok = 0 < g["p50_ns"] <= g["p99_ns"] <= g["max_ns"] and 0 < g["avg_ns"] <= g["max_ns"]
        print("ok" if ok else "bad:%s" % g, end=" ")' "$T/bio.json" $reader)
	check_match "[$mech] the reader's latency: p50 <= p99 <= max, avg <= max, all above 0 ($lat)" '^(ok )+$' "$lat"
	got=$(sums $writer write_bytes_per_s "$T/bio.json" $writer_t0)
	check "[$mech] its writes: at least the 32 MiB it wrote ($((32 * MiB))), at most what $DEV wrote meanwhile (/proc/diskstats: $write_disk): $got" \
		between $((32 * MiB)) "$got" "$write_disk"
done
[ -z "$why" ] || skip "--top-bio by eBPF: $why"

# ---- Without eBPF: nobody sees /proc/PID/io (its own processes'), and is told so ----------------
# (Debian's python3: nobody cannot run one under root's home, as a pyenv shim is)
if is_root && command -v setpriv >/dev/null && [ -x /usr/bin/python3 ]; then
	chmod 755 "$T"
	mkdir -m 777 "$T/nobody"
	"${AS_NOBODY[@]}" "$IOLENS" stat --json --top-bio 1 >"$T/nobody.json" 2>"$T/nobody.err" &
	stat=$!
	on_exit "kill $stat 2>/dev/null"
	wait_until lines_at_least "$T/nobody.json" 2
	# It stays until a sample after its writes: /proc/PID/io has nothing of a process that ended.
	"${AS_NOBODY[@]}" /usr/bin/python3 "$T/direct.py" write "$T/nobody/wdata" $((16 * MiB)) iolens-nwrite - "$T/nobody/done" &
	writer=$!
	on_exit "kill $writer 2>/dev/null"
	wait_until test -e "$T/nobody/done"
	wait_until lines_at_least "$T/nobody.json" $(($(lines_of "$T/nobody.json") + 1))
	kill $writer
	kill -INT $stat
	wait $stat
	check_eq "as nobody: exit 0, the figures being known" 0 $?
	ERR=$(cat "$T/nobody.err")
	check_match "… one line says what the figures are then, and why" \
		"^iolens stat: --top-bio counts /proc/PID/io: eBPF needs root or CAP_BPF\+CAP_PERFMON$" "$ERR"
	check_eq "… said once" 1 "$(grep -c 'top-bio' <<<"$ERR")"
	check_match "… its bio_mechanism procfs" '"bio_mechanism":"procfs"' "$(tail -1 "$T/nobody.json")"
	check_eq "… latency unknown without eBPF: p50, p99, max null" "None None None" \
		"$(top_bio_key "$(tail -1 "$T/nobody.json")" p50_ns) $(top_bio_key "$(tail -1 "$T/nobody.json")" p99_ns) $(top_bio_key "$(tail -1 "$T/nobody.json")" max_ns)"
	got=$(sums $writer write_bytes_per_s "$T/nobody.json")
	# (/proc/PID/io also counts the directory pages it dirtied creating its two files: 4 KiB each here)
	check "… the writer's 16 MiB ($((16 * MiB))), as its /proc/PID/io write_bytes counted them, and a few pages more: $got" \
		between $((16 * MiB)) "$got" $((16 * MiB + 64 * 1024))
else
	skip "without eBPF: needs root to run stat and a writer as nobody (setpriv, /usr/bin/python3)"
fi

# ---- A recording has no kernel: its /proc/PID/io, said as such --------------------------------------
FIX=$TOP/tests/fixtures/stat
run env IOLENS_REPLAY="$FIX/vm1" "$IOLENS" stat --json --top-bio 1 2
check_eq "a recording: two lines" 2 "$(wc -l <<<"$OUT")"
check_match "… and the word that its figures are /proc/PID/io's, as a recording has no kernel to trace" \
	"^iolens stat: --top-bio counts /proc/PID/io: a recording has no kernel to trace$" "$ERR"
run "$IOLENS" stat --sysroot "$FIX/vm1/0" --top-bio 1 1
check_match "--sysroot: the same, the tree's /proc/PID/io" "^iolens stat: --top-bio counts /proc/PID/io: --sysroot's tree has no kernel to trace$" "$ERR"

echo "1..$t_count"
