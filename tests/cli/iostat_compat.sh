#!/usr/bin/env bash
# iostat_compat.sh: a link named iostat takes sysstat iostat's options and prints its layout and JSON, held to the real iostat side by side: lines byte-for-byte (numbers masked where the machine moves them), the same figures on the same seconds of a steady read, its exit statuses.
. "$(dirname "$0")/lib.sh"

command -v iostat >/dev/null || skip_all "needs iostat (sysstat; make test-deps)"
command -v python3 >/dev/null || skip_all "needs python3 (make test-deps)"
command -v perl >/dev/null || skip_all "needs perl (make test-deps)"
iostat -V 2>&1 | grep -qE 'sysstat version (1[2-9]|[2-9][0-9])\.' || skip_all "needs sysstat 12 or later (iostat -x's 22 columns, -o JSON)"
mkdir -p "$T/bin"
ln -s "$IOLENS" "$T/bin/iostat"
I=$T/bin/iostat
# Both in the C locale, in kB (POSIXLY_CORRECT would make both count blocks), without colours.
export LC_ALL=C
unset POSIXLY_CORRECT S_COLORS S_TIME_FORMAT

# mask MODE: numbers of standard input hidden. plain: a number becomes '#' at its last column, the
# line keeping its length (columns are right-aligned: where a field ends is the layout); json: '#'.
mask() {
	if [ "$1" = plain ]; then
		perl -pe 's/(?<![\w\/-])(\d+(?:\.\d+)?)/" " x (length($1) - 1) . "#"/ge'
	else
		perl -pe 's/(?<![\w\/-])\d+(?:\.\d+)?/#/g'
	fi
}

# same DESCRIPTION MODE ARGS...: the link and iostat print the same lines with numbers masked
# (MODE plain or json; exact: not masked but the avg-cpu figures). Devices come and go on a
# shared machine between the two runs: three tries, the last one's difference said. With
# STDOUT_ONLY=1, stderr is not compared (where the link says what iostat leaves unsaid).
same() {
	local d=$1 mode=$2 try ours theirs; shift 2
	for try in 1 2 3; do
		if [ -z "${STDOUT_ONLY:-}" ]; then
			ours=$("$I" "$@" 2>&1; echo "exit $?")
			theirs=$(iostat "$@" 2>&1; echo "exit $?")
		else
			ours=$("$I" "$@" 2>/dev/null; echo "exit $?")
			theirs=$(iostat "$@" 2>/dev/null; echo "exit $?")
		fi
		if [ "$mode" = exact ]; then
			ours=$(sed -E '/^avg-cpu/{n;s/[0-9]/9/g}' <<<"$ours")
			theirs=$(sed -E '/^avg-cpu/{n;s/[0-9]/9/g}' <<<"$theirs")
		else
			ours=$(mask "$mode" <<<"$ours")
			theirs=$(mask "$mode" <<<"$theirs")
		fi
		[ "$ours" = "$theirs" ] && { ok "$d: as iostat $*"; return; }
	done
	not_ok "$d: iostat $*: $(diff <(echo "$theirs") <(echo "$ours") | head -8)"
}

# The whole machine's devices, one report since boot.
same "the default report (avg-cpu, then each device)" plain
same "-x: the 22 extended columns" plain -x
same "-d -x -m: devices in MB" plain -d -x -m
same "-c: avg-cpu alone" plain -c
same "-d -k" plain -d -k
same "-h: human units, device last" plain -h
same "-x -h: the extended report in four parts" plain -x -h
same "-z: idle devices left out" plain -x -z
same "-p ALL: every line of /proc/diskstats" plain -p ALL
same "-x -p ALL" plain -x -p ALL
same "-p alone: every device, idle ones left out" plain -x -p
same "-s: the short reports" plain -s
same "-x -s" plain -x -s
same "-t: the time of the report" plain -t
same "ALL: every whole device, idle ones too" plain -d ALL
same "--dec=0, --dec=1" plain -x --dec=0
same "--pretty, --human, --compact" plain -x --pretty --human --compact
same "-N: device-mapper names" plain -d -N
same "-o JSON: sysstat's document" json -o JSON
same "-x -o JSON" json -x -o JSON
same "-x -t -o JSON" json -x -t -o JSON
same "-c -o JSON" json -c -o JSON
same "-d -m -o JSON" json -d -m -o JSON
same "-x -s -o JSON" json -x -s -o JSON

