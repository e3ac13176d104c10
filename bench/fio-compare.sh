#!/usr/bin/env bash
# Measures `iolens bench` against fio on the same file with the same four jobs (sequential read and write 1M direct QD1, random read 4k QD1 psync, random read 4k QD32 io_uring), alternating: MB/s, CPU per I/O and QD1 latency percentiles of both, and their ratios against the goals.
set -euo pipefail

usage="usage: ${0##*/} [--size SIZE] [--rounds N] [--runtime SECONDS] [DIR]
  Lays out one test file of SIZE in a new directory under DIR (written with fio, not fallocated;
  removed at the end, on Ctrl-C too), then runs each job ROUNDS times with fio and with iolens
  bench, the two tools alternating (which goes first swaps every round), both direct (O_DIRECT),
  time-based for RUNTIME seconds, on the same file:
    seq-read    --rw read     --bs 1m  QD1   psync
    seq-write   --rw write    --bs 1m  QD1   psync
    rand-read   --rw randread --bs 4k  QD1   psync
    rand-read32 --rw randread --bs 4k  QD32  io_uring
  and prints per job the medians over the rounds of both tools and iolens / fio: MB/s, IOPS,
  CPU (user + system) per I/O, and for the QD1 jobs the mean, p50, p90 and p99 latency.
  Goals (from the issue), each judged at the end by bench/verdict.py on each round's own
  iolens / fio (the two runs of a round back to back), for every job:
    throughput within 5 % of fio's (0.95 <= iolens/fio MB/s <= 1.05);
    no more CPU per I/O than fio (iolens/fio <= 1);
    QD1 latency percentiles within 5 % of fio's (p50, p90 and p99 of the three QD1 jobs).
  A goal is met when the rounds agree (all of 3, 4 of 5; their spread (max - min) / median within
  10 % or their margin to the limit) for every job, NOT met when they agree it is missed for one,
  else undecided. Exit status 0 all met, 1 one not met (or an error), 3 one undecided.
  With the defaults it takes about 2 min 10 s (24 runs of 5 s).
DIR: where the test directory is made (default: \$TMPDIR when set and not on tmpfs, else the
  current directory); it must be on a disk, not tmpfs, with SIZE free.
env: SIZE (default 1G; K, M, G, T are powers of 1024), ROUNDS (default 3), RUNTIME (whole seconds,
  default 5), IOLENS (default ./iolens of this repository), FIO (default fio), FIO_OPTS (more options
  for every fio job, e.g. --scramble_buffers=0); the options win."
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
FIO=${FIO:-fio}
read -r -a fio_opts <<<"${FIO_OPTS:-}"
SIZE=${SIZE:-1G}
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-5}
dir=""
while (($#)); do
	case $1 in
	-h | --help) echo "$usage"; exit 0 ;;
	--size) SIZE=${2:?"$usage"}; shift 2 ;;
	--size=*) SIZE=${1#*=}; shift ;;
	--rounds) ROUNDS=${2:?"$usage"}; shift 2 ;;
	--rounds=*) ROUNDS=${1#*=}; shift ;;
	--runtime) RUNTIME=${2:?"$usage"}; shift 2 ;;
	--runtime=*) RUNTIME=${1#*=}; shift ;;
	-*) echo "$usage" >&2; exit 2 ;;
	*) [[ -z $dir ]] || { echo "$usage" >&2; exit 2; }; dir=$1; shift ;;
	esac
done

