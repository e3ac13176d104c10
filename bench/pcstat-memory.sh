#!/usr/bin/env bash
# Memory and first output of a per-file listing of a large tree: `iolens pcstat -R` (table and CSV) against `vmtouch -v`: max RSS, time to the first row through a pipe and on a terminal, ratios.
set -euo pipefail

usage="usage: ${0##*/} [DIR]
  Lists DIR (default /usr) file by file with each command, RUNS times (default 3) alternated,
  after one unmeasured run of each (so all find the same dentry and inode caches):
    iolens pcstat -R DIR          (a table)
    iolens pcstat -R --csv DIR
    vmtouch -v DIR
  and prints the medians of: max RSS (from /usr/bin/time, a small program's fork, so the
  figure is the command's own), the time from start to the first line naming a file, read
  through a pipe (as | less or | head read it) and on a terminal (a pseudo-terminal), and the
  time to the end; then iolens / vmtouch for each (below 1: iolens is smaller or sooner).
env: IOLENS (default: the repository's ./iolens), RUNS"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
[[ $# -le 1 ]] || { echo "$usage" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
RUNS=${RUNS:-3}
dir=${1:-/usr}

die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ -x $IOLENS ]] || die "$IOLENS: not an executable (run make, or set IOLENS)"
command -v vmtouch >/dev/null || die "vmtouch not found (apt-get install -y vmtouch)"
command -v python3 >/dev/null || die "python3 not found (make test-deps)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install -y time)"
[[ -d $dir ]] || die "$dir: not a directory"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS=$RUNS: not a positive integer"

echo "pcstat-memory: $dir, $RUNS runs of each, alternated; iolens = $IOLENS ($("$IOLENS" --version 2>/dev/null | head -n 1))"
exec python3 - "$IOLENS" "$dir" "$RUNS" <<'EOF'
import os, pty, select, statistics, subprocess, sys, tempfile, time

iolens, top, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
commands = [
    ("iolens table", [iolens, "pcstat", "-R", top]),
    ("iolens CSV", [iolens, "pcstat", "-R", "--csv", top]),
    ("vmtouch -v", ["vmtouch", "-v", top]),
]
marker = top.rstrip("/").encode() + b"/"  # a line that names a file: not a header, not a warning

def measure(argv, terminal):
    """One run: (max RSS KiB, seconds to the first line naming a file, seconds to the end)."""
    with tempfile.NamedTemporaryFile() as rss:
        wrapped = ["/usr/bin/time", "-f", "%M", "-o", rss.name] + argv
        if terminal:
            reader, writer = pty.openpty()
        else:
            reader, writer = os.pipe()
        start = time.monotonic()
        child = subprocess.Popen(wrapped, stdout=writer, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                 env=dict(os.environ, LC_ALL="C"))
        os.close(writer)
        first, pending = None, b""
        while True:
            try:
                data = os.read(reader, 1 << 16)
            except OSError:  # a pseudo-terminal's reader gets EIO once the writer is gone
                data = b""
            if not data:
                break
            if first is None:
                pending += data
                if any(marker in line for line in pending.split(b"\n")[:-1]):
                    first = time.monotonic() - start
                pending = pending[-4096:]
        os.close(reader)
        if child.wait() != 0:
            sys.exit(f"pcstat-memory.sh: {' '.join(argv)} failed (exit status {child.returncode})")
        end = time.monotonic() - start
        return int(open(rss.name).read().split()[-1]), first if first is not None else end, end

for name, argv in commands:  # warm-up
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
results = {name: {"rss": [], "pipe": [], "terminal": [], "end": []} for name, _ in commands}
for _ in range(runs):
    for terminal in (False, True):
        for name, argv in commands:
            rss, first, end = measure(argv, terminal)
            r = results[name]
            r["rss"].append(rss)
            r["terminal" if terminal else "pipe"].append(first)
            if not terminal:
                r["end"].append(end)

median = statistics.median
print(f"\n{'command':<14} {'max RSS MiB':>11} {'first row, pipe':>16} {'first row, tty':>15} {'to the end':>11}")
for name, argv in commands:
    r = results[name]
    print(f"{name:<14} {median(r['rss']) / 1024:>11.1f} {median(r['pipe']):>15.3f}s {median(r['terminal']):>14.3f}s"
          f" {median(r['end']):>10.3f}s   {' '.join(argv)}")
vm = results["vmtouch -v"]
print("\niolens / vmtouch -v (below 1: iolens is smaller or sooner):")
print(f"{'command':<14} {'max RSS':>8} {'first row, pipe':>16} {'first row, tty':>15} {'to the end':>11}")
for name in ("iolens table", "iolens CSV"):
    r = results[name]
    ratio = lambda key: median(r[key]) / median(vm[key]) if median(vm[key]) > 0 else float("nan")
    print(f"{name:<14} {ratio('rss'):>7.2f}x {ratio('pipe'):>15.2f}x {ratio('terminal'):>14.2f}x {ratio('end'):>10.2f}x")
EOF
