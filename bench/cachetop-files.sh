#!/usr/bin/env bash
# Measures iolens cachetop --files with many files read and closed: how long its 1 s intervals last, the share of rows named by their path, how soon Ctrl-C ends it, its memory; rounds of two workloads, a verdict per goal only when the rounds agree.
set -euo pipefail

usage="usage: ${0##*/} [--files N] [--dirs D] [--rounds R] [DIR]
  Makes N files of 4 KiB in D directories of a new directory under DIR (removed at the end).
  Each round, for each workload, with 'iolens cachetop --files --json 1' running (under
  /usr/bin/time): evicts them and reads every one (open, read, close), then evicts them and
  reads them all again, then starts a third reading (of a fifth of them) and sends SIGINT one interval into it.
  The workloads:
    one       one process reads them all, one file of the first directory kept open
    many      short-lived processes (xargs cat, 100 files each, 2 at a time) read them,
              nothing kept open, while fio (or dd) reads and writes the same disk
  Reported, per round, and the verdict of each goal by bench/verdict.py (met only when the
  rounds agree; exit status 0 met, 1 a goal NOT met, 3 a goal undecided):
    interval  interval_ns of every line: median and max (goal: max <= 1.1 s)
    gap       time_ns between lines printed: max (goal: <= 1.1 s)
    named 1   rows of the first reading named by their path (a file read once, in one
              interval, is named from the next interval on: no goal)
    named 2   rows of the second reading named by their path (goal: >= 99 %)
    Ctrl-C    seconds from SIGINT, during the third reading, to the exit (goal: <= 0.25 s)
    CPU, RSS  user + system seconds and maximum resident memory (iolens and its naming child)
DIR: default \$TMPDIR when set and not on tmpfs, else /var/tmp. Defaults: N 100000, D 100, R 3.
env: IOLENS (default ./iolens of this repository)."

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
FILES=100000 DIRS=100 ROUNDS=3 dir=""
while (($#)); do
	case $1 in
	-h | --help) echo "$usage"; exit 0 ;;
	--files) FILES=${2:?"$usage"}; shift 2 ;;
	--dirs) DIRS=${2:?"$usage"}; shift 2 ;;
	--rounds) ROUNDS=${2:?"$usage"}; shift 2 ;;
	-*) echo "$usage" >&2; exit 2 ;;
	*) dir=$1; shift ;;
	esac
