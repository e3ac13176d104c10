#!/usr/bin/env bash
# doctor_reaped.sh: doctor without eBPF's cache counts (IOLENS_CACHE_MECHANISM=procfs, /proc/PID/io): a forked child that read half of a cold file before the window reads the rest in it and ends, reaped by its parent (the kernel adds its counts to the parent's); a second child reads another cold file, all of it in the window, and is reaped too. The processes' numbers (the recorded rates, cache-miss's misses) hold what the children read in the window, their own read_bytes: not with the first half, read before the window, too; with eBPF's exits, each child's own and none the parent's.
. "$(dirname "$0")/lib.sh"

is_root || skip_all "needs root: every process's /proc/PID/io, and evicting the file"
can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where pages cannot be evicted"
command -v fincore >/dev/null || skip_all "fincore is not installed (make test-deps)"
pause_damon

N=8192 M=4096 # pages of the first file (half of it read before the window) and of the second
make_file "$T/a" $((N * PAGE))
make_file "$T/b" $((M * PAGE))
sync "$T/a" "$T/b"
"$IOLENS" evict "$T/a" "$T/b" >/dev/null 2>&1
check_eq "the files are cold before the reads (fincore)" "0 0" "$(fincore_cached "$T/a") $(fincore_cached "$T/b")"

# The parent (named for this test: cache-miss adds up the processes of one command) says its
# read_bytes (parent_io0) and forks the first child, which reads half of a, says its read_bytes
# (half), waits to be told (go_rest), reads the rest, says them again (child_io) and ends; the
# parent reaps it, forks the second, which reads b, says its read_bytes (child2_io) and ends; the
# parent reaps it, says its read_bytes (parent_io: its own and its reaped children's) and waits
# to be told to end (go_end): alive at the window's end, where its counts are read again.
COMM=reaped$$
mkfifo "$T/go_rest" "$T/go_end"
cat >"$T/parent.py" <<'EOF'
import ctypes, os, sys
from forked_reads import read_bytes, say
d, comm, pages = sys.argv[1], sys.argv[2], int(sys.argv[3])
ctypes.CDLL(None).prctl(15, comm.encode(), 0, 0, 0) # PR_SET_NAME: the children inherit it
def read(fd, size):
    done = 0
    while done < size:
        n = len(os.read(fd, min(1 << 20, size - done)))
        if not n:
            break
        done += n