die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ -x $IOLENS ]] || die "$IOLENS: not an executable (run make, or set IOLENS)"
command -v "$FIO" >/dev/null || die "$FIO not found (apt-get install -y fio, or set FIO)"
command -v python3 >/dev/null || die "python3 not found: it reads the JSON of both tools"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS=$ROUNDS: not a positive integer"
[[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || die "RUNTIME=$RUNTIME: not a whole number of seconds"
# Both tools get the size in bytes, so that neither one's reading of "1G" matters; whole MiB, for the 1M jobs.
size_bytes=$(numfmt --from=iec "${SIZE^^}" 2>/dev/null) || die "SIZE=$SIZE: not a size (1G, 512M, bytes)"
size_bytes=$((size_bytes / 1048576 * 1048576))
((size_bytes >= 64 * 1048576)) || die "SIZE=$SIZE: at least 64M, or the random reads hit the device's cache"

if [[ -z $dir ]]; then
	dir=.
	[[ -n ${TMPDIR:-} && -d ${TMPDIR:-} && $(stat -f -c %T "$TMPDIR") != tmpfs ]] && dir=$TMPDIR
fi
[[ -d $dir ]] || die "$dir: not a directory"
fs_type=$(stat -f -c %T "$dir")
case $fs_type in tmpfs | ramfs) die "$dir is on $fs_type: the comparison needs a disk (give a DIR on one)" ;; esac
avail=$(df -P -B1 "$dir" | awk 'NR == 2 { print $4 }')
((avail > size_bytes + 64 * 1048576)) || die "$dir: $((avail >> 20)) MiB free, the test file needs $((size_bytes >> 20)) MiB"

work=$(mktemp -d -p "$dir" .iolens-fio-compare.XXXXXX)
work=$(cd "$work" && pwd)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
file=$work/testfile

# The jobs: name, --rw, --bs, queue depth, engine, label.
jobs=(seq-read seq-write rand-read rand-read32)
declare -A rw bs qd engine
rw=([seq-read]=read [seq-write]=write [rand-read]=randread [rand-read32]=randread)
bs=([seq-read]=1m [seq-write]=1m [rand-read]=4k [rand-read32]=4k)
qd=([seq-read]=1 [seq-write]=1 [rand-read]=1 [rand-read32]=32)
engine=([seq-read]=psync [seq-write]=psync [rand-read]=psync [rand-read32]=io_uring)

# set_argv TOOL JOB puts the command line in $argv. The parameters match:
# - both direct, time-based for RUNTIME s over the first SIZE bytes of the file, no ramp, one job;
# - random offsets: fio's default random map and iolens's permutation both read every block once a
#   pass (no --norandommap);
# - writes: both fill their buffers with random bytes once and change them before each write, so that
#   no two blocks written are alike (no deduplication): iolens stamps the offset and a number into
#   every 4 KiB, fio its default scramble_buffers=1 the offset and the time into every 512 bytes,
#   which costs fio more (about 45 us of user CPU per 1M write on a 2-vCPU VM; FIO_OPTS=
#   --scramble_buffers=0 leaves it out, to compare the bare I/O paths).
set_argv() {
	local tool=$1 job=$2
	case $tool in
	fio)
		argv=("$FIO" --name=fio-compare --filename="$file" --size="$size_bytes" --rw="${rw[$job]}"
			--bs="${bs[$job]}" --iodepth="${qd[$job]}" --ioengine="${engine[$job]}" --direct=1
			--runtime="$RUNTIME" --time_based --output-format=json)
		argv+=("${fio_opts[@]}")
		;;
	iolens)
		argv=("$IOLENS" bench --rw "${rw[$job]}" --bs "${bs[$job]}" --qd "${qd[$job]}" --engine "${engine[$job]}"
			--size "$size_bytes" --runtime "$RUNTIME" --time-based --json --force "$file")
		;;
	esac
}
describe() { local argv; set_argv "$@"; local text="${argv[*]/#"$IOLENS"/iolens}"; echo "${text//"$file"/F}"; }

src_dev=$(findmnt -n -o SOURCE,FSTYPE -T "$work" 2>/dev/null | head -n 1 | awk '{ print $2 " on " $1 }') || true
built=""
[[ $IOLENS -ef $repo/iolens ]] && built=", tree $(git -C "$repo" describe --always --dirty 2>/dev/null || echo "not a git tree")"
echo "fio-compare: iolens = $IOLENS ($("$IOLENS" --version 2>/dev/null | head -n 1)$built), $("$FIO" --version)," \
	"$(nproc) cpus, kernel $(uname -r)"
echo "file F: $((size_bytes >> 20)) MiB in $work (${src_dev:-$fs_type}); $ROUNDS rounds of each job," \
	"each tool time-based for $RUNTIME s, alternating"

# The test file, written once (fio's default buffers: not zeros, which a thin or deduplicating disk would skip).
start_s=$SECONDS
"$FIO" --name=layout --filename="$file" --size="$size_bytes" --rw=write --bs=1m --ioengine=psync --direct=1 \
	--fallocate=none --end_fsync=1 --output-format=terse >/dev/null 2>"$work/layout.err" ||
	die "laying out $file with fio failed: $(tail -n 3 "$work/layout.err")"
[[ $(stat -c %s "$file") -eq $size_bytes ]] || die "$file: $(stat -c %s "$file") bytes after the layout, not $size_bytes"
echo "laid out in $((SECONDS - start_s)) s with fio --rw=write --bs=1m --direct=1 --fallocate=none --end_fsync=1"

