#!/usr/bin/env bash
# The per-file listing of a tree: CPU time of `iolens vmtouch -v DIR` against `vmtouch -v DIR`, both
# into /dev/null, runs alternated; the ratio of each round and of the medians.
set -euo pipefail

usage="usage: ${0##*/} [-r ROUNDS] [DIR]
  ROUNDS (default 5) rounds over DIR (default /usr); a round runs iolens vmtouch -v DIR and
  vmtouch -v DIR (which goes first alternates), stdout and stderr into /dev/null, LC_ALL as
  the caller's. Each run's CPU time (user + system, the kernel's rusage of the waited child)
  is printed, then each side's median, the ratio iolens / vmtouch of the medians and each
  round's ratio. A first run of each, not counted, warms the dentry and page caches.
  Goal (issue 33): ratio at most 0.8, judged by bench/verdict.py on the rounds' ratios (met
  when 4 of 5 agree within a 10 % spread, NOT met when they agree it is missed, else
  undecided). Exit status 0 met, 1 not met (or an error), 3 undecided.
env: IOLENS (default: the repository's ./iolens)"
rounds=5
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) echo "$usage"; exit 0 ;;
	-r) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; rounds=$2; shift 2 ;;
	-*) echo "$usage" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -le 1 ] || { echo "$usage" >&2; exit 2; }
dir=${1:-/usr}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: -r wants a positive number" >&2; exit 2; }
[ -d "$dir" ] || { echo "${0##*/}: $dir: not a directory" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
[ -x "$IOLENS" ] || { echo "${0##*/}: no $IOLENS (make)" >&2; exit 1; }
for tool in vmtouch python3; do
	command -v $tool >/dev/null || { echo "${0##*/}: $tool is missing (make test-deps)" >&2; exit 1; }
done

exec python3 - "$repo/bench" "$rounds" "$IOLENS" "$dir" <<'EOF'
import os, shutil, statistics, sys
sys.path.insert(0, sys.argv.pop(1))
import verdict

rounds, iolens, tree = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ours = [iolens, "vmtouch", "-v", tree]
peer = [shutil.which("vmtouch"), "-v", tree]
devnull = os.open(os.devnull, os.O_RDWR)
actions = [(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]

def cpu_ms(argv):
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"vmtouch-listing.sh: {' '.join(argv)} failed ({os.waitstatus_to_exitcode(status)})")
    return (ru.ru_utime + ru.ru_stime) * 1000

cpu_ms(ours), cpu_ms(peer)  # warm the caches, for both
a, b, figures = [], [], []
for r in range(rounds):
    if r % 2:
        b.append(cpu_ms(peer)); a.append(cpu_ms(ours))
    else:
        a.append(cpu_ms(ours)); b.append(cpu_ms(peer))
    figures.append(a[-1] / b[-1] if b[-1] > 0 else None)
    print(f"round {r + 1}: iolens {a[-1]:.0f} ms, vmtouch {b[-1]:.0f} ms, ratio {figures[-1]:.2f}", flush=True)
ma, mb = statistics.median(a), statistics.median(b)
print(f"iolens vmtouch -v {tree}: {ma:.0f} ms CPU (median); vmtouch -v: {mb:.0f} ms; ratio {ma / mb:.2f}")
v = verdict.judge(figures, "<= 0.8", max_spread=0.10, fmt="%.2f")
print(f"goal: ratio <= 0.8: {v}")
sys.exit(verdict.exit_status([v]))
EOF
