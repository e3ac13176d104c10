#!/usr/bin/env bash
# Measures iolens cachetop --files with many files: N small files read and closed while it runs at 1 s: how long its intervals really last (interval_ns), its CPU time and memory, how soon Ctrl-C ends it during naming, and how long `cachetop --files 1 1` takes with a CPU hog on every core.
set -euo pipefail

usage="usage: ${0##*/} [--files N] [DIR]
  Makes N files of 4 KiB in a new directory under DIR (removed at the end), keeps one open (so
  their directory is known), evicts them, then with iolens cachetop --files --json 1 running,
  reads every one of them once (open, read, close) and again, and reports:
    intervals   the interval_ns of each line printed meanwhile: median and max (the goal: 1 s,
                not the 44.7 s and 1416 s of the issue)
    named       the rows named by their path, and by device and inode
    CPU, RSS    cachetop's user + system seconds and maximum resident memory (/usr/bin/time)
    Ctrl-C      seconds from SIGINT, sent while it names, to its exit (the issue: 617 s)
    busy        wall seconds of 'iolens cachetop --files 1 1' with a CPU hog on every core (9.9 s)
DIR: default \$TMPDIR when set and not on tmpfs, else /var/tmp. N: default 100000.
env: IOLENS (default ./iolens of this repository), FILES (N)."

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
FILES=${FILES:-100000}
dir=""
while (($#)); do
	case $1 in
	-h | --help) echo "$usage"; exit 0 ;;
	--files) FILES=${2:?"$usage"}; shift 2 ;;
	-*) echo "$usage" >&2; exit 2 ;;
	*) dir=$1; shift ;;
	esac
done
die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "cachetop --files needs root for eBPF"
[[ -x $IOLENS ]] || die "$IOLENS: not an executable (run make, or set IOLENS)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is needed (make deps installs it)"
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
top="" hogs=()
cleanup() {
	[[ -z $top ]] || kill -KILL "$top" 2>/dev/null || true
	for h in "${hogs[@]}"; do kill "$h" 2>/dev/null || true; done
	exec 3<&- 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

python3 - "$work/many" "$FILES" <<'EOF'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
os.mkdir(d)
block = os.urandom(4096)
for i in range(n):
    with open("%s/f%06d" % (d, i), "wb") as f:
        f.write(block)
EOF
sync
"$IOLENS" evict -R "$work/many" >/dev/null
exec 3<"$work/many/f000000"
read_all() {
	python3 - "$work/many" <<'EOF'
import os, sys
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    with open(os.path.join(d, name), "rb") as f:
        f.read()
EOF
}
lines() { wc -l <"$work/top.json"; }

/usr/bin/time -f "%U %S %M" -o "$work/time" "$IOLENS" cachetop --files --json 1 >"$work/top.json" 2>"$work/top.err" &
timer=$!
until top=$(pgrep -P "$timer" -x iolens); do sleep 0.05; done # time(1) passes no SIGINT on: signal iolens
until [[ -s $work/top.json ]]; do sleep 0.1; done
started=$(date +%s.%N)
read_all
"$IOLENS" evict -R "$work/many" >/dev/null
read_all &
reader=$!
n=$(lines)
until (($(lines) > n)); do sleep 0.05; done
sigint=$(date +%s.%N)
kill -INT "$top"
while kill -0 "$top" 2>/dev/null; do sleep 0.01; done
ended=$(date +%s.%N)
wait "$timer" || true
top=""
wait "$reader"

busy_wall=$(
	for _ in $(seq "$(nproc)"); do sh -c 'while :; do :; done' & hogs+=($!); done
	start=$(date +%s.%N)
	"$IOLENS" cachetop --files 1 1 >/dev/null
	end=$(date +%s.%N)
	for h in "${hogs[@]}"; do kill "$h"; done
	echo "$end - $start" | bc
)

python3 - "$work/top.json" "$work/time" "$FILES" "$started" "$sigint" "$ended" "$busy_wall" "$work/many" <<'EOF'
import json, statistics, sys
path, timing, files, started, sigint, ended, busy, folder = sys.argv[1:]
docs = [json.loads(l) for l in open(path)]
intervals = [d["interval_ns"] / 1e9 for d in docs]
named = sum(1 for d in docs for r in d["files"] if r["file"].startswith(folder))
by_inode = sum(1 for d in docs for r in d["files"] if r["file"].startswith("dev "))
user, system, rss = open(timing).read().split()
print("cachetop --files --json 1, %s files read twice (open, read, close)" % files)
print("  lines %d; interval_ns median %.3f s, max %.3f s (the goal: 1 s)" % (len(docs), statistics.median(intervals), max(intervals)))
print("  rows named by path %d, by device and inode %d" % (named, by_inode))
print("  CPU %.2f s (user %s, system %s), max RSS %.1f MB" % (float(user) + float(system), user, system, int(rss) / 1024))
print("  Ctrl-C during naming: ended %.3f s after SIGINT" % (float(ended) - float(sigint)))
print("cachetop --files 1 1 with a CPU hog on every core: %.2f s wall (the goal: about 1 s)" % float(busy))
EOF
