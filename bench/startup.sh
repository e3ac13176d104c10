#!/usr/bin/env bash
# Start-up: CPU time per start of iolens against the peer tool doing the same work, measured over
# loops of many starts (one start is below the resolution of `time`), loops alternated.
set -euo pipefail

usage="usage: ${0##*/} [-n STARTS] [-r ROUNDS]
  For each pair, ROUNDS (default 5) rounds; a round is a loop of STARTS (default 300) starts of
  iolens and a loop of STARTS starts of the peer, one after the other (which goes first
  alternates), each start waited for before the next. CPU per start is the loop's user +
  system time (the kernel's rusage of the waited children, the difference over the loop)
  divided by STARTS. Output to /dev/null, LC_ALL=C for both.
    iolens pcstat /bin/ls     vs  fincore /bin/ls      (one file's page-cache residency)
    iolens stat -d 1 1        vs  iostat -d 1 1        (one since-boot sample of the disks)
  iostat -d 1 1 is the fair peer of stat -d 1 1: both read /proc/diskstats once, print the
  averages since boot and exit without sleeping (dstat -d 1 1 would be a Python start-up).
  Prints each side's CPU per start (median of the rounds), the ratio iolens / peer (of those
  medians) and each round's ratio. Goal (issues 16, 33): each ratio at most 1.2, judged by
  bench/verdict.py on the rounds' ratios: met when the rounds agree (4 of 5, their spread
  (max - min) / median within 10 %), NOT met when they agree it is missed, else undecided.
  Exit status 0 met, 1 not met (or an error), 3 undecided.
env: IOLENS (default: the repository's ./iolens)"
starts=300
rounds=5
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) echo "$usage"; exit 0 ;;
	-n) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; starts=$2; shift 2 ;;
	-r) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; rounds=$2; shift 2 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
[[ $starts =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: -n wants a positive number" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: -r wants a positive number" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
[ -x "$IOLENS" ] || { echo "${0##*/}: no $IOLENS (make)" >&2; exit 1; }
for tool in fincore iostat python3; do
	command -v $tool >/dev/null || { echo "${0##*/}: $tool is missing (make test-deps)" >&2; exit 1; }
done

exec python3 - "$repo/bench" "$starts" "$rounds" "$IOLENS" <<'EOF'
import os, resource, shutil, statistics, sys
sys.path.insert(0, sys.argv.pop(1))
import verdict

starts, rounds, iolens = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
pairs = [
    ("pcstat /bin/ls", [iolens, "pcstat", "/bin/ls"], ["fincore", "/bin/ls"]),
    ("stat -d 1 1", [iolens, "stat", "-d", "1", "1"], ["iostat", "-d", "1", "1"]),
]
devnull = os.open(os.devnull, os.O_RDWR)
actions = [(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]
env = dict(os.environ, LC_ALL="C")

def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime

def loop_ms(argv, n):
    """CPU time per start (user + system, ms) of n starts of argv, one after the other."""
    path = shutil.which(argv[0])
    before = children_cpu()
    for _ in range(n):
        pid = os.posix_spawn(path, argv, env, file_actions=actions)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"startup.sh: {' '.join(argv)} failed ({os.waitstatus_to_exitcode(status)})")
    return (children_cpu() - before) * 1000 / n

print(f"{'command':<16} {'iolens ms':>9} {'peer ms':>8} {'ratio':>6}  rounds' ratios  (CPU per start; {rounds} rounds of {starts} starts each)")
verdicts = []
for name, ours, peer in pairs:
    loop_ms(ours, 3), loop_ms(peer, 3)  # the page cache warm for both
    a, b, figures = [], [], []
    for r in range(rounds):
        if r % 2:
            b.append(loop_ms(peer, starts))
            a.append(loop_ms(ours, starts))
        else:
            a.append(loop_ms(ours, starts))
            b.append(loop_ms(peer, starts))
        figures.append(a[-1] / b[-1] if b[-1] > 0 else None)
    ma, mb = statistics.median(a), statistics.median(b)
    ratio = ma / mb if mb > 0 else float("inf")
    shown = " ".join("%.2f" % f if f is not None else "-" for f in figures)
    print(f"{name:<16} {ma:>9.3f} {mb:>8.3f} {ratio:>6.2f}  {shown}  ({' '.join(peer)})")
    verdicts.append((name, verdict.judge(figures, "<= 1.2", max_spread=0.10, fmt="%.2f")))
print(f"goal: each ratio <= 1.2 (iolens / peer, CPU per start): {verdict.combine(v for _, v in verdicts)}")
for name, v in verdicts:
    print(f"  {name}: {v}")
sys.exit(verdict.exit_status(v for _, v in verdicts))
EOF
