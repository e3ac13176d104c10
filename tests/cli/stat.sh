#!/usr/bin/env bash
# stat.sh: iolens stat live: against iostat -x and vmstat over the same seconds, bad input, pipes, Ctrl-C, devices that come and go.
. "$(dirname "$0")/lib.sh"

py() { python3 -c "$@"; }

# ---- Bad input ------------------------------------------------------------------------------
for args in "-D nosuchdisk" "-N nosuchif0" "-C 999" "-S /nosuchswap" "-I nosuchirq"; do
	run "$IOLENS" stat $args 1 1
	check_eq "stat $args: exit 2" 2 "$RC"
	check_match "stat $args: said" "not found" "$ERR"
done
for args in "0" "-1" "x" "1 0" "1 x" "1 2 3"; do
	run "$IOLENS" stat $args
	check_eq "stat $args: a bad delay or count, exit 2" 2 "$RC"
done
run "$IOLENS" stat --sysroot /nonexistent 1 1
check_eq "--sysroot that is not there: exit 2" 2 "$RC"

# A closed pipe ends it quietly, with status 0.
"$IOLENS" stat 0.1 2>"$T/pipe.err" | head -3 > "$T/pipe.out"
rc=${PIPESTATUS[0]}
check_eq "| head -3: exit 0" 0 "$rc"
check_eq "| head -3: nothing on stderr" "" "$(cat "$T/pipe.err")"
check_eq "| head -3: three lines" 3 "$(wc -l < "$T/pipe.out")"

# Ctrl-C leaves no half-written CSV line.
"$IOLENS" stat -cdngylmsp --output "$T/run.csv" 0.02 > /dev/null &
pid=$!
wait_until lines_at_least "$T/run.csv" 10
kill -INT $pid
wait $pid
check_eq "SIGINT: exit 0" 0 "$?"
fields=$(awk -F, '{ print NF }' "$T/run.csv" | sort -u | tr '\n' ' ')
check_eq "--output after SIGINT: every line whole (one field count)" "$(head -1 "$T/run.csv" | awk -F, '{ print NF }') " "$fields"
check "--output: several lines were written" test "$(wc -l < "$T/run.csv")" -gt 5
check_match "--output: a header line with units" "^time_ns,since_boot,cpu_total_usr_pct,.*dsk_total_read_bytes_per_s" "$(head -1 "$T/run.csv")"
check_eq "--output: the first sample is marked as the average since boot" "1 0" "$(cut -d, -f2 "$T/run.csv" | sed -n '2p;3p' | tr '\n' ' ' | sed 's/ $//')"

# JSON: one object per line, raw units, the boot sample marked; --no-boot-sample leaves it out.
run "$IOLENS" stat --json -cdm 0.2 3
check_eq "--json: three lines" 3 "$(wc -l <<<"$OUT")"
check_eq "--json: since_boot first only" "True False False" "$(py 'import json,sys; print(" ".join(str(json.loads(l)["since_boot"]) for l in sys.stdin))' <<<"$OUT")"
check "--json: memory in bytes" py 'import json,sys; d=json.loads(sys.stdin.readline()); sys.exit(not d["memory"]["free_bytes"] > 1e6)' <<<"$OUT"
run "$IOLENS" stat --json --no-boot-sample -c 0.2 2
check_eq "--no-boot-sample: no since-boot line" "False False" "$(py 'import json,sys; print(" ".join(str(json.loads(l)["since_boot"]) for l in sys.stdin))' <<<"$OUT")"
interval=$(py 'import json,sys; print(json.loads(sys.stdin.readline())["interval_ns"])' <<<"$OUT")
check "--json: interval_ns measured (about 0.2 s: $interval)" test "$interval" -gt 150000000 -a "$interval" -lt 1000000000