say(d, "parent_io0", str(read_bytes()))
child = os.fork()
if child == 0:
    fd = os.open(f"{d}/a", os.O_RDONLY)
    read(fd, pages // 2 * 4096)
    say(d, "half", str(read_bytes()))
    open(f"{d}/go_rest").read()
    read(fd, 1 << 62)
    say(d, "child_io", str(read_bytes()))
    os._exit(0)
say(d, "child", str(child))
os.waitpid(child, 0)
child2 = os.fork()
if child2 == 0:
    read(os.open(f"{d}/b", os.O_RDONLY), 1 << 62)
    say(d, "child2_io", str(read_bytes()))
    os._exit(0)
say(d, "child2", str(child2))
os.waitpid(child2, 0)
say(d, "parent_io", str(read_bytes()))
open(f"{d}/go_end").read()
EOF
PYTHONPATH="$TOP/tests/cli" PYTHONDONTWRITEBYTECODE=1 python3 "$T/parent.py" "$T" "$COMM" "$N" 2>"$T/parent.err" &
PARENT=$!
on_exit "kill $PARENT 2>/dev/null"
wait_until 60 test -e "$T/half" || not_ok "the first child read the first half"
# The rest cold again before the window: readahead of the first half (or a reader elsewhere on a
# busy machine) may have cached some of it, which the window would then count as hits.
"$IOLENS" evict "$T/a" >/dev/null 2>&1
check_eq "… and the file is cold again before the window (fincore)" 0 "$(fincore_cached "$T/a")"

# The window: long enough for anything, ended by SIGINT once the children are reaped.
IOLENS_CACHE_MECHANISM=procfs "$IOLENS" doctor --no-config --json --record "$T/snap" 600 >"$T/doctor.json" \
	2>"$T/doctor.err" &
DOCTOR=$!
on_exit "kill $DOCTOR 2>/dev/null"
# In its window: waiting between samples (ring_buffer__poll, or clock_nanosleep without eBPF),
# after the banner that comes before the first round of /proc/PID/io.
in_window() {
	grep -q "no eBPF (IOLENS_CACHE_MECHANISM=procfs): estimating from /proc" "$T/doctor.err" &&
		waits_between_samples "$DOCTOR"
}
wait_until 60 in_window || not_ok "doctor is in its window"
check_match "doctor says it estimates, and why" "IOLENS_CACHE_MECHANISM=procfs" "$(cat "$T/doctor.err")"
echo >"$T/go_rest"
wait_until 120 test -e "$T/parent_io" || not_ok "the parent reaped both children"
kill -INT "$DOCTOR"
wait "$DOCTOR"
rc=$?
check "doctor ends on SIGINT with its findings (exit $rc: 0, 3 or 4, by the worst)" \
	python3 -c 'import json, sys; json.load(open(sys.argv[1])); sys.exit(int(sys.argv[2]) not in (0, 3, 4))' "$T/doctor.json" "$rc"
echo >"$T/go_end"
wait "$PARENT"

half=$(cat "$T/half") child=$(cat "$T/child_io") child2=$(cat "$T/child2_io")
parent0=$(cat "$T/parent_io0") parent=$(cat "$T/parent_io")
# What the window saw the children read: the first's rest and all of the second's.
window=$((child - half + child2))
check "the first child read the N cold pages (its read_bytes: $((child / PAGE)))" [ $((child / PAGE)) -ge "$N" ]
check "the second read the M cold pages (its read_bytes: $((child2 / PAGE)))" [ $((child2 / PAGE)) -ge "$M" ]
check_eq "… those read in the window cached after (fincore: a's rest, all of b)" "$((N / 2)) $M" \
	"$(fincore_cached "$T/a") $(fincore_cached "$T/b")"
check_eq "the parent's read_bytes grew by its children's, none its own (the kernel's fold)" \
	$((child + child2)) $((parent - parent0))

# read_bytes PID...: those pids' bytes fetched from storage in the window, from the recorded rates.
read_bytes() {
	python3 -c '
import sys
pids = set(sys.argv[2:])
seconds, total = 0.0, 0.0
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "seconds":
        seconds = float(w[1])
    elif w[0] == "rate" and w[1] in pids:
        total += float(w[3])
print(round(total * seconds))' "$T/snap" "$@"
}
ids="$PARENT $(cat "$T/child") $(cat "$T/child2")"
got=$(read_bytes $ids)
check_eq "parent and children: their read_bytes in the window, $((window / PAGE)) pages (not with the $((half / PAGE)) read before it)" \
	"$window" "$got"
echo "# parent $(($(read_bytes "$PARENT") / PAGE)), first child $(($(read_bytes "$(cat "$T/child")") / PAGE)), second $(($(read_bytes "$(cat "$T/child2")") / PAGE)) of $((window / PAGE)) pages"
# Where eBPF runs (root, BTF), each process's counts are taken as it ends: each its own, the
# truth its own read_bytes as it said them, whenever the samples fell. Without, what a child did
# after its last sample is its parent's (the sum above still holds).
if why=$(ebpf_expected); then
	check_eq "process exits counted by eBPF (exits_mode)" ebpf \
		"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["exits_mode"])' "$T/doctor.json")"
	check_eq "… each process its own: the parent 0, the first child its rest, the second all it read" \
		"0 $((child - half)) $child2" \
		"$(read_bytes "$PARENT") $(read_bytes "$(cat "$T/child")") $(read_bytes "$(cat "$T/child2")")"
else
	echo "# each process's own not held: $why"
fi
check_eq "cache-miss: the misses of processes named $COMM, the same pages" "$((window / PAGE))" \
	"$(python3 "$TOP/tests/cli/doctor_query.py" get cache-miss misses comm "$COMM" <"$T/doctor.json")"
echo "1..$t_count"
