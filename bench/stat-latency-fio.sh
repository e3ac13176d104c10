#!/usr/bin/env bash
# Holds `iolens stat -x`'s read latency percentiles (eBPF, the block layer's time of each request) to fio's own completion latency (clat) of the same reads, on a disk of the user's: p50 and p99 of both, their ratio, the gap in microseconds (fio's own part: the system call and its wake-up), and the issue's goal (within 5 % at p50, 10 % at p99).
set -euo pipefail

usage="usage: ${0##*/} [--ios N] [--bs SIZE] [--rounds N] [--size SIZE] [--spin] [DIR]
  Lays out a test file of SIZE in a new directory under DIR (written with fio; removed at the end,
  on Ctrl-C too) and ROUNDS times runs fio --rw=randread --bs=BS --direct=1 --ioengine=psync
  --number_ios=N on it (one read at a time, fio in the real-time class where chrt allows), while
  \`iolens stat -x -D DISK\` samples the disk under DIR; the interval is as long as it takes for
  one line to hold the whole run. Per round and as medians it prints stat -x's r_p50 and r_p99,
  fio's clat p50 and p99, ours / fio's, and fio - ours in microseconds.
  What the two measure: stat -x a request from its start in the block layer to its completion;
  fio's clat the whole pread(2), which adds the system call, the making of the bio and fio's
  wake-up after the completion: some microseconds, nothing to a disk whose reads take
  milliseconds, 5-25 % of a 40-100 us read of a fast SSD or virtual disk. The gap, not the ratio,
  is what to look at there: it is the same whatever the disk's speed.
  --spin keeps each CPU busy with a loop of the lowest priority (SCHED_IDLE: it never delays a
  task) while fio runs: no CPU sleeps, so fio's wake-up is not that of a halted CPU (on a virtual
  machine, tens of microseconds that the host takes to run it again).
  Goal (from the issue): ours within 5 % of fio's at p50 and 10 % at p99, judged by
  bench/verdict.py on each round's own ratios: met when the rounds agree (all of 3, 4 of 5; spread
  (max - min) / median within 10 % or their margin to the limit), NOT met when they agree it is
  missed, else undecided; a round where ours is above fio's by more than 10 % (p50) or 20 % (p99)
  is disturbed (ours is a part of fio's time: others' reads of the disk were counted).
  Exit status 0 met, 1 not met (or an error), 3 undecided. Needs root (eBPF).
DIR: where the test file is made (default: \$TMPDIR when set and not on tmpfs, else /var/tmp); on a
  disk (a block device in /proc/diskstats), with SIZE free.
env: IOS (default 3000), BS (default 4k), ROUNDS (default 3), SIZE (default 256M), SPIN (1 for
  --spin), IOLENS (default ./iolens of this repository), FIO (default fio); the options win."

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
FIO=${FIO:-fio}
IOS=${IOS:-3000}
BS=${BS:-4k}
ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-256M}
SPIN=${SPIN:-0}
dir=

die() { echo "${0##*/}: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
	case $1 in
	--ios) IOS=${2:?--ios needs a number}; shift 2 ;;
	--bs) BS=${2:?--bs needs a size}; shift 2 ;;
	--rounds) ROUNDS=${2:?--rounds needs a number}; shift 2 ;;
	--size) SIZE=${2:?--size needs a size}; shift 2 ;;
	--spin) SPIN=1; shift ;;
	-h | --help) echo "$usage"; exit 0 ;;
	-*) echo "$usage" >&2; exit 2 ;;
	*) [[ -z $dir ]] || { echo "$usage" >&2; exit 2; }; dir=$1; shift ;;
	esac
done

[[ $(id -u) = 0 ]] || die "needs root: stat -x times requests by eBPF"
[[ -x $IOLENS ]] || die "$IOLENS: not an executable (run make, or set IOLENS)"
command -v "$FIO" >/dev/null || die "$FIO not found (apt-get install -y fio, or set FIO)"
command -v python3 >/dev/null || die "python3 not found: it reads the JSON of both tools"
[[ $IOS =~ ^[1-9][0-9]*$ ]] || die "IOS=$IOS: not a positive integer"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS=$ROUNDS: not a positive integer"
size_bytes=$(numfmt --from=iec "${SIZE^^}" 2>/dev/null) || die "SIZE=$SIZE: not a size (256M, 1G, bytes)"
size_bytes=$((size_bytes / 1048576 * 1048576))
((size_bytes >= 16 * 1048576)) || die "SIZE=$SIZE: at least 16M"

if [[ -z $dir ]]; then
	dir=/var/tmp
	[[ -n ${TMPDIR:-} && -d ${TMPDIR:-} && $(stat -f -c %T "$TMPDIR") != tmpfs ]] && dir=$TMPDIR
fi
[[ -d $dir ]] || die "$dir: not a directory"
# The whole disk under DIR: its number from stat(1), a partition's parent from sysfs.
sys=/sys/dev/block/$(stat -c '%Hd:%Ld' "$dir")
[[ -e $sys ]] || die "$dir is on $(stat -f -c %T "$dir"), not on a block device"
sys=$(cd "$sys" && pwd -P)
[[ -e $sys/partition ]] && sys=$(dirname "$sys")
disk=${sys##*/}
grep -q " $disk " /proc/diskstats || die "$disk is not in /proc/diskstats"
avail=$(df -P -B1 "$dir" | awk 'NR == 2 { print $4 }')
((avail > size_bytes + 64 * 1048576)) || die "$dir: $((avail >> 20)) MiB free, the test file needs $((size_bytes >> 20)) MiB"

work=$(mktemp -d -p "$dir" .iolens-stat-latency.XXXXXX)
work=$(cd "$work" && pwd)
spinners=()
stop_spinning() {
	[[ ${#spinners[@]} -gt 0 ]] || return 0
	kill "${spinners[@]}" 2>/dev/null || true
	wait "${spinners[@]}" 2>/dev/null || true
	spinners=()
}
cleanup() { stop_spinning; [[ -z ${stat:-} ]] || kill "$stat" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

prefix=()
chrt -f 10 true 2>/dev/null && prefix=(chrt -f 10)
echo "# $disk (queue/rotational $(cat "$sys/queue/rotational" 2>/dev/null), scheduler $(sed 's/.*\[\(.*\)\].*/\1/' "$sys/queue/scheduler" 2>/dev/null)), $(nproc) cpus, kernel $(uname -r), $("$FIO" --version)"
echo "# fio --rw=randread --bs=$BS --direct=1 --ioengine=psync --number_ios=$IOS${prefix:+ under ${prefix[*]}}$([[ $SPIN = 1 ]] && echo ", every CPU kept busy by a SCHED_IDLE loop")"
"$FIO" --name=layout --filename="$work/data" --size="$size_bytes" --rw=write --bs=1m --ioengine=psync --direct=1 \
	--end_fsync=1 --output=/dev/null 2>"$work/layout.err" || die "laying out the test file failed: $(tail -n 3 "$work/layout.err")"

# One round: stat -x's JSON line that holds the whole run ($work/stat.json) and fio's JSON ($work/fio.json).
lines() { wc -l <"$work/stat.json" 2>/dev/null || echo 0; }
wait_lines() { local deadline=$((SECONDS + 600)); while [[ $(lines) -lt $1 ]]; do ((SECONDS < deadline)) || die "stat -x printed no line in 10 min"; sleep 0.05; done; }
measure() {
	local interval n
	for interval in 2 4 8 16 32 64; do
		"$IOLENS" stat -x -D "$disk" --no-boot-sample --json "$interval" >"$work/stat.json" 2>"$work/stat.err" &
		stat=$!
		wait_lines 1
		if [[ $SPIN = 1 ]]; then
			for cpu in $(seq 0 $(($(nproc) - 1))); do
				taskset -c "$cpu" chrt -i 0 sh -c 'while :; do :; done' &
				spinners+=($!)
			done
		fi
		"${prefix[@]}" "$FIO" --name=lat --filename="$work/data" --readonly --rw=randread --bs="$BS" --direct=1 \
			--ioengine=psync --number_ios="$IOS" --size="$size_bytes" --randrepeat=0 --norandommap \
			--output-format=json >"$work/fio.json" 2>"$work/fio.err" || die "fio failed: $(tail -n 3 "$work/fio.err")"
		stop_spinning
		n=$(lines)
		wait_lines $((n + 1))
		kill "$stat" 2>/dev/null || true
		wait "$stat" 2>/dev/null || true
		stat=
		grep -q "latency percentiles are unknown" "$work/stat.err" && die "stat -x has no percentiles here: $(head -n 1 "$work/stat.err")"
		[[ $n = 1 ]] && return 0
	done
	die "fio's $IOS reads outlasted a 64 s interval"
}

cat >"$work/pair.py" <<'EOF'
import json, sys
stat, fio, disk, ios = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
line = json.loads(open(stat).read().splitlines()[1])["dskext_" + disk]
clat = json.load(open(fio))["jobs"][0]["read"]["clat_ns"]["percentile"]
# Others' reads of the disk (the journal, other programs) are in the histogram too: said, not hidden.
print(line["r_p50_ns"], line["r_p99_ns"], clat["50.000000"], clat["99.000000"], line["r_lat_count"], ios)
EOF
printf '%-6s %10s %10s %10s %10s %7s %7s %9s %9s %s\n' round r_p50_us fio_p50_us r_p99_us fio_p99_us p50 p99 gap50_us gap99_us "reads (fio's)"
results=()
for round in $(seq 1 "$ROUNDS"); do
	measure
	read -r ours50 ours99 fio50 fio99 count ios < <(python3 "$work/pair.py" "$work/stat.json" "$work/fio.json" "$disk" "$IOS")
	results+=("$ours50 $ours99 $fio50 $fio99 $count $ios")
	awk -v r="$round" -v a="$ours50" -v b="$fio50" -v c="$ours99" -v d="$fio99" -v n="$count" -v i="$ios" 'BEGIN {
		printf "%-6s %10.1f %10.1f %10.1f %10.1f %7.3f %7.3f %9.1f %9.1f %d (%d)\n", r, a / 1e3, b / 1e3, c / 1e3, d / 1e3,
			a / b, c / d, (b - a) / 1e3, (d - c) / 1e3, n, i }'
done
cat >"$work/summary.py" <<'EOF'
import statistics, sys
sys.path.insert(0, sys.argv[1])
import verdict
rows = [list(map(float, l.split())) for l in sys.stdin]
o50, o99, f50, f99 = (statistics.median(r[i] for r in rows) for i in range(4))
print("%-6s %10.1f %10.1f %10.1f %10.1f %7.3f %7.3f %9.1f %9.1f" % ("median", o50 / 1e3, f50 / 1e3, o99 / 1e3, f99 / 1e3,
      o50 / f50, o99 / f99, (f50 - o50) / 1e3, (f99 - o99) / 1e3))
# Ours is a part of each of fio's reads (a request inside its pread): a ratio above the goal's upper
# end by the goal's own width again was made by other programs' reads in the histogram: disturbed.
p50 = verdict.judge([r[0] / r[2] if r[2] else None for r in rows], "0.95..1.05", plausible="..1.10")
p99 = verdict.judge([r[1] / r[3] if r[3] else None for r in rows], "0.90..1.10", plausible="..1.20")
print("goal (stat -x within 5 %% of fio at p50, 10 %% at p99, each round's ours / fio's): %s" % verdict.combine([p50, p99]))
print("  p50: %s" % p50)
print("  p99: %s" % p99)
met = verdict.exit_status([p50, p99]) == 0
if any(r[4] > r[5] * 1.01 for r in rows):
    print("  (a round whose histogram holds more reads than fio made: other programs' reads of the disk, or fio's")
    print("  reads split into several requests by the queue's limits, max_segments or max_sectors_kb)")
if not met:
    print("  fio - ours at p50: %.1f us, fio's own part of each read (see the usage): %.0f %% of fio's p50 here" %
          ((f50 - o50) / 1e3, 100 * (f50 - o50) / f50))
sys.exit(verdict.exit_status([p50, p99]))
EOF
printf '%s\n' "${results[@]}" | python3 "$work/summary.py" "$repo/bench"