done
die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "cachetop --files needs root for eBPF"
[[ -x $IOLENS ]] || die "$IOLENS: not an executable (run make, or set IOLENS)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is needed (apt-get install time)"
[[ $FILES =~ ^[1-9][0-9]*$ && $DIRS =~ ^[1-9][0-9]*$ && $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "N, D and R are whole numbers"
if [[ -z $dir ]]; then
	for candidate in "${TMPDIR:-}" /var/tmp; do
		[[ -n $candidate && -d $candidate ]] || continue
		case $(stat -f -c %T "$candidate") in tmpfs | ramfs) continue ;; esac
		dir=$candidate
		break
	done
fi
[[ -d $dir ]] || die "no directory on a disk (give a DIR)"

work=$(mktemp -d -p "$dir" .iolens-cachetop-files.XXXXXX)
top="" busy="" reader=""
cleanup() {
	for p in $top $busy $reader; do kill -KILL "$p" 2>/dev/null || true; done
	exec 3<&- 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

python3 - "$work/tree" "$FILES" "$DIRS" <<'EOF'
import os, sys
top, n, dirs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.mkdir(top)
for d in range(dirs):
    os.mkdir("%s/d%03d" % (top, d))
block = os.urandom(4096)
for i in range(n):
    with open("%s/d%03d/f%06d" % (top, i % dirs, i), "wb") as f:
        f.write(block)
EOF
sync
find "$work/tree" -type f | sort >"$work/list"
head -n $((FILES / 5 + 1)) "$work/list" >"$work/list3" # the third reading, cut short by Ctrl-C

lines() { wc -l <"$work/top.json"; }
wait_line() { local n; n=$(lines); until (($(lines) > n)); do sleep 0.05; done; }
evict() { "$IOLENS" evict -R "$work/tree" >/dev/null; }
read_one() { python3 -c 'import sys
for p in open(sys.argv[1]).read().split():
    with open(p, "rb") as f: f.read()' "${1:-$work/list}"; }
read_many() { xargs -n 100 -P 2 cat <"${1:-$work/list}" >/dev/null; }
disk_busy() {
	if command -v fio >/dev/null; then
		exec fio --name=busy --filename="$work/busy" --size=256m --rw=randrw --direct=1 --bs=64k \
			--time_based --runtime=3600 --output=/dev/null
	fi
	dd if=/dev/zero of="$work/busy" bs=1M count=256 oflag=direct status=none
	while :; do dd if="$work/busy" of="$work/busy" bs=1M conv=notrunc iflag=direct oflag=direct status=none; done
}

# round WORKLOAD N: one round; appends its figures to $work/results.
round() {
	local workload=$1 number=$2 reading timer start1 end1 start2 end2 sigint ended
	reading=read_one
	[[ $workload == one ]] && exec 3<"$work/tree/d000/f000000"
	if [[ $workload == many ]]; then
		reading=read_many
		disk_busy &
		busy=$!
	fi
	evict
	: >"$work/top.json"
	/usr/bin/time -f "%U %S %M" -o "$work/time" "$IOLENS" cachetop --files --json 1 >"$work/top.json" 2>"$work/top.err" &
	timer=$!
	until top=$(pgrep -P "$timer" -x iolens); do sleep 0.05; done # time(1) passes no SIGINT on: signal iolens
	until [[ -s $work/top.json ]]; do sleep 0.1; done
	start1=$(lines)
	$reading
	end1=$(lines)
	wait_line
	evict
	start2=$(lines)
	$reading
	end2=$(lines)
	wait_line
	evict
	$reading "$work/list3" &
	reader=$!
	wait_line
	sigint=$(date +%s.%N)
	kill -INT "$top"
	while kill -0 "$top" 2>/dev/null; do sleep 0.005; done
	ended=$(date +%s.%N)
	wait "$timer" || true
	top=""
	wait "$reader"
	reader=""
	if [[ -n $busy ]]; then
		kill "$busy"
		wait "$busy" 2>/dev/null || true
		busy=""
	fi
	exec 3<&- 2>/dev/null || true
	python3 - "$work/top.json" "$work/time" "$work/tree" "$start1" "$end1" "$start2" "$end2" "$sigint" "$ended" \
		"$workload" "$number" >>"$work/results" <<'EOF'
import json, os, statistics, sys
path, timing, tree = sys.argv[1:4]
start1, end1, start2, end2 = map(int, sys.argv[4:8])
sigint, ended, workload, number = float(sys.argv[8]), float(sys.argv[9]), sys.argv[10], sys.argv[11]
ours = set()
for d, _, names in os.walk(tree):
    for name in names:
        ours.add(os.stat(os.path.join(d, name)).st_ino)
docs = []
for line in open(path):
    try:
        docs.append(json.loads(line))
    except ValueError:
        break  # a line cut by the exit
intervals = [d["interval_ns"] / 1e9 for d in docs]
gaps = [(b["time_ns"] - a["time_ns"]) / 1e9 for a, b in zip(docs, docs[1:])]
def named(first, last):
    yes = no = 0
    for d in docs[first:last + 1]:  # the line after a reading holds its last rows
        for row in d["files"]:
            if not row["accesses"]:
                continue
            if row["file"].startswith(tree + "/"):
                yes += 1
            elif row["file"].startswith("dev ") and int(row["file"].split()[-1]) in ours:
                no += 1
    return 100.0 * yes / (yes + no) if yes + no else float("nan")
user, system, rss = open(timing).read().split()
print(json.dumps({"workload": workload, "round": int(number), "interval_median": statistics.median(intervals),
                  "interval_max": max(intervals), "gap_max": max(gaps) if gaps else float("nan"),
                  "named1": named(start1, end1), "named2": named(start2, end2), "ctrl_c": ended - sigint,
                  "cpu": float(user) + float(system), "rss_mb": int(rss) / 1024, "lines": len(docs)}))
EOF
	tail -1 "$work/results" | python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
print("  %(workload)-4s round %(round)d: interval median %(interval_median).3f s, max %(interval_max).3f s; gap max %(gap_max).3f s; named %(named1).1f %% (first reading), %(named2).2f %% (second); Ctrl-C %(ctrl_c).3f s; CPU %(cpu).1f s; RSS %(rss_mb).0f MB" % r)'
}

echo "cachetop --files --json 1: $FILES files of 4 KiB in $DIRS directories, read twice (open, read, close), $ROUNDS rounds"
for ((r = 1; r <= ROUNDS; r++)); do
	round one "$r"
	round many "$r"
done

python3 - "$repo/bench" "$work/results" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv.pop(1))
import verdict
results = [json.loads(l) for l in open(sys.argv[1])]
# (The rule of every bench script, bench/verdict.py: met only when the rounds agree.)
goals = [("interval_max", "every interval_ns <= 1.1 s", "<= 1.1", "%.3f"),
         ("gap_max", "every line printed <= 1.1 s after the last", "<= 1.1", "%.3f"),
         ("named2", "second reading: >= 99 % of rows named", ">= 99", "%.2f"),
         ("ctrl_c", "Ctrl-C obeyed within 0.25 s", "<= 0.25", "%.3f")]
verdicts = []
for workload in ("one", "many"):
    rounds = [r for r in results if r["workload"] == workload]
    print("%s:" % workload)
    for key, goal, limit, fmt in goals:
        v = verdict.judge([r[key] for r in rounds], limit, fmt=fmt)
        verdicts.append(v)
        print("  %-44s %s" % (goal + ":", v))
    for key, what, unit in (("named1", "first reading: rows named", "%.1f %%"), ("rss_mb", "max RSS", "%.0f MB"),
                            ("cpu", "CPU", "%.1f s"), ("interval_median", "interval median", "%.3f s")):
        values = [r[key] for r in rounds]
        print("  %-44s %s" % (what, (unit + " - " + unit) % (min(values), max(values))))
sys.exit(verdict.exit_status(verdicts))
EOF