# A device of the test's own: a loop device with two partitions, read only by the test.
is_root || { skip "a loop device of the test's: needs root (losetup, addpart)"; skip_rest=1; }
if [ -z "${skip_rest:-}" ] && command -v losetup >/dev/null && command -v addpart >/dev/null; then
	truncate -s 64M "$T/disk.img"
	if loopdev=$(loop_attach_apart "$T/disk.img"); then
		# (Partitions added by BLKPG outlive the loop device's detach: an earlier run's are taken
		# off first, and this run's at the end.)
		on_exit "delpart $loopdev 1 2>/dev/null; delpart $loopdev 2 2>/dev/null; loop_release $loopdev $T/disk.img"
		loop=${loopdev#/dev/}
		delpart "$loopdev" 1 2>/dev/null
		delpart "$loopdev" 2 2>/dev/null
		addpart "$loopdev" 1 2048 32768 2>/dev/null && addpart "$loopdev" 2 34816 32768 2>/dev/null && parts=1
		command -v udevadm >/dev/null && udevadm settle 2>/dev/null
		dd if="$loopdev" of=/dev/null bs=64k count=10 iflag=direct status=none
		# Idle now: every figure since boot is the same to both (avg-cpu's digits aside).
		same "$loop, named: byte for byte" exact -d "$loop"
		same "$loop -x: byte for byte" exact -d -x "$loop"
		same "$loop -x -h: byte for byte" exact -d -x -h "$loop"
		same "$loop as /dev/$loop" exact -d -x "$loopdev"
		same "$loop -o JSON: byte for byte" exact -d -x -o JSON "$loop"
		same "$loop -c -d: avg-cpu and the device" exact -x "$loop"
		if [ -n "${parts:-}" ]; then
			same "-p $loop: the disk, then its partitions" exact -d -x -p "$loop"
			same "-p $loop,$loop: named twice, listed once" exact -d -p "$loop,$loop"
			same "${loop}p2 named: a partition alone" exact -d "${loop}p2"
		else
			skip "-p $loop: addpart could not add partitions here"
		fi
		# --latency: iolens's percentiles after iostat's 22 columns, iostat's own untouched.
		run "$I" -d -x --latency "$loop"
		if [ -n "$ERR" ]; then
			skip "--latency: eBPF does not count here: $ERR"
		else
			check_eq "--latency: iostat's header, then r_p50 r_p99 w_p50 w_p99 (iostat -d -x $loop)" \
				"$(iostat -d -x "$loop" | grep '^Device')   r_p50   r_p99   w_p50   w_p99" "$(grep '^Device' <<<"$OUT")"
			check_match "--latency: unknown since boot (-), the row iostat's otherwise" \
				"^$(iostat -d -x "$loop" | grep "^$loop " | sed 's/[.]/[.]/g') +- +- +- +-\$" "$OUT"
		fi
		STDOUT_ONLY=1 same "an unknown device: no row, exit 0" exact -d -x nosuchdevice "$loop"
		run "$I" -d nosuchdevice
		check_eq "an unknown device: one line on stderr" 1 "$(grep -c . <<<"$ERR")"

		# A steady read of the loop device with O_DIRECT for the whole run (fio, held to 1500
		# reads of 4 KiB a second, so a busy CPU does not change the rate from one second to
		# the next), and both tools started together on the same interval: r/s and rkB/s of
		# each report within 3 % of iostat's.
		if ! command -v fio >/dev/null; then
			skip "the steady read: needs fio (make test-deps)"
		else
		fio --name=steady --filename="$loopdev" --rw=read --direct=1 --bs=4k --rate_iops=1500 \
			--time_based --runtime=900 --output=/dev/null > "$T/fio.out" 2>&1 &
		r1=$!
		on_exit "kill $r1 2>/dev/null"
		reads_now() { awk -v d="$loop" '$3 == d { print $4 }' /proc/diskstats; }
		before=$(reads_now)
		wait_until 10 eval '[ "$(reads_now)" -gt $((before + 1500)) ]'
		# Both at a high priority, so each reads its samples as its interval ends, whatever
		# else the machine runs: the two see the same seconds. A machine busy enough to bunch
		# fio's reads differently in the two windows still can: up to three tries.
		for try in 1 2 3; do
			nice -n -15 "$I" -d -x -y -o JSON "$loop" 2 3 > "$T/ours.json" 2>"$T/ours.err" & p1=$!
			nice -n -15 iostat -d -x -y -o JSON "$loop" 2 3 > "$T/theirs.json" 2>"$T/theirs.err" & p2=$!
			wait $p1; rc1=$?
			wait $p2; rc2=$?
			verdict=$(python3 - "$T/ours.json" "$T/theirs.json" "$loop" <<'EOF'
import json, sys
def rows(path):
    doc = json.load(open(path))
    return [[d for d in s["disk"] if d["disk_device"] == sys.argv[3]][0] for s in doc["sysstat"]["hosts"][0]["statistics"]]
ours, theirs = rows(sys.argv[1]), rows(sys.argv[2])
if len(ours) != 3 or len(theirs) != 3:
    print("reports: ours %d, iostat's %d (3 asked, the one since boot left out by -y)" % (len(ours), len(theirs)))
    sys.exit()
bad = []
for n, (a, b) in enumerate(zip(ours, theirs)):
    for key in ("r/s", "rkB/s"):
        if b[key] < 100 or abs(a[key] - b[key]) > 0.03 * b[key]:
            bad.append("report %d %s: ours %.2f, iostat %.2f" % (n + 1, key, a[key], b[key]))
print("; ".join(bad) or "same")
EOF
)
			[ "$rc1 $rc2 $verdict" = "0 0 same" ] && break
		done
		kill $r1 2>/dev/null
		check_eq "the interval run: both exit 0" "0 0" "$rc1 $rc2"
		check_eq "the interval run's JSON: iostat's document, three reports, numbers masked" \
			"$(mask json < "$T/theirs.json")" "$(mask json < "$T/ours.json")"
		# Plain reports on an interval, with -t: the same lines, numbers and times masked.
		"$I" -x -y -t "$loop" 1 2 > "$T/ours.txt" 2>&1 & p1=$!
		iostat -x -y -t "$loop" 1 2 > "$T/theirs.txt" 2>&1 & p2=$!
		wait $p1 $p2
		check_eq "-x -y -t $loop 1 2: iostat's lines, numbers masked" \
			"$(mask plain < "$T/theirs.txt")" "$(mask plain < "$T/ours.txt")"
		check_eq "a steady O_DIRECT read of $loop (fio, 1500 reads/s), 3 reports of 2 s: r/s and rkB/s within 3 % of iostat's" \
			same "$verdict"
		fi
	else
		skip "no free loop device"
	fi
fi

# Bad input: iostat's exit status, and one line saying what is wrong.
bad() {
	local d=$1; shift
	run "$I" "$@"
	local ours=$RC lines
	lines=$(grep -c . <<<"$ERR")
	iostat "$@" >/dev/null 2>&1
	check_eq "$d ($*): iostat's status, one line" "$? 1" "$ours $lines"
}
bad "an unknown option" -Q
bad "a count of 0" 1 0
bad "a count without an interval" 0 3
bad "-k with -m" -k -m
bad "-o with another format" -o XML
bad "a third number" 1 2 3
bad "--dec=3" --dec=3

# --help: a screen (40 lines of 80 columns), iostat's usage line first.
run "$I" --help
check_eq "--help: exit 0" 0 "$RC"
check "--help: at most 40 lines of 80 columns" test "$(wc -l <<<"$OUT")" -le 40 -a "$(wc -L <<<"$OUT")" -le 80
check_match "--help: iostat's usage" '^Usage: iostat ' "$OUT"
echo "1..$t_count"