# Colour only on a terminal, never with NO_COLOR. A terminal that draws colours, whatever the one
# the tests run from (TERM=dumb and no TERM: stat_dstat.sh).
export TERM=xterm
tty_out=$(script -qec "'$IOLENS' stat -c 0.1 2" /dev/null)
check_match "on a terminal: colours" $'\033\\[' "$tty_out"
tty_out=$(NO_COLOR=1 script -qec "'$IOLENS' stat -c 0.1 2" /dev/null)
check_no_match "NO_COLOR: none" $'\033\\[1;3' "$tty_out"
run "$IOLENS" stat -c 0.1 2
check_no_match "piped: none" $'\033' "$OUT"
tty_out=$(NO_COLOR= script -qec "'$IOLENS' stat -c 0.1 2" /dev/null)
check_match "NO_COLOR set but empty: colours (no-color.org)" $'\033\\[1;3' "$tty_out"
tty_out=$(script -qec "'$IOLENS' stat -c --nocolor 0.1 2" /dev/null)
check_no_match "--nocolor on a terminal: no escape at all, not even a reset at the end" $'\033\\[[0-9;]*m' "$tty_out"

# A terminal too narrow for the groups: those that fit, and '>' for the rest, as dstat.
tty_out=$(script -qec "stty cols 80 rows 40; '$IOLENS' stat -tcdngylmsp --nocolor 0.1 2" /dev/null | tr -d '\r')
widest=$(sed 's/\x1b\[2K//g' <<<"$tty_out" | awk '{ if (length($0) > w) w = length($0) } END { print w }')
check "80 columns: no line wider ($widest)" test "$widest" -le 80
check_match "80 columns: the groups left out are marked with '>'" "\|usr sys idl wai stl\|.*>$" "$(sed -n 2p <<<"$tty_out")"
run "$IOLENS" stat -tcdngylmsp --nocolor 0.1 1
check_match "piped: every group, however wide" "load-avg.*memory-usage.*procs" "$(head -1 <<<"$OUT")"

# Ctrl-C while an intermediate update is on the screen: that line stays, ended by a newline.
# SIGINT once the screen shows the boot line and an update of the 3 s interval (every second).
NO_COLOR=1 script -qfec "echo \$\$ > '$T/tty.pid'; exec '$IOLENS' stat -c 3" /dev/null >"$T/tty.out" &
tty_script=$!
updated() { [ "$(tr '\r' '\n' <"$T/tty.out" | grep -c '[0-9]')" -ge 2 ]; }
wait_until updated
kill -INT "$(cat "$T/tty.pid")"
wait $tty_script
tty_out=$(cat "$T/tty.out")
check_eq "Ctrl-C during an update: the output ends with a newline" "0a" "$(tail -c 1 "$T/tty.out" | od -An -tx1 | tr -d ' ')"
check_eq "Ctrl-C during an update: the partial line is kept (after the boot line): two lines with numbers" 2 "$(grep -c '[0-9]' <<<"$tty_out")"

# A monitor that was stopped skips the ticks it missed, as dstat, instead of catching up with
# lines a moment apart: the line after the stop covers the whole gap.
"$IOLENS" stat --json -c --no-boot-sample 0.2 12 > "$T/stopped.json" &
pid=$!
wait_until lines_at_least "$T/stopped.json" 1
kill -STOP $pid; sleep 1.2; kill -CONT $pid # the stop itself: 1.2 s, six ticks missed
wait $pid
intervals=$(python3 -c 'import json,sys; print(" ".join("%.2f" % (json.loads(l)["interval_ns"] / 1e9) for l in sys.stdin))' < "$T/stopped.json")
check "after SIGSTOP: no interval under 0.1 s ($intervals)" \
	python3 -c 'import sys; sys.exit(not all(float(x) >= 0.1 for x in sys.argv[1].split()))' "$intervals"
check "after SIGSTOP: one interval covers the stop ($intervals)" \
	python3 -c 'import sys; sys.exit(not any(float(x) >= 1.0 for x in sys.argv[1].split()))' "$intervals"

