#!/usr/bin/env bash
# cachetop_reaped.sh: cachetop without eBPF (IOLENS_CACHE_MECHANISM=procfs, /proc/PID/io): a forked child reads a cold file of N pages, half while cachetop watches, then the rest, and ends; its parent reaps it, and the kernel adds the child's counts to the parent's. Child and parent rows together hold the child's own read_bytes (N, fincore's count, and any filesystem metadata it read), not that and the half again; the half seen is under the child.
. "$(dirname "$0")/lib.sh"

can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where pages cannot be evicted"
command -v fincore >/dev/null || skip_all "fincore is not installed (make test-deps)"
pause_damon

N=16384 # pages: the issue's 64 MiB read
make_file "$T/f" $((N * PAGE))
sync "$T/f"
"$IOLENS" evict "$T/f" >/dev/null 2>&1
check_eq "the file is cold before the read (fincore)" 0 "$(fincore_cached "$T/f")"

# The parent: forks when told (go_fork), the child reads the first half, says its read_bytes
# (half), waits to be told (go_rest), reads the rest, says its read_bytes (child_io) and ends;
# the parent reaps it (waitpid) and waits to be told to end (go_end).
mkfifo "$T/go_fork" "$T/go_rest" "$T/go_end"
cat >"$T/parent.py" <<'EOF'
import os, sys
from forked_reads import read_bytes, say
d, pages = sys.argv[1], int(sys.argv[2])
say(d, "ready", str(os.getpid()))
open(f"{d}/go_fork").read()
child = os.fork()
if child == 0:
    fd = os.open(f"{d}/f", os.O_RDONLY)
    half = pages // 2 * 4096
    done = 0
    while done < half:
        done += len(os.read(fd, min(1 << 20, half - done)))
    say(d, "half", str(read_bytes()))
    open(f"{d}/go_rest").read()
    while os.read(fd, 1 << 20):
        pass
    say(d, "child_io", str(read_bytes()))
    os._exit(0)
say(d, "child", str(child))
os.waitpid(child, 0)
say(d, "reaped", "1")
open(f"{d}/go_end").read()
EOF
PYTHONPATH="$TOP/tests/cli" PYTHONDONTWRITEBYTECODE=1 python3 "$T/parent.py" "$T" "$N" 2>"$T/parent.err" &
PARENT=$!
on_exit "kill $PARENT 2>/dev/null"
wait_until 30 test -e "$T/ready" || not_ok "the parent started"

IOLENS_CACHE_MECHANISM=procfs "$IOLENS" cachetop --json 0.2 >"$T/top.json" 2>"$T/top.err" &
TOP_PID=$!
on_exit "kill $TOP_PID 2>/dev/null"
wait_until 30 lines_at_least "$T/top.json" 1 || not_ok "cachetop prints an interval"
check_match "cachetop says it estimates, and why" "no eBPF \(IOLENS_CACHE_MECHANISM=procfs\): estimating from /proc/PID/io" \
	"$(cat "$T/top.err")"

# misses PID...: the misses of those pids' rows over every interval printed so far (only the
# lines that name them parsed: cheap enough to ask often, even in a guest under TCG).
misses() {
	grep -E "\"pid\":($(IFS='|'; echo "$*")),\"" "$T/top.json" | python3 -c '
import json, sys
pids = {int(p) for p in sys.argv[1:]}
total = 0
for line in sys.stdin:
    try:
        interval = json.loads(line)
    except ValueError:
        break # the line being written
    total += sum(p["misses"] for p in interval["processes"] if p["pid"] in pids)
print(total)' "$@"
}
half_seen() { [ "$(misses "$CHILD")" -eq "$HALF" ]; }

echo >"$T/go_fork"
wait_until 60 test -e "$T/half" || not_ok "the child read the first half"
CHILD=$(cat "$T/child") HALF=$(($(cat "$T/half") / PAGE))
check "cachetop sees the child's first half under the child ($HALF pages, its read_bytes)" wait_until 60 half_seen
echo >"$T/go_rest"
wait_until 60 test -e "$T/reaped" || not_ok "the parent reaped the child"
# Three intervals after the reap: the parent's counts with the child's added are read in one of them.
lines=$(lines_of "$T/top.json")
wait_until 60 lines_at_least "$T/top.json" $((lines + 3)) || not_ok "cachetop goes on after the reap"
echo >"$T/go_end"
wait "$PARENT"
kill "$TOP_PID"; wait "$TOP_PID" 2>/dev/null

# The child's read_bytes: the file's N pages, and the filesystem's blocks that map them where
# those were not cached (13 pages on a freshly booted 6.1).
child_pages=$(($(cat "$T/child_io") / PAGE))
check "the child read the N cold pages (its own /proc/self/io read_bytes: $child_pages)" [ "$child_pages" -ge "$N" ]
check_eq "… all of them cached after (fincore)" "$N" "$(fincore_cached "$T/f")"
check_eq "child and parent rows: the child's read_bytes, each page once (not again with the $HALF seen under the child)" \
	"$child_pages" "$(misses "$CHILD" "$PARENT")"
check "the child's rows hold at least the half seen ($HALF)" [ "$(misses "$CHILD")" -ge "$HALF" ]
echo "# child $(misses "$CHILD"), parent $(misses "$PARENT") of $child_pages"
echo "1..$t_count"