echo
echo "commands (F the test file):"
for job in "${jobs[@]}"; do
	printf '  %-11s %s\n' "$job" "$(describe fio "$job")"
	printf '  %-11s %s\n' "" "$(describe iolens "$job")"
done

# One run: the JSON to $work/JOB.TOOL.ROUND.json, stderr to .err; a line on stderr to show progress.
measure() {
	local tool=$1 job=$2 round=$3 argv out=$work/$2.$1.$3
	set_argv "$tool" "$job"
	"${argv[@]}" >"$out.json" 2>"$out.err" || die "$(describe "$tool" "$job") failed: $(tail -n 3 "$out.err")"
	printf '%s: round %d/%d %-11s %-6s %s\n' "${0##*/}" "$round" "$ROUNDS" "$job" "$tool" \
		"$(python3 "$work/extract.py" "$tool" "$out.json" mbps) MB/s" >&2
}

# The figures of one run, from either tool's JSON, as "key=value" lines (or one value with a 3rd argument).
# Latency: iolens times from just before the syscall (psync) or the submission (io_uring) to the
# completion. For psync, that is fio's clat (issue_time, set just before the engine's queue(), to
# completion; fio's lat adds its own preparation of the request from start_time, and slat is
# empty): fio's clat percentiles are compared. At QD32 io_uring, iolens's latency would be fio's lat,
# whose percentiles fio gives only with --lat_percentiles (which costs it CPU): not compared there.
# CPU: fio's usr_cpu and sys_cpu are percent of the job's runtime (job_runtime, ms) of the job
# thread's getrusage, so CPU s per I/O = (usr_cpu + sys_cpu) / 100 * job_runtime / 1000 / total_ios;
# iolens's cpu.user_ns_per_io + sys_ns_per_io are of the whole process over the measured phase.
cat >"$work/extract.py" <<'EOF'
import json, sys
tool, path = sys.argv[1], sys.argv[2]
with open(path) as f:
    doc = json.load(f)
out = {}
if tool == "fio":
    job = doc["jobs"][0]
    if job.get("error"):
        sys.exit(f"fio job error {job['error']}")
    d = job["write"] if job["write"]["total_ios"] else job["read"]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    out["mbps"] = d["bw_bytes"] / 1e6
    out["iops"] = d["iops"]
    cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] / 1000
    out["cpu_us"] = cpu_s / ios * 1e6 if ios else 0
    clat = d["clat_ns"]
    out["mean_us"] = clat["mean"] / 1e3
    for key, q in (("p50_us", "50.000000"), ("p90_us", "90.000000"), ("p99_us", "99.000000")):
        out[key] = clat["percentile"][q] / 1e3
    out["ios"] = ios
else:
    p = doc["points"][0]
    out["mbps"] = p["bytes_per_s"] / 1e6
    out["iops"] = p["iops"]
    out["cpu_us"] = (p["cpu"]["user_ns_per_io"] + p["cpu"]["sys_ns_per_io"]) / 1e3
    lat = p["lat_ns"]
    out["mean_us"] = lat["mean"] / 1e3
    for key in ("p50", "p90", "p99"):
        out[key + "_us"] = lat[key] / 1e3
    out["ios"] = (p.get("read") or {}).get("ios", 0) + (p.get("write") or {}).get("ios", 0)
if len(sys.argv) > 3:
    print(f"{out[sys.argv[3]]:.1f}")
else:
    for k, v in out.items():
        print(f"{k}={v}")
EOF

echo
for ((round = 1; round <= ROUNDS; round++)); do
	if ((round % 2)); then order=(fio iolens); else order=(iolens fio); fi
	for job in "${jobs[@]}"; do
		for tool in "${order[@]}"; do measure "$tool" "$job" "$round"; done
	done
done

# The table and the goals, from all the JSON files.
status=0
python3 - "$repo/bench" "$work" "$ROUNDS" "${jobs[@]}" <<'EOF' || status=$?
import json, os, statistics, subprocess, sys
sys.path.insert(0, sys.argv.pop(1))
import verdict
work, rounds, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
extract = os.path.join(work, "extract.py")
label = {"seq-read": "read 1m QD1 psync", "seq-write": "write 1m QD1 psync",
         "rand-read": "randread 4k QD1 psync", "rand-read32": "randread 4k QD32 io_uring"}
qd1 = [j for j in jobs if j != "rand-read32"]
runs = {}
for job in jobs:
    for tool in ("fio", "iolens"):
        rows = []
        for r in range(1, rounds + 1):
            text = subprocess.run([sys.executable, extract, tool, f"{work}/{job}.{tool}.{r}.json"],
                                  check=True, capture_output=True, text=True).stdout
            rows.append({k: float(v) for k, v in (line.split("=") for line in text.split())})
        runs[job, tool] = rows