# What the kernel or the tree cannot tell is said, and shows '-'.
mkdir -p "$T/nopsi"
cp -r "$TOP/tests/fixtures/stat/vm1/0/proc" "$T/nopsi/"
rm -rf "$T/nopsi/proc/pressure"
run "$IOLENS" stat --sysroot "$T/nopsi" --psi -d --nocolor 1 1
check_match "no /proc/pressure: said" "pressure stall is unknown" "$ERR"
check_match "no /proc/pressure: '-'" "^ +- +- +- +- +- +- *\|" "$(sed -n 3p <<<"$OUT")"
check_match "no /sys: a disk total cannot be told from partitions and stacks: said" "disk totals are unknown" "$ERR"
check_match "no /sys: the disk total is '-', not 0" "\| +- +- *$" "$(sed -n 3p <<<"$OUT")"
check_eq "unknown columns: exit 1" 1 "$RC"
run "$IOLENS" stat --sysroot "$T/nopsi" --vtrace --cache -c 1 1
check_match "--sysroot: libvtrace servers are this machine's, not the tree's" "libvtrace servers are not shown" "$ERR"
check_match "--sysroot: nor are its page cache events" "pages added and removed are unknown" "$ERR"

# A link named dstat runs iolens stat, with dstat's options.
ln -s "$IOLENS" "$T/dstat"
run "$T/dstat" -tc --nocolor 0.1 2
check_match "a link named dstat" "^----system---- --total-cpu-usage--" "$OUT"

