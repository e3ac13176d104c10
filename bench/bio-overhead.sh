#!/usr/bin/env bash
# Measures what iolens's block I/O eBPF program (bio.bpf.c, loaded by `iolens stat -x`, or by `iolens biotop` with --with biotop) costs random 4k reads at queue depth 32: fio's IOPS with and without `iolens stat -x 1` beside it, alternating, medians, the ratio and the issue's goal (at most 3 % fewer IOPS).
set -euo pipefail

usage="usage: ${0##*/} [--rounds N] [--runtime SECONDS] [--size SIZE] [--engine io_uring|libaio] [--target file|loop] [--with stat|biotop] [--jobs N|cpus] [--hog] [DIR]
  ROUNDS times (default 5), the two configurations alternating (which goes first swaps every
  round), runs fio --rw=randread --bs=4k --iodepth=32 --direct=1 --time_based for RUNTIME seconds
  (default 5) with ENGINE (default io_uring) on the target:
    none   fio alone
    stat   fio with \`iolens stat -x 1\` running beside it (started before fio, once it has printed
           its first line: bio.bpf.c is attached to block_rq_issue, block_rq_merge and block_rq_complete by
           then, the disks' histograms alone; stopped with SIGINT after fio)
    biotop with --with biotop: \`iolens biotop 1\` instead (per process: block_io_start, or
           block_getrq and block_rq_insert as IOLENS_BIO_MECHANISM or the kernel chooses, and
           the processes' map); the lines below then say biotop where they say stat
  --jobs: fio jobs (numjobs, default 1; cpus: one per CPU), each with its queue of 32, so that
  every CPU makes and completes requests at once, as on a busy server: the programs' shared
  counts then move between the CPUs' caches, the cost a user measures there.
  --hog: a busy loop of the lowest priority (nice 19) on each CPU through every run, as a machine
  with other work: no CPU idles, none wakes from a halt for a completion. The CPUs' busy time per
  read (below) then holds the loops' time: its share is left out.
  Targets: file (default) a file of SIZE in a new directory under DIR (on a disk: each read is a
  request of that disk); loop, a loop device over a file of SIZE in /dev/shm (memory: the fastest
  requests this machine makes, where a per-request cost shows most).
  Before each run it waits (up to QUIET_WAIT seconds, once) until no other fio runs and no other
  process has bio.bpf.c's programs loaded (another stat -x, export --collector.disklatency, a
  test): they would take the CPUs or count the same requests; each run says the load average
  before it.
  Prints each run's IOPS, then the median IOPS of each configuration with the lowest and highest
  run (ranges that overlap widely say the machine was too busy to tell), stat / none, and each
  round's own stat / none (its two runs back to back, under much the same load), on which the goal
  (IOPS with stat at least 97 % of without) is judged by bench/verdict.py: met when the rounds
  agree (all of 3, 4 of 5, their spread (max - min) / median within 10 %), NOT met when they agree
  that it is missed, else undecided; a round with more than 5 % more IOPS with stat than without
  (a tracer only adds work) is disturbed, counted on neither side. Then (PROG_STATS=1, the default,
  with kernel.bpf_stats_enabled=1 for that run only, restored after) one more run with stat: each
  of bio.bpf.c's programs' runs and ns per run, the ns they add per read, and their share of the
  CPU time each read takes (the busy time of all CPUs in /proc/stat over the run, per read): where
  the CPUs are the limit, the IOPS they cost, a figure a noisy machine does not move as it moves IOPS.
  bpf_stats adds its own clock reads to every run it counts: that run also loads an empty program
  (IOLENS_BIO_FLOOR=1), whose ns per run is taken from the others' (both figures are printed).
  Exit status 0 when the goal is met, 1 when it is not (or on an error), 3 when undecided.
  Needs root (eBPF, and the loop device).
  With the defaults about a minute (11 runs of 5 s).
DIR: where the file target is made (default: \$TMPDIR when set and not on tmpfs, else /var/tmp,
  else the current directory); on a disk, with SIZE free.
env: ROUNDS, RUNTIME, SIZE (default 256M), ENGINE, TARGET, WITH (default stat), JOBS, HOG (1 or 0), IOLENS (default ./iolens of this
  repository), FIO (default fio), PROG_STATS (1 or 0), QUIET_WAIT (seconds, default 120); the
  options win."

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
FIO=${FIO:-fio}
ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-5}
SIZE=${SIZE:-256M}
ENGINE=${ENGINE:-io_uring}
TARGET=${TARGET:-file}
WITH=${WITH:-stat}
PROG_STATS=${PROG_STATS:-1}
QUIET_WAIT=${QUIET_WAIT:-120}
JOBS=${JOBS:-1}
HOG=${HOG:-0}
GOAL_RATIO=0.97
dir=""
while (($#)); do
	case $1 in
	-h | --help) echo "$usage"; exit 0 ;;
	--rounds) ROUNDS=${2:?"$usage"}; shift 2 ;;
	--rounds=*) ROUNDS=${1#*=}; shift ;;
	--runtime) RUNTIME=${2:?"$usage"}; shift 2 ;;
	--runtime=*) RUNTIME=${1#*=}; shift ;;
	--size) SIZE=${2:?"$usage"}; shift 2 ;;
	--size=*) SIZE=${1#*=}; shift ;;
	--engine) ENGINE=${2:?"$usage"}; shift 2 ;;
	--engine=*) ENGINE=${1#*=}; shift ;;
	--target) TARGET=${2:?"$usage"}; shift 2 ;;
	--target=*) TARGET=${1#*=}; shift ;;
	--with) WITH=${2:?"$usage"}; shift 2 ;;
	--with=*) WITH=${1#*=}; shift ;;
	--jobs) JOBS=${2:?"$usage"}; shift 2 ;;
	--jobs=*) JOBS=${1#*=}; shift ;;
	--hog) HOG=1; shift ;;
	-*) echo "$usage" >&2; exit 2 ;;
	*) [[ -z $dir ]] || { echo "$usage" >&2; exit 2; }; dir=$1; shift ;;
	esac
done

die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (stat -x loads eBPF; the loop target needs losetup)"
[[ -x $IOLENS ]] || die "$IOLENS: not an executable (run make, or set IOLENS)"
command -v "$FIO" >/dev/null || die "$FIO not found (apt-get install -y fio, or set FIO)"
command -v python3 >/dev/null || die "python3 not found: it reads fio's JSON"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS=$ROUNDS: not a positive integer"
[[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || die "RUNTIME=$RUNTIME: not a whole number of seconds"
[[ $PROG_STATS == [01] ]] || die "PROG_STATS=$PROG_STATS: 0 or 1"
[[ $QUIET_WAIT =~ ^[0-9]+$ ]] || die "QUIET_WAIT=$QUIET_WAIT: whole seconds"
[[ $JOBS == cpus ]] && JOBS=$(nproc)
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "JOBS=$JOBS: a positive integer, or cpus"
[[ $HOG == [01] ]] || die "HOG=$HOG: 0 or 1"
case $ENGINE in io_uring | libaio) ;; *) die "ENGINE=$ENGINE: io_uring or libaio" ;; esac
case $TARGET in file | loop) ;; *) die "TARGET=$TARGET: file or loop" ;; esac
case $WITH in
stat) with_cmd=(stat -x 1) with_programs=3 ;;
biotop) with_cmd=(biotop 1) with_programs=3 ;;
*) die "WITH=$WITH: stat or biotop" ;;
esac
size_bytes=$(numfmt --from=iec "${SIZE^^}" 2>/dev/null) || die "SIZE=$SIZE: not a size (256M, 1G, bytes)"
size_bytes=$((size_bytes / 1048576 * 1048576))
((size_bytes >= 16 * 1048576)) || die "SIZE=$SIZE: at least 16M"
bpftool=$(command -v bpftool || true)

if [[ $TARGET == loop ]]; then
	command -v losetup >/dev/null || die "losetup not found (util-linux)"
	dir=/dev/shm
elif [[ -z $dir ]]; then
	for candidate in "${TMPDIR:-}" /var/tmp .; do
		[[ -n $candidate && -d $candidate ]] || continue
		case $(stat -f -c %T "$candidate") in tmpfs | ramfs) continue ;; esac
		dir=$candidate
		break
	done
	[[ -n $dir ]] || die "no directory on a disk found (give a DIR)"
fi
[[ -d $dir ]] || die "$dir: not a directory"
if [[ $TARGET == file ]]; then
	case $(stat -f -c %T "$dir") in tmpfs | ramfs) die "$dir is on tmpfs: the file target must be on a disk (or --target loop)" ;; esac
fi
avail=$(df -P -B1 "$dir" | awk 'NR == 2 { print $4 }')
((avail > size_bytes + 64 * 1048576)) || die "$dir: $((avail >> 20)) MiB free, the test file needs $((size_bytes >> 20)) MiB"

work=$(mktemp -d -p "$dir" .iolens-bio-overhead.XXXXXX)
loopdev=""
stat_pid=""
stats_saved=""
hogs=()
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	stop_stat
	((${#hogs[@]} == 0)) || kill "${hogs[@]}" 2>/dev/null || true
	[[ -z $stats_saved ]] || sysctl -q -w kernel.bpf_stats_enabled="$stats_saved" >/dev/null 2>&1 || true
	[[ -z $loopdev ]] || losetup -d "$loopdev" 2>/dev/null || true
	rm -rf "$work"
}
stop_stat() {
	if [[ -n $stat_pid ]]; then
		kill -INT "$stat_pid" 2>/dev/null || true
		wait "$stat_pid" 2>/dev/null || true
	fi
	stat_pid=""
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A copy of iolens for the whole run: a rebuild of the tree meanwhile changes nothing measured.
cp "$IOLENS" "$work/iolens"
IOLENS=$work/iolens

# The file, written (not fallocated: reads of unwritten extents never reach the disk) and synced.
"$FIO" --name=layout --filename="$work/data" --rw=write --bs=1m --size="$size_bytes" --direct=1 \
	--ioengine=psync --output=/dev/null || die "cannot write $work/data"
target=$work/data
if [[ $TARGET == loop ]]; then
	loopdev=$(losetup -f --show "$work/data") || die "losetup failed"
	target=$loopdev
fi
target_disk=$(basename "$(df -P "$work" | awk 'NR == 2 { print $1 }')")
[[ $TARGET == loop ]] && target_disk=${loopdev#/dev/}

# The ids of bio.bpf.c's programs loaded by anyone, one a line (bpftool lists them by name).
bio_programs() {
	[[ -n $bpftool ]] || return 0
	"$bpftool" prog show --json 2>/dev/null | python3 -c 'import json, sys
for p in json.load(sys.stdin):
    if p.get("name") in ("on_start", "on_getrq", "on_insert", "on_issue", "on_complete", "on_merge", "on_floor") and p.get("type") == "tracing":
        print(p["id"])'
}
other_fio() { pgrep -x fio >/dev/null; }
# Waits until the machine is quiet of our kind of load (another fio; another stat -x or export
# --collector.disklatency counting the same requests); says so when it gave up, and from then on
# measures without waiting.
gave_up=""
wait_quiet() {
	local waited=0
	[[ -z $gave_up ]] || return 0
	while other_fio || [[ -n $(bio_programs) ]]; do
		if ((waited >= QUIET_WAIT)); then
			echo "# not quiet after ${QUIET_WAIT}s (another fio: $(other_fio && echo yes || echo no), bio.bpf.c programs loaded by others: $(bio_programs | wc -l)): measuring anyway, every run" >&2
			gave_up=1
			return
		fi
		sleep 1
		waited=$((waited + 1))
	done
}
start_stat() {
	local before
	before=$(bio_programs)
	"$IOLENS" "${with_cmd[@]}" >"$work/stat.out" 2>"$work/stat.err" &
	stat_pid=$!
	for _ in $(seq 600); do
		[[ -s $work/stat.out ]] && break
		kill -0 "$stat_pid" 2>/dev/null || die "iolens ${with_cmd[*]} ended: $(head -3 "$work/stat.err")"
		sleep 0.05
	done
	[[ -s $work/stat.out ]] || die "iolens ${with_cmd[*]} printed nothing in 30 s"
	! grep -q 'latency percentiles are unknown' "$work/stat.err" || die "stat -x did not load eBPF: $(head -1 "$work/stat.err")"
	# Its programs (stat -x: 3, disks alone need no block_io_start; biotop: 4): ids that were not
	# there before (others' may come and go meanwhile).
	for _ in $(seq 200); do
		[[ -z $bpftool ]] || (($(comm -13 <(sort <<<"$before") <(bio_programs | sort) | grep -c .) >= with_programs)) && return 0
		sleep 0.05
	done
	die "bio.bpf.c's programs of iolens ${with_cmd[*]} are not listed by bpftool 10 s after its first line"
}
# All CPUs' busy time so far, in ns: /proc/stat's first line but idle and iowait (and guest, counted in user).
cpu_busy_ns() {
	awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { printf "%.0f\n", ($2 + $3 + $4 + $7 + $8 + $9) * 1e9 / hz; exit }' /proc/stat
}
# One fio run: its read IOPS and CPU% (usr + sys).
run_fio() {
	"$FIO" --name=randread --filename="$target" --rw=randread --bs=4k --iodepth=32 --direct=1 \
		--ioengine="$ENGINE" --size="$size_bytes" --time_based --runtime="$RUNTIME" --randrepeat=0 \
		--norandommap --numjobs="$JOBS" --group_reporting --output-format=json >"$work/fio.json" 2>"$work/fio.err" ||
		die "fio failed: $(head -3 "$work/fio.err")"
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print("%.1f %.1f" % (j["read"]["iops"], j["usr_cpu"] + j["sys_cpu"]))' "$work/fio.json"
}

# The hogs: a shell loop each, at the lowest priority, for the whole run.
if [[ $HOG == 1 ]]; then
	for ((c = 0; c < $(nproc); c++)); do
		nice -n 19 bash -c 'while :; do :; done' &
		hogs+=($!)
	done
fi
echo "# fio randread 4k QD32 $ENGINE direct x $JOBS job(s), ${RUNTIME}s a run, on $TARGET $target ($((size_bytes >> 20)) MiB, disk $target_disk); $(nproc) CPUs; kernel $(uname -r)$([[ $HOG == 1 ]] && echo "; a nice 19 busy loop on each CPU")"
configs=(none "$WITH") # the second: stat (stat -x 1) or biotop, as --with says
declare -A iops
pair_ratios="" # each round's $WITH / none: its two runs back to back, under much the same load
for ((r = 0; r < ROUNDS; r++)); do
	for ((k = 0; k < 2; k++)); do
		c=${configs[$(((k + r) % 2))]}
		wait_quiet
		load=$(cut -d' ' -f1 /proc/loadavg)
		[[ $c == none ]] || start_stat
		read -r value cpu < <(run_fio)
		stop_stat
		iops[$c]+="$value "
		[[ $c == none ]] && round_none=$value || round_stat=$value
		printf 'round %d %-6s %10.0f IOPS  fio CPU %5.1f %%  load before %s\n' $((r + 1)) "$c" "$value" "$cpu" "$load"
	done
	pair_ratios+="$(awk -v s="$round_stat" -v n="$round_none" 'BEGIN { printf "%.4f", s / n }') "
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
none=$(median <<<"${iops[none]}")
with=$(median <<<"${iops[$WITH]}")
spread() { tr ' ' '\n' | grep . | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f-%.0f", lo, hi }'; }
printf '\n%-6s %10s  %s   (median IOPS of %d runs; lowest-highest)\n' config IOPS range "$ROUNDS"
printf '%-6s %10.0f  %s\n' none "$none" "$(spread <<<"${iops[none]}")" "$WITH" "$with" "$(spread <<<"${iops[$WITH]}")"
awk -v n="$none" -v s="$with" -v w="$WITH" 'BEGIN { r = s / n; printf "%s/none of the medians %.4f (%+.2f %%)\n", w, r, (r - 1) * 100 }'
echo "each round's $WITH/none (its two runs back to back): median $(median <<<"$pair_ratios") of $pair_ratios"
# shellcheck disable=SC2086 # one figure a round
verdict=$(python3 "$repo/bench/verdict.py" --plausible ..1.05 --max-spread 10 ">= $GOAL_RATIO" $pair_ratios) && status=0 || status=$?
[[ $status == [013] ]] || die "bench/verdict.py failed: $verdict"
echo "goal: at most 3 % fewer IOPS with $WITH (each round's $WITH/none >= $GOAL_RATIO): $verdict"

if [[ $PROG_STATS == 1 ]]; then
	if [[ -z $bpftool ]]; then
		echo "# per-program cost left out: bpftool not found"
	else
		wait_quiet
		stats_saved=$(sysctl -n kernel.bpf_stats_enabled)
		sysctl -q -w kernel.bpf_stats_enabled=1
		"$bpftool" prog show --json >"$work/progs0.json"
		# With the empty program on_floor too: its ns per run is what bpf_stats adds to every run.
		export IOLENS_BIO_FLOOR=1
		with_programs=$((with_programs + 1))
		start_stat
		unset IOLENS_BIO_FLOOR
		"$bpftool" prog show --json >"$work/progs1.json"
		busy0=$(cpu_busy_ns)
		read -r value _ < <(run_fio)
		busy1=$(cpu_busy_ns)
		"$bpftool" prog show --json >"$work/progs2.json"
		stop_stat
		sysctl -q -w kernel.bpf_stats_enabled="$stats_saved"
		stats_saved=""
		# Programs of this stat: those in progs1 and not in progs0, counted from progs1 to progs2 (fio's run only).
		python3 - "$work" "$value" "$RUNTIME" "$((busy1 - busy0))" "${with_cmd[*]}" "$HOG" <<'EOF'
import json, sys
work, iops, runtime, busy, command, hog = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6] == "1"
load = lambda n: {p["id"]: p for p in json.load(open("%s/progs%d.json" % (work, n)))}
p0, p1, p2 = load(0), load(1), load(2)
reads = iops * runtime
runs_of = lambda pid: p2[pid].get("run_cnt", 0) - p1[pid].get("run_cnt", 0)
ns_of = lambda pid: p2[pid].get("run_time_ns", 0) - p1[pid].get("run_time_ns", 0)
mine = [pid for pid in sorted(set(p1) - set(p0)) if pid in p2]
floor = next((ns_of(pid) / runs_of(pid) for pid in mine if p2[pid].get("name") == "on_floor" and runs_of(pid)), 0)
total = counted = 0
print("\nbio.bpf.c during one more run with iolens %s (%.0f IOPS, kernel.bpf_stats_enabled=1):" % (command, iops))
for pid in mine:
    if p2[pid].get("name") == "on_floor":
        continue
    runs, ns = runs_of(pid), ns_of(pid)
    counted += ns
    total += max(ns - runs * floor, 0)
    print("  %-12s %10d runs %8.0f ns/run counted, %5.0f less the floor" % (p2[pid].get("name"), runs, ns / runs if runs else 0,
                                                                         max(ns / runs - floor, 0) if runs else 0))
print("  floor: an empty program (on_floor, on block_rq_complete) counted %.0f ns a run: the clock reads of bpf_stats" % floor)
print("  itself, taken from each run above (the call of a program, a few ns, is in neither)")
if reads:
    print("  together %.0f ns per read (%.0f as counted), %.2f %% of one CPU at this rate" % (total / reads, counted / reads, total / runtime / 1e7))
    if busy > 0 and not hog:
        share = total / busy
        print("  the CPUs' busy time per read (/proc/stat, all CPUs): %.0f ns; the programs' share of it: %.2f %% (%.2f %% as counted)"
              % (busy / reads, share * 100, counted / busy * 100))
        print("  (where the CPUs are the limit, IOPS fall by about that share: %s 3 %% in this one run; the goal is judged on"
              % ("within" if share <= 0.03 else "above"))
        print("  the rounds above)")
    elif hog:
        print("  (the CPUs' busy time holds the busy loops': no share of it)")
EOF
	fi
fi
exit "$status"
