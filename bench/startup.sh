#!/usr/bin/env bash
# Start-up: CPU time of one short run of iolens against the peer tool doing the same work, runs
# alternated so that the load of the machine falls on both alike; medians and their ratio.
set -euo pipefail

usage="usage: ${0##*/} [-n RUNS]
  Alternates RUNS (default 30) runs of each pair and prints the median CPU time (user + system,
  from the kernel's rusage of the child) of each side and the ratio iolens / peer:
    iolens pcstat /bin/ls     vs  fincore /bin/ls      (one file's page-cache residency)
    iolens stat -d 1 1        vs  iostat -d 1 1        (one since-boot sample of the disks)
  iostat -d 1 1 is the fair peer of stat -d 1 1: both read /proc/diskstats once, print the
  averages since boot and exit without sleeping (dstat -d 1 1 would be a Python start-up).
  Goal (issue 16): each ratio at most 1.2, judged by bench/verdict.py on 5 rounds (the runs cut
  into 5 in the order made, each round's ratio of medians): met when the rounds agree (4 of 5,
  their spread (max - min) / median within 10 %), NOT met when they agree it is missed, else
  undecided. Exit status 0 met, 1 not met (or an error), 3 undecided.
env: IOLENS (default: the repository's ./iolens)"
runs=30
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) echo "$usage"; exit 0 ;;
	-n) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; runs=$2; shift 2 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: -n wants a positive number" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
[ -x "$IOLENS" ] || { echo "${0##*/}: no $IOLENS (make)" >&2; exit 1; }
for tool in fincore iostat python3; do
	command -v $tool >/dev/null || { echo "${0##*/}: $tool is missing (make test-deps)" >&2; exit 1; }
done

exec python3 - "$repo/bench" "$runs" "$IOLENS" <<'EOF'
import os, statistics, subprocess, sys
sys.path.insert(0, sys.argv.pop(1))
import verdict

runs, iolens = int(sys.argv[1]), sys.argv[2]
ROUNDS = 5
pairs = [
    ("pcstat /bin/ls", [iolens, "pcstat", "/bin/ls"], ["fincore", "/bin/ls"]),
    ("stat -d 1 1", [iolens, "stat", "-d", "1", "1"], ["iostat", "-d", "1", "1"]),
]

def cpu_ms(argv):
    """CPU time (user + system) of one run of argv, in ms, from wait4's rusage."""
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.environ["LC_ALL"] = "C"
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"startup.sh: {' '.join(argv)} failed ({os.waitstatus_to_exitcode(status)})")
    return (ru.ru_utime + ru.ru_stime) * 1000

print(f"{'command':<18} {'iolens ms':>10} {'peer ms':>10} {'ratio':>6}  peer  ({runs} runs each, CPU medians)")
verdicts = []
for name, ours, peer in pairs:
    cpu_ms(ours), cpu_ms(peer)  # warm the page cache
    a, b = [], []
    for _ in range(runs):
        a.append(cpu_ms(ours))
        b.append(cpu_ms(peer))
    ma, mb = statistics.median(a), statistics.median(b)
    ratio = ma / mb if mb > 0 else float("inf")
    print(f"{name:<18} {ma:>10.2f} {mb:>10.2f} {ratio:>6.2f}  {' '.join(peer)}")
    # The rounds: the runs cut into ROUNDS in the order made (fewer runs: a round each).
    cuts = [len(a) * i // min(ROUNDS, len(a)) for i in range(min(ROUNDS, len(a)) + 1)]
    figures = []
    for lo, hi in zip(cuts, cuts[1:]):
        peer_ms = statistics.median(b[lo:hi])
        figures.append(statistics.median(a[lo:hi]) / peer_ms if peer_ms > 0 else None)
    verdicts.append((name, verdict.judge(figures, "<= 1.2", max_spread=0.10, fmt="%.2f")))
print(f"goal: each ratio <= 1.2 (iolens / peer, CPU medians of each round): {verdict.combine(v for _, v in verdicts)}")
for name, v in verdicts:
    print(f"  {name}: {v}")
sys.exit(verdict.exit_status(v for _, v in verdicts))
EOF