# ---- Devices that come and go (root: a loop device) -------------------------------------------
if is_root && command -v losetup >/dev/null && can_evict; then
	head -c 8M /dev/zero > "$T/disk.img"
	# (At a number of its own: once detached below, a number from losetup -f could be another
	# test's device before stat's next sample. Detached at the end only if still ours.)
	loop=$(loop_attach_apart "$T/disk.img")
	on_exit 'loop_release "$loop" "$T/disk.img"'
	dev=${loop#/dev/}
	dd if=/dev/zero of="$loop" bs=4k count=16 oflag=direct status=none
	"$IOLENS" stat --json -d -D total,$dev --no-boot-sample 0.3 8 > "$T/gone.json" 2> "$T/gone.err" &
	pid=$!
	wait_until lines_at_least "$T/gone.json" 2
	losetup -d "$loop" && loop=
	wait $pid
	check_eq "a named device detached mid-run: the run goes on, and ends with exit 1 (the man page's promise)" 1 "$?"
	check_eq "… all its samples written" 8 "$(wc -l < "$T/gone.json")"
	# (any line after it went: the machine's other users may attach a new loop device of that name)
	check_match "… its columns become unknown (null)" "\"dsk_$dev\": ?\\{\"read_bytes_per_s\": ?null" "$(cat "$T/gone.json")"
	check_eq "… said once on stderr" "iolens stat: disk '$dev' went away: its columns show '-'" "$(cat "$T/gone.err")"
	# The same in the table: '-' in its columns.
	loop=$(loop_attach_apart "$T/disk.img"); dev=${loop#/dev/}
	"$IOLENS" stat -d -D $dev --nocolor --no-boot-sample 0.3 6 > "$T/gone.txt" 2> "$T/gone.err" &
	pid=$!
	wait_until lines_at_least "$T/gone.txt" 3
	losetup -d "$loop" && loop=
	wait $pid
	check_eq "a named device detached mid-run (table): exit 1" 1 "$?"
	check_match "… its columns '-'" "^ +- +- *$" "$(cat "$T/gone.txt")"
	check_match "… said" "disk '$dev' went away" "$(cat "$T/gone.err")"
	# Its medium replaced between two samples (detached and attached again at once, as another
	# program may: diskseq tells them apart): that interval's figures are of neither device.
	loop=$(loop_attach_apart "$T/disk.img"); dev=${loop#/dev/}
	"$IOLENS" stat --json -d -D $dev --no-boot-sample 0.3 20 > "$T/replaced.json" 2> "$T/replaced.err" &
	pid=$!
	wait_until lines_at_least "$T/replaced.json" 2
	losetup -d "$loop" && losetup "$loop" "$T/disk.img"
	wait_until lines_at_least "$T/replaced.json" 3
	dd if="$loop" of=/dev/null bs=4k count=64 iflag=direct status=none
	wait $pid
	check_eq "a named device replaced between two samples: exit 1" 1 "$?"
	check_eq "… all its samples written" 20 "$(wc -l < "$T/replaced.json")"
	check_match "… that interval's columns unknown (null)" "\"dsk_$dev\": ?\\{\"read_bytes_per_s\": ?null" "$(cat "$T/replaced.json")"
	check_eq "… said once on stderr" "iolens stat: disk '$dev' went away: its columns show '-'" "$(cat "$T/replaced.err")"
	check_match "… the new medium's figures after: dd's 256 KiB read (/proc/diskstats)" "\"dsk_$dev\": ?\\{\"read_bytes_per_s\": ?[1-9]" "$(sed -n '4,$p' "$T/replaced.json")"
	losetup -d "$loop" && loop=
	# A device attached mid-run shows up in -f's list, with new headers.
	"$IOLENS" stat -d -f --nocolor --no-boot-sample 0.3 8 > "$T/came.txt" 2>&1 &
	pid=$!
	wait_until lines_at_least "$T/came.txt" 3
	loop=$(losetup -f --show "$T/disk.img"); dev=${loop#/dev/}
	dd if=/dev/zero of="$loop" bs=4k count=16 oflag=direct status=none
	wait $pid
	check_eq "a device attached mid-run: exit 0" 0 "$?"
	check_match "… it appears, under new headers" "dsk/$dev" "$(cat "$T/came.txt")"
	losetup -d "$loop" && loop=
else
	skip "devices that come and go: needs root and a loop device"
fi

# An interface named in -N that goes away (a veth in a network namespace of the test's own).
ifgone_why=
if ! is_root || ! command -v unshare >/dev/null || ! unshare -n true 2>/dev/null; then
	ifgone_why="needs root and unshare -n"
elif ! command -v ip >/dev/null; then
	ifgone_why="needs ip (iproute2: make test-deps)"
elif ! unshare -n sh -c 'ip link add v0 type veth peer name v1' 2>/dev/null; then
	ifgone_why="ip link add ... type veth fails here (no veth in this kernel?)"
fi
if [ -z "$ifgone_why" ]; then
	IOLENS="$IOLENS" T="$T" unshare -n bash -c '
		ip link add v0 type veth peer name v1 && ip link set v0 up && ip link set v1 up
		"$IOLENS" stat --json -n -N total,v0 --no-boot-sample 0.3 8 > "$T/ifgone.json" 2> "$T/ifgone.err" &
		pid=$!
		for i in $(seq 100); do [ "$(wc -l < "$T/ifgone.json")" -ge 2 ] && break; sleep 0.1; done
		ip link del v0
		wait $pid
		echo $? > "$T/ifgone.rc"'
	check_eq "a named interface deleted mid-run: exit 1" 1 "$(cat "$T/ifgone.rc")"
	check_eq "… said once on stderr" "iolens stat: interface 'v0' went away: its columns show '-'" "$(cat "$T/ifgone.err")"
	check_eq "… all its samples written" 8 "$(wc -l < "$T/ifgone.json")"
	check_match "… its columns unknown (null)" "\"net_v0\": ?\\{\"recv_bytes_per_s\": ?null, ?\"send_bytes_per_s\": ?null" "$(tail -1 "$T/ifgone.json")"
	check_match "… known before it went" "\"net_v0\": ?\\{\"recv_bytes_per_s\": ?[0-9]" "$(head -1 "$T/ifgone.json")"
else
	skip "an interface that goes away: $ifgone_why"
fi

# ---- Against iostat -x and vmstat, over the same seconds, under a steady write load ----------
# The disk compared is a loop device of the test's own, as root: the disk under $T is shared with
# other programs, whose bursts fall in one tool's seconds and not the other's (w/s 269 against
# 140, three tests at a time); the loop device has the test's writes alone.
DEV="" target=$T/load
if is_root && command -v losetup >/dev/null; then
	truncate -s 300m "$T/compare.img"
	if DEV=$(losetup -f --show --direct-io=on "$T/compare.img" 2>/dev/null); then
		on_exit "loop_release $DEV $T/compare.img"
		target=$DEV DEV=${DEV#/dev/}
	fi
fi
if [ -z "$DEV" ]; then
	DEV=$(lsblk -no PKNAME "$(findmnt -no SOURCE -T "$T" 2>/dev/null)" 2>/dev/null | head -1)
	[ -n "$DEV" ] || DEV=$(basename "$(findmnt -no SOURCE -T "$T" 2>/dev/null)")
fi
if command -v iostat >/dev/null && command -v vmstat >/dev/null && [ -e "/sys/class/block/$DEV" ] && can_evict; then
	( while :; do dd if=/dev/zero of="$target" bs=1M count=256 oflag=direct status=none; done ) &
	load=$!
	on_exit "kill $load 2>/dev/null"
	# The load is on once the disk has written 16 MiB more.
	sectors_written() { diskstats_sum "$DEV" 10; }
	w0=$(sectors_written)
	load_on() { [ "$(sectors_written)" -ge $((w0 + 32768)) ]; }
	wait_until load_on
	# All three sample every 2 s from the same moment, the second interval of each compared: the
	# peers start once ours has printed its first line (since boot), its first sample taken. (Started
	# together, ours took its first sample seconds after theirs on a loaded machine, its set-up
	# slower: w/s 330 against 461.)
	"$IOLENS" stat --json -c -m -g -y -x -D "$DEV" 2 3 > "$T/ours.json" &
	ours=$!
	wait_while "$ours" lines_at_least "$T/ours.json" 1
	iostat -x -y -k -o JSON "$DEV" 2 2 > "$T/iostat.json" &
	iostat=$!
	vmstat -n 2 3 > "$T/vmstat.txt" &
	vmstat=$!
	wait "$ours" "$iostat" "$vmstat"
	kill $load 2>/dev/null; wait $load 2>/dev/null
	python3 - "$DEV" "$T/iostat.json" "$T/vmstat.txt" "$T/ours.json" > "$T/compare" <<'PY'
import json, sys
dev, iostat_file, vmstat_file, ours_file = sys.argv[1:]
ours = [json.loads(l) for l in open(ours_file)][2]
io = json.load(open(iostat_file))["sysstat"]["hosts"][0]["statistics"][-1]["disk"]
io = [d for d in io if d["disk_device"] == dev][0]
vm = open(vmstat_file).read().split("\n")[4].split()  # two headers, since boot, 1st, 2nd interval: the 2nd, as ours[2]
x = ours["dskext_" + dev.replace("-", "_")]
def near(name, a, b, rel, slack):
    ok = abs(a - b) <= rel * max(abs(a), abs(b)) + slack
    print("ok" if ok else "BAD", f"{name}: iolens {a:.2f} vs peer {b:.2f} (within {rel*100:.0f} % + {slack})")
# iostat -x: the same counters, a slightly different second: rates within 25 %, %util within 15 points.
near("w/s vs iostat", x["w_per_s"], io["w/s"], 0.25, 5)
near("wkB/s vs iostat", x["write_bytes_per_s"] / 1024, io["wkB/s"], 0.25, 100)
near("w_await vs iostat", x["w_await_ns"] / 1e6, io["w_await"], 0.5, 0.5)
near("%util vs iostat", x["util_pct"], min(100, io["util"]), 0, 15)
# vmstat: cpu within 15 points, free memory within 5 %, blocks out (KiB/s) within 30 %.
us, sy, idle, wa = (int(v) for v in vm[12:16])
near("cpu idle vs vmstat", ours["cpu_total"]["idl_pct"], idle, 0, 15)
near("cpu wait vs vmstat", ours["cpu_total"]["wai_pct"], wa, 0, 15)
near("memory free vs vmstat", ours["memory"]["free_bytes"] / 1024, int(vm[3]), 0.05, 10240)
near("page out (bo) vs vmstat", ours["paging"]["page_out_bytes_per_s"] / 1024, int(vm[9]), 0.30, 1024)
PY
	while read -r verdict rest; do
		if [ "$verdict" = ok ]; then ok "live: $rest"; else not_ok "live: $rest"; fi
	done < "$T/compare"
	check "live: compared 8 figures" test "$(wc -l < "$T/compare")" -eq 8
else
	skip "live comparison: needs iostat, vmstat and a disk under the scratch directory"
fi