med = {key: {k: statistics.median(r[k] for r in rows) for k in rows[0]} for key, rows in runs.items()}

def spread(job, tool):  # (max - min) / median of MB/s over the rounds, percent
    v = [r["mbps"] for r in runs[job, tool]]
    m = statistics.median(v)
    return 100 * (max(v) - min(v)) / m if m else 0

def ratio(job, k):
    f = med[job, "fio"][k]
    return med[job, "iolens"][k] / f if f else float("nan")

cols = ("MB/s", "+-%", "IOPS", "CPU us/IO", "mean us", "p50 us", "p90 us", "p99 us")
print()
print(f"medians of {rounds} rounds; +-% is the spread of MB/s over the rounds, (max - min) / median;")
print("latency: fio's clat, iolens's lat_ns (both from just before the syscall to its return), QD1 only;")
print("CPU: user + system per I/O (fio: the job thread's usr_cpu + sys_cpu; iolens: the process's)")
print(f"{'job':<27} {'tool':<13}" + "".join(f"{c:>10}" for c in cols))
for job in jobs:
    for tool in ("fio", "iolens"):
        m = med[job, tool]
        lat = [f"{m[k]:10.1f}" for k in ("mean_us", "p50_us", "p90_us", "p99_us")] if job in qd1 else [f"{'-':>10}"] * 4
        print(f"{label[job] if tool == 'fio' else '':<27} {tool:<13}{m['mbps']:10.1f}{spread(job, tool):10.1f}"
              f"{m['iops']:10.0f}{m['cpu_us']:10.2f}" + "".join(lat))
    lat = [f"{ratio(job, k):9.3f}x" for k in ("mean_us", "p50_us", "p90_us", "p99_us")] if job in qd1 else [f"{'-':>10}"] * 4
    print(f"{'':<27} {'iolens / fio':<13}{ratio(job, 'mbps'):9.3f}x{'':>10}{ratio(job, 'iops'):9.3f}x"
          f"{ratio(job, 'cpu_us'):9.3f}x" + "".join(lat))
print()
print("MB/s of each round (fio | iolens):")
for job in jobs:
    print(f"  {label[job]:<27}" + " ".join(f"{r['mbps']:8.1f}" for r in runs[job, "fio"]) + "  |"
          + " ".join(f"{r['mbps']:8.1f}" for r in runs[job, "iolens"]))

goals = []
def goal(text, goal_range, judged):
    """JUDGED: (name, job, key): each judged on its rounds' own iolens / fio of KEY in JOB."""
    verdicts = []
    for name, job, key in judged:
        figures = [i[key] / f[key] if f[key] else None for f, i in zip(runs[job, "fio"], runs[job, "iolens"])]
        verdicts.append((name, verdict.judge(figures, goal_range)))
    goals.append(verdict.combine(v for _, v in verdicts))
    print(f"goal: {text}: {goals[-1]}")
    for name, v in verdicts:
        print(f"  {name}: {v}")

print()
goal("throughput within 5 % of fio's (each round's iolens/fio MB/s in 0.95..1.05)", "0.95..1.05",
     [(label[j], j, "mbps") for j in jobs])
goal("CPU per I/O no more than fio's (each round's iolens/fio <= 1)", "<= 1",
     [(label[j], j, "cpu_us") for j in jobs])
goal("QD1 latency percentiles within 5 % of fio's (p50, p90, p99; each round's iolens/fio in 0.95..1.05)", "0.95..1.05",
     [(f"{label[j]} {k[:3]}", j, k) for j in qd1 for k in ("p50_us", "p90_us", "p99_us")])
sys.exit(verdict.exit_status(goals))
EOF
[[ $status == [013] ]] || die "reading the results failed"

# iolens's own warnings (the device moved more or less than the application: other processes, read-ahead).
warned=$(grep -l . "$work"/*.iolens.*.err | wc -l || true)
if ((warned)); then
	echo
	echo "iolens warned in $warned of its $((ROUNDS * ${#jobs[@]})) runs (it compares its bytes with the device's), e.g.:"
	echo "  $(cat "$work"/*.iolens.*.err | head -n 1)"
fi
echo
echo "took $((SECONDS - start_s)) s after the checks (layout, $((ROUNDS * ${#jobs[@]} * 2)) runs of $RUNTIME s, the table)"
exit "$status"
