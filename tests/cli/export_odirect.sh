#!/usr/bin/env bash
# export_odirect.sh: without eBPF (IOLENS_CACHE_MECHANISM=procfs), export's and cachestat's page-cache misses are pgpgin's pages less what processes holding an O_DIRECT descriptor read: the N pages odirect_reader reads with O_DIRECT (in its own read_bytes) are not misses, though /proc/vmstat's pgpgin counts them.
# tests/run: alone (pgpgin is the whole machine's, less what every O_DIRECT process read: another test's O_DIRECT reads would move it)
. "$(dirname "$0")/lib.sh"

READER=${BUILD:-$TOP/build}/tests/helpers/odirect_reader
[ -x "$READER" ] || skip_all "odirect_reader is not built (make check builds it)"
command -v curl >/dev/null || skip_all "no curl (make test-deps)"
can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where O_DIRECT reads no disk"

N=8192 # pages: 32 MiB, far above what the rest of a quiet machine reads in the same seconds
make_file "$T/f" $((N * PAGE))
sync "$T/f"

port=$(free_port)
IOLENS_CACHE_MECHANISM=procfs "$IOLENS" export --listen "127.0.0.1:$port" --collector.disable-defaults \
	--collector.pagecache --collector.vmstat 2>"$T/export.err" &
EXPORTER=$!
on_exit "kill $EXPORTER 2>/dev/null"
wait_until 120 curl -s -o /dev/null "127.0.0.1:$port/" # (slow to start on a loaded machine, sanitized)
# scrape: "MISSES PGPGIN_PAGES" of one scrape.
scrape() {
	curl -s --max-time 60 "127.0.0.1:$port/metrics" | awk -v page="$PAGE" '
		/^iolens_page_cache_misses_total\{mode="procfs"\} / { m = $2 }
		/^iolens_vmstat_pgpgin_total / { p = $2 * 1024 / page }
		END { if (m != "" && p != "") printf "%.0f %.0f\n", m, p } # (mawk: %d stops at 2^31)'
}
# others_direct [BEFORE]: "PID BYTES" of the other processes holding an O_DIRECT descriptor (fdinfo's
# flags), the bytes each read so far (/proc/PID/io's read_bytes); with BEFORE (an earlier output),
# the bytes they read since. Their reads are in pgpgin and rightly not misses. On a quiet machine
# none; beside other programs' O_DIRECT readers (make check BUSY=1), theirs.
others_direct() {
	python3 - "$READER_PID" "$@" <<'PY'
import os, sys
now = {}
for pid in filter(str.isdigit, os.listdir("/proc")):
    if pid in (sys.argv[1], str(os.getpid())):
        continue
    try:
        direct = False
        for fd in os.listdir("/proc/%s/fdinfo" % pid):
            with open("/proc/%s/fdinfo/%s" % (pid, fd)) as f:
                flags = next((l.split()[1] for l in f if l.startswith("flags:")), "0")
            if int(flags, 8) & 0o40000:
                direct = True
                break
        if direct:
            with open("/proc/%s/io" % pid) as f:
                now[pid] = next(int(l.split()[1]) for l in f if l.startswith("read_bytes:"))
    except (OSError, StopIteration, ValueError):
        pass
if len(sys.argv) > 2:
    before = dict(l.split() for l in sys.argv[2].splitlines() if l.strip())
    print(sum(max(0, n - int(before.get(pid, 0))) for pid, n in now.items()))
else:
    print("\n".join("%s %d" % kv for kv in now.items()))
PY
}
READER_PID=0
others0=$(others_direct)
read -r misses0 pgpgin0 < <(scrape)
check "export answers, estimating (mode procfs)" [ -n "$misses0" ]

# Reads the file once with O_DIRECT, says so (ready), and keeps it open.
"$READER" "$T/f" "$T/ready" 1048576 0 600000 2>"$T/reader.err" &
READER_PID=$!
on_exit 'kill $READER_PID 2>/dev/null' # the reader of the moment (a second one starts below)
wait_until 60 test -e "$T/ready" || not_ok "odirect_reader read the file"
# Its read_bytes: the N pages, and what its start-up read (its program, where / is on 9p or NFS).
reader_bytes() { awk '/^read_bytes:/ { print $2 }' "/proc/$READER_PID/io"; }
direct=$N
check "odirect_reader read the N pages from the disk (its /proc/PID/io read_bytes, $(($(reader_bytes) / PAGE)))" \
	[ "$(reader_bytes)" -ge $((N * PAGE)) ]
read -r misses1 pgpgin1 < <(scrape)
others=$(($(others_direct "$others0") / PAGE))
read_from_disks=$((pgpgin1 - pgpgin0)) misses=$((misses1 - misses0))
echo "# between the scrapes: pgpgin $read_from_disks pages, misses $misses, O_DIRECT $direct, others' O_DIRECT $others"
check "pgpgin counts the O_DIRECT pages ($read_from_disks >= $direct)" [ "$read_from_disks" -ge "$direct" ]
# The rest of the machine reads from disks meanwhile too: its pages are misses, but those of its
# O_DIRECT readers, which may be up to what they read around the scrapes (the exporter reads
# /proc/vmstat at moments of its own); within 1 % of N, the difference between the two reads of
# /proc/vmstat a scrape makes.
in_range() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
check "export's misses leave the O_DIRECT pages out: misses $misses within pgpgin - $direct = $((read_from_disks - direct)), less others' O_DIRECT ($others), +- 1 % of N" \
	in_range "$misses" $((read_from_disks - direct - others - N / 100)) $((read_from_disks - direct + N / 100))

# cachestat: the same, the reader reading the file again.
kill "$READER_PID"; wait "$READER_PID" 2>/dev/null
rm -f "$T/ready"
IOLENS_CACHE_MECHANISM=procfs "$IOLENS" cachestat --json 0.2 >"$T/cachestat.json" 2>"$T/cachestat.err" &
CACHESTAT=$!
on_exit "kill $CACHESTAT 2>/dev/null"
wait_until 30 lines_at_least "$T/cachestat.json" 1 || not_ok "cachestat prints an interval"
pgpgin_before=$(awk '/^pgpgin / { print $2 }' /proc/vmstat)
lines=$(lines_of "$T/cachestat.json")
"$READER" "$T/f" "$T/ready" 1048576 0 5000 2>"$T/reader.err" &
READER_PID=$!
wait_until 60 test -e "$T/ready" || not_ok "odirect_reader read the file again"
check "odirect_reader read the N pages again ($(($(reader_bytes) / PAGE)))" [ "$(reader_bytes)" -ge $((N * PAGE)) ]
# Two intervals after: the reader still holds its descriptor (5 s) when they are taken.
last=$(($(lines_of "$T/cachestat.json") + 2))
wait_until 60 lines_at_least "$T/cachestat.json" "$last"
pgpgin_after=$(awk '/^pgpgin / { print $2 }' /proc/vmstat)
kill "$CACHESTAT"; wait "$CACHESTAT" 2>/dev/null
misses=$(sed -n "$((lines + 1)),${last}p" "$T/cachestat.json" | python3 -c 'import json, sys; print(sum(json.loads(l)["misses"] for l in sys.stdin))')
read_from_disks=$(((pgpgin_after - pgpgin_before) * 1024 / PAGE))
echo "# cachestat: pgpgin $read_from_disks pages, misses $misses, O_DIRECT $direct"
check "cachestat's misses leave them out too: $misses < pgpgin $read_from_disks - $direct + 1 % of N" \
	[ "$misses" -le $((read_from_disks - direct + N / 100)) ]
echo "1..$t_count"
