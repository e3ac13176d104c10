#!/usr/bin/env bash
# Measures what iolens cachestat and cachetop cost a program reading a cached file with 4k reads (dd bs=4k and a plain read() loop), with no tracer and with each tracer running, alternating: medians, GB/s, ratios and ns per read against no tracer, the issue's goal (cachestat at most 5 % slower), and the eBPF programs' own ns per event.
set -euo pipefail

usage="usage: ${0##*/} [--size SIZE] [--rounds N] [--reader dd|read|both] [DIR]
  Makes one file of SIZE in a new directory under DIR (removed at the end, on Ctrl-C too), reads it
  once so that it is in the page cache, then ROUNDS times, the configurations alternating (which
  goes first moves on by one every round), reads it whole with 4k reads:
    none       no tracer
    floor      an eBPF program that does nothing, where cachestat sees reads (the tracepoint
               mm_filemap_get_pages, or fentry or a kprobe on filemap_read, as cachestat's
               mechanism is): what any program there costs (built here with clang and libbpf
               when make has made build/bpf/vmlinux.h; left out, said so, otherwise)
    cachestat  iolens cachestat 1             (system-wide counts)
    cachetop   iolens cachetop 1 >file        (per process, plain rows)
    files      iolens cachetop --files 1 >file (per file)
  The readers: dd if=F of=/dev/null bs=4k (a read and a write to /dev/null a block; timed by a small
  C runner, fork to wait4) and \"read\", a C loop of read(fd, buf, 4096) until EOF (timed inside, no
  write system calls). Each tracer is started before the reads and they begin only once it has
  printed its first interval (it is attached by then); it is stopped with SIGINT after them. Before
  every read the file is checked with iolens pcstat to be fully cached, and read again if not; and
  with bpftool perf that no other process has eBPF programs on tracepoints or kprobes (other
  cachestat or cachetop runs would slow every configuration): the read waits up to QUIET_WAIT
  seconds for them to go, and is made again when one was there before or after it.
  Prints per reader and configuration the medians over the rounds: wall seconds, GB/s, the ratio
  to no tracer, the tracer's cost per 4k read in ns, CPU seconds (user + system) and the spread.
  Goal (from the issue): reading with cachestat running at most 5 % slower than without
  (cachestat / none <= 1.05, every reader), judged on each round's own ratio by bench/verdict.py:
  met when the rounds agree (all of 3, 4 of 5; their spread, (max - min) / median, within 10 %),
  NOT met when they agree that it is missed, else undecided; a round where reads ran more than
  5 % faster with cachestat than without (ratio < 0.95: a tracer only adds work) or another
  tracer was seen is disturbed, counted on neither side. Said at the end with each round's ratio
  and their spread, the floor's ratio and what counting adds above it (config / floor).
  Then (PROG_STATS=1, the default, with kernel.bpf_stats_enabled=1 only for that part, restored
  after) one more read per tracer: each eBPF program's runs and ns per run during it, from
  /proc/PID/fdinfo (run_cnt, run_time_ns), against the measured cost per read.
  Exit status 0 when the goal is met, 1 when it is not (or on an error), 3 when undecided.
  With the defaults it takes about 70 s.
DIR: where the test directory is made (default: \$TMPDIR when set and not on tmpfs, else /var/tmp,
  else the current directory); it must be on a disk, not tmpfs, with SIZE free. IOLENS is copied
  there at the start: a rebuild during the run does not change what is measured.
env: SIZE (default 1G; K, M, G are powers of 1024), ROUNDS (default 5), READER (both, dd or read;
  default both), IOLENS (default ./iolens of this repository), PROG_STATS (1, default, or 0),
  QUIET_WAIT (seconds, default 60), CC (default cc), IOLENS_CACHE_MECHANISM (tracepoints, fentry or
  kprobes: what cachestat and cachetop count with, and where the floor is; default theirs); the
  options win."

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
SIZE=${SIZE:-1G}
ROUNDS=${ROUNDS:-5}
READER=${READER:-both}
PROG_STATS=${PROG_STATS:-1}
CC=${CC:-cc}
QUIET_WAIT=${QUIET_WAIT:-60}
GOAL_RATIO=1.05
BS=4096
dir=""
while (($#)); do
	case $1 in
	-h | --help) echo "$usage"; exit 0 ;;
	--size) SIZE=${2:?"$usage"}; shift 2 ;;
	--size=*) SIZE=${1#*=}; shift ;;
	--rounds) ROUNDS=${2:?"$usage"}; shift 2 ;;
	--rounds=*) ROUNDS=${1#*=}; shift ;;
	--reader) READER=${2:?"$usage"}; shift 2 ;;
	--reader=*) READER=${1#*=}; shift ;;
	-*) echo "$usage" >&2; exit 2 ;;
	*) [[ -z $dir ]] || { echo "$usage" >&2; exit 2; }; dir=$1; shift ;;
	esac
done

die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ -x $IOLENS ]] || die "$IOLENS: not an executable (run make, or set IOLENS)"
[[ $(id -u) == 0 ]] || die "cachestat and cachetop need root for eBPF"
command -v python3 >/dev/null || die "python3 not found: it makes the table"
command -v "$CC" >/dev/null || die "$CC not found: it builds the reader and the runner (set CC)"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS=$ROUNDS: not a positive integer"
[[ $PROG_STATS == [01] ]] || die "PROG_STATS=$PROG_STATS: 0 or 1"
[[ $QUIET_WAIT =~ ^[0-9]+$ ]] || die "QUIET_WAIT=$QUIET_WAIT: whole seconds"
bpftool=$(command -v bpftool || true)
case $READER in both) readers=(dd read) ;; dd | read) readers=("$READER") ;; *) die "READER=$READER: dd, read or both" ;; esac
size_bytes=$(numfmt --from=iec "${SIZE^^}" 2>/dev/null) || die "SIZE=$SIZE: not a size (1G, 512M, bytes)"
size_bytes=$((size_bytes / 1048576 * 1048576))
((size_bytes >= 16 * 1048576)) || die "SIZE=$SIZE: at least 16M"
reads=$((size_bytes / BS)) # the 4k reads that return data (each reader makes one more, at EOF)

if [[ -z $dir ]]; then
	for candidate in "${TMPDIR:-}" /var/tmp .; do
		[[ -n $candidate && -d $candidate ]] || continue
		case $(stat -f -c %T "$candidate") in tmpfs | ramfs) continue ;; esac
		dir=$candidate
		break
	done
	[[ -n $dir ]] || die "no directory on a disk found (give a DIR)"
fi
[[ -d $dir ]] || die "$dir: not a directory"
fs_type=$(stat -f -c %T "$dir")
case $fs_type in tmpfs | ramfs) die "$dir is on $fs_type: the file must be on a disk (give a DIR on one)" ;; esac
avail=$(df -P -B1 "$dir" | awk 'NR == 2 { print $4 }')
((avail > size_bytes + 64 * 1048576)) || die "$dir: $((avail >> 20)) MiB free, the test file needs $((size_bytes >> 20)) MiB"

work=$(mktemp -d -p "$dir" .iolens-cachestat-overhead.XXXXXX)
work=$(cd "$work" && pwd)
file=$work/testfile
tracer_pid=""
stats_saved=""
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	if [[ -n $tracer_pid ]]; then
		kill -INT "$tracer_pid" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$tracer_pid" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$tracer_pid" 2>/dev/null || true
		wait "$tracer_pid" 2>/dev/null || true
	fi
	[[ -z $stats_saved ]] || sysctl -q -w kernel.bpf_stats_enabled="$stats_saved" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The reader (read FILE BS: wall ns, user ns, system ns, read calls, bytes) and the runner (run
# COMMAND...: wall ns from fork to wait4, the child's user and system ns from wait4).
cat >"$work/reader.c" <<'EOF'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long tv_ns(struct timeval t) { return t.tv_sec * 1000000000LL + t.tv_usec * 1000LL; }

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "run") == 0) {
		struct rusage ru;
		long long start = now_ns(), end;
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return perror("fork"), 2;
		if (pid == 0) {
			execvp(argv[2], argv + 2);
			perror(argv[2]);
			_exit(127);
		}
		if (wait4(pid, &status, 0, &ru) < 0)
			return perror("wait4"), 2;
		end = now_ns();
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return fprintf(stderr, "%s: exit status %d\n", argv[2], status), 1;
		printf("%lld %lld %lld\n", end - start, tv_ns(ru.ru_utime), tv_ns(ru.ru_stime));
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "read") == 0) {
		size_t bs = strtoul(argv[3], NULL, 10);
		struct rusage r0, r1;
		long long start, end, calls = 0, bytes = 0;
		ssize_t n;
		void *buf;
		int fd = open(argv[2], O_RDONLY);

		if (fd < 0)
			return perror(argv[2]), 2;
		if (!bs || posix_memalign(&buf, 4096, bs))
			return fprintf(stderr, "bad block size\n"), 2;
		memset(buf, 0, bs);
		getrusage(RUSAGE_SELF, &r0);
		start = now_ns();
		do {
			n = read(fd, buf, bs);
			calls++;
			if (n > 0)
				bytes += n;
		} while (n > 0 || (n < 0 && errno == EINTR));
		end = now_ns();
		getrusage(RUSAGE_SELF, &r1);
		if (n < 0)
			return perror("read"), 1;
		printf("%lld %lld %lld %lld %lld\n", end - start, tv_ns(r1.ru_utime) - tv_ns(r0.ru_utime),
		       tv_ns(r1.ru_stime) - tv_ns(r0.ru_stime), calls, bytes);
		return 0;
	}
	fprintf(stderr, "usage: reader read FILE BS | reader run COMMAND...\n");
	return 2;
}
EOF
"$CC" -O2 -Wall -o "$work/reader" "$work/reader.c" || die "cannot build the reader"
reader=$work/reader

# A copy of iolens for the whole run, so that a rebuild of the tree meanwhile changes nothing.
built=""
[[ $IOLENS -ef $repo/iolens ]] && built=", tree $(git -C "$repo" describe --always --dirty 2>/dev/null || echo "not a git tree")"
iolens_version=$("$IOLENS" --version 2>/dev/null | head -n 1) || true
iolens_source=$IOLENS
cp "$IOLENS" "$work/iolens" || die "cannot copy $IOLENS to $work"
IOLENS=$work/iolens

# How cachestat sees reads here (IOLENS_CACHE_MECHANISM, or the one it chooses).
mechanism=$("$IOLENS" cachestat --json 0.1 1 2>"$work/mechanism.err" |
	python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["mechanism"] or "")') || mechanism=""
[[ -n $mechanism ]] || die "iolens cachestat does not count with eBPF here: $(head -n 1 "$work/mechanism.err")"

# The floor: what any eBPF program on the read path costs here, one that does nothing, attached
# where cachestat's read program is, the same way (tp_btf, fentry or kprobe).
floor=""
vmlinux_h=$repo/build/bpf/vmlinux.h
if command -v "${CLANG:-clang}" >/dev/null && [[ -r $vmlinux_h ]] && pkg-config --exists libbpf 2>/dev/null; then
	cat >"$work/floor.bpf.c" <<'EOF'
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
char LICENSE[] SEC("license") = "GPL";
SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(tracepoints)
{
	return 0;
}
SEC("fentry/filemap_read")
int BPF_PROG(fentry)
{
	return 0;
}
SEC("kprobe/filemap_read")
int BPF_KPROBE(kprobes)
{
	return 0;
}
EOF
	cat >"$work/floor.c" <<'EOF'
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void quit(int signo) { (void)signo; }
int main(int argc, char **argv)
{
	struct bpf_object *object = argc == 3 ? bpf_object__open_file(argv[1], NULL) : NULL;
	struct bpf_program *program;

	signal(SIGINT, quit);
	if (object) /* only the program named: one mechanism's */
		bpf_object__for_each_program(program, object)
			bpf_program__set_autoload(program, !strcmp(bpf_program__name(program), argv[2]));
	if (!object || bpf_object__load(object))
		return fprintf(stderr, "floor: cannot load %s\n", argc == 3 ? argv[1] : "?"), 1;
	bpf_object__for_each_program(program, object)
		if (bpf_program__autoload(program) && !bpf_program__attach(program))
			return fprintf(stderr, "floor: cannot attach\n"), 1;
	printf("attached\n");
	fflush(stdout);
	pause();
	bpf_object__close(object);
	return 0;
}
EOF
	bpf_arch=$(uname -m | sed 's/x86_64/x86/; s/aarch64/arm64/; s/ppc64le/powerpc/; s/s390x/s390/')
	if "${CLANG:-clang}" -g -O2 -target bpf -D__TARGET_ARCH_"$bpf_arch" -I"$(dirname "$vmlinux_h")" -c "$work/floor.bpf.c" \
		-o "$work/floor.bpf.o" 2>"$work/floor.err" &&
		"$CC" -O2 -o "$work/floor" "$work/floor.c" $(pkg-config --cflags --libs libbpf) 2>>"$work/floor.err"; then
		floor=$work/floor
	fi
fi
[[ -n $floor ]] || echo "${0##*/}: no floor configuration (needs clang, libbpf and $vmlinux_h: make)" >&2

configs=(none cachestat cachetop files)
[[ -z $floor ]] || configs=(none floor cachestat cachetop files)
set_tracer_argv() {
	case $1 in
	none) argv=() ;;
	floor) argv=("$floor" "$work/floor.bpf.o" "$mechanism") ;;
	cachestat) argv=("$IOLENS" cachestat 1) ;;
	cachetop) argv=("$IOLENS" cachetop 1) ;;
	files) argv=("$IOLENS" cachetop --files 1) ;;
	esac
}
describe_tracer() {
	local argv
	set_tracer_argv "$1"
	if [[ $1 == floor ]]; then echo "an eBPF program that does nothing, where cachestat sees reads ($mechanism)"
	elif ((${#argv[@]})); then echo "iolens ${argv[*]:1} >file &"; else echo "(no tracer)"; fi
}
describe_reader() {
	case $1 in
	dd) echo "dd if=F of=/dev/null bs=4k" ;;
	read) echo "read(fd, buf, 4096) until EOF (C loop)" ;;
	esac
}

# Starts the tracer of CONFIG in the background, its output to a file, and returns once it has
# printed its first interval (so it has attached its programs a second ago).
start_tracer() {
	local argv out=$work/tracer.$1.out
	set_tracer_argv "$1"
	((${#argv[@]})) || return 0
	: >"$out"
	"${argv[@]}" >"$out" 2>"$work/tracer.$1.err" </dev/null &
	tracer_pid=$!
	local waited=0
	until [[ -s $out ]]; do
		kill -0 "$tracer_pid" 2>/dev/null || { wait "$tracer_pid" || true; tracer_pid=""; die "$(describe_tracer "$1") exited at start: $(tail -n 3 "$work/tracer.$1.err")"; }
		((waited++ < 100)) || die "$(describe_tracer "$1") printed nothing in 10 s"
		sleep 0.1
	done
	if grep -q 'no eBPF' "$work/tracer.$1.err" 2>/dev/null; then
		die "$(describe_tracer "$1") is not counting with eBPF: $(head -n 1 "$work/tracer.$1.err")"
	fi
}
stop_tracer() {
	[[ -n $tracer_pid ]] || return 0
	kill -0 "$tracer_pid" 2>/dev/null || { wait "$tracer_pid" || true; tracer_pid=""; die "$(describe_tracer "$1") exited during the reads: $(tail -n 3 "$work/tracer.$1.err")"; }
	kill -INT "$tracer_pid"
	wait "$tracer_pid" || true
	tracer_pid=""
}

# Makes sure the whole file is in the page cache (a kernel thread may evict idle pages): pcstat,
# and a read with 1M blocks when a page is missing.
rewarms=0
ensure_cached() {
	local cached pages tries=0
	while :; do
		read -r cached pages < <("$IOLENS" pcstat --no-header -o cached,pages "$file") || die "iolens pcstat $file failed"
		[[ $cached == "$pages" ]] && return 0
		((tries++ < 3)) || die "$file: $cached of $pages pages cached after reading it $tries times"
		dd if="$file" of=/dev/null bs=1M status=none || die "reading $file failed"
		[[ ${1:-} == first ]] || rewarms=$((rewarms + 1))
	done
}

# Other processes' eBPF programs on perf events (tracepoints, kprobes: other cachestat or cachetop
# runs, bpftrace...) would slow every configuration: "PID(COMM)" of each, from bpftool perf.
foreign_tracers() {
	[[ -n $bpftool ]] || return 0
	local pid
	for pid in $("$bpftool" perf 2>/dev/null | awk -v own="${tracer_pid:-0}" '$1 == "pid" && $2 != own { print $2 }' | sort -n -u); do
		printf '%s(%s) ' "$pid" "$(cat /proc/"$pid"/comm 2>/dev/null || echo gone)"
	done
}
# Waits up to QUIET_WAIT seconds for other processes' eBPF programs to go away.
wait_quiet() {
	local others waited=0
	others=$(foreign_tracers)
	[[ -n $others ]] || return 0
	echo "${0##*/}: waiting for other eBPF tracers to stop: $others" >&2
	while [[ -n $others ]] && ((waited < QUIET_WAIT * 5)); do
		sleep 0.2
		waited=$((waited + 1))
		others=$(foreign_tracers)
	done
	[[ -z $others ]] || echo "${0##*/}: still there after $QUIET_WAIT s, measuring anyway: $others" >&2
}

# One read with READER; appends "wall_ns user_ns sys_ns disturbed" to $work/CONFIG.READER, where
# disturbed is 1 when another process had eBPF programs attached before or after the read. A
# disturbed read is made again (up to 3 times), after waiting for the other tracers to go. With
# snap_pid set, the eBPF programs of that process are read just before and after the read kept
# (snap_before, snap_after: see prog_snapshot).
disturbed_reads=0
snap_pid=""
run_reader() {
	local config=$1 rd=$2 line before after
	for _ in 1 2 3 4; do
		wait_quiet
		ensure_cached
		before=$(foreign_tracers)
		[[ -z $snap_pid ]] || snap_before=$(prog_snapshot "$snap_pid")
		case $rd in
		dd) line=$("$reader" run dd if="$file" of=/dev/null bs=4k 2>"$work/dd.err") || die "dd failed: $(tail -n 3 "$work/dd.err")" ;;
		read)
			line=$("$reader" read "$file" "$BS") || die "the reader failed"
			[[ $(awk '{ print $5 }' <<<"$line") == "$size_bytes" ]] || die "the reader read $(awk '{ print $5 }' <<<"$line") bytes, not $size_bytes"
			line=$(awk '{ print $1, $2, $3 }' <<<"$line")
			;;
		esac
		[[ -z $snap_pid ]] || snap_after=$(prog_snapshot "$snap_pid")
		after=$(foreign_tracers)
		[[ -z $before && -z $after ]] && break
		disturbed_reads=$((disturbed_reads + 1))
		echo "${0##*/}: another tracer ran during a read ($config, $rd): $before$after" >&2
	done
	echo "$line $([[ -z $before && -z $after ]] && echo 0 || echo 1)" >>"$work/$config.$rd"
}

start_s=$SECONDS
src_dev=$(findmnt -n -o SOURCE,FSTYPE -T "$work" 2>/dev/null | head -n 1 | awk '{ print $2 " on " $1 }') || true
echo "cachestat-overhead: iolens = $iolens_source ($iolens_version$built, copied at the start)," \
	"$(nproc) cpus, kernel $(uname -r), load average $(cut -d ' ' -f 1-3 /proc/loadavg) at the start"
echo "cachestat and cachetop see reads with $mechanism (IOLENS_CACHE_MECHANISM=${IOLENS_CACHE_MECHANISM:-})"
echo "file F: $((size_bytes >> 20)) MiB in $work (${src_dev:-$fs_type}), $reads reads of 4 KiB;" \
	"$ROUNDS rounds, the configurations alternating"

dd if=/dev/zero of="$file" bs=1M count=$((size_bytes >> 20)) conv=fsync status=none 2>"$work/layout.err" ||
	die "writing $file failed: $(tail -n 3 "$work/layout.err")"
ensure_cached first

echo
echo "configurations (F the test file):"
for config in "${configs[@]}"; do printf '  %-10s %s\n' "$config" "$(describe_tracer "$config")"; done
echo "readers:"
for rd in "${readers[@]}"; do printf '  %-10s %s\n' "$rd" "$(describe_reader "$rd")"; done

# Warm-up: one read of each kind, not counted (the reader's and dd's pages, the CPU's clock).
for rd in "${readers[@]}"; do run_reader warmup "$rd"; done

for ((round = 1; round <= ROUNDS; round++)); do
	for ((i = 0; i < ${#configs[@]}; i++)); do
		config=${configs[(i + round - 1) % ${#configs[@]}]}
		start_tracer "$config"
		if ((round % 2)); then order=("${readers[@]}"); else order=(); for ((j = ${#readers[@]} - 1; j >= 0; j--)); do order+=("${readers[j]}"); done; fi
		for rd in "${order[@]}"; do run_reader "$config" "$rd"; done
		stop_tracer "$config"
	done
	printf '%s: round %d/%d done\n' "${0##*/}" "$round" "$ROUNDS" >&2
done

status=0
python3 - "$repo/bench" "$work" "$size_bytes" "$reads" "$GOAL_RATIO" "$rewarms" "$disturbed_reads" "${configs[*]}" "${readers[@]}" <<'EOF' || status=$?
import statistics, sys
sys.path.insert(0, sys.argv.pop(1))
import verdict
work, size, reads, goal_ratio = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
rewarms, disturbed_reads, configs, readers = int(sys.argv[5]), int(sys.argv[6]), sys.argv[7].split(), sys.argv[8:]
runs = {}
for rd in readers:
    for c in configs:
        with open(f"{work}/{c}.{rd}") as f:
            runs[c, rd] = [tuple(int(x) for x in line.split()) for line in f if line.strip()]
wall = {k: statistics.median(r[0] for r in v) / 1e9 for k, v in runs.items()}
best = {k: min(r[0] for r in v) / 1e9 for k, v in runs.items()}
cpu = {k: statistics.median(r[1] + r[2] for r in v) / 1e9 for k, v in runs.items()}

def spread(k):
    v = [r[0] for r in runs[k]]
    return 100 * (max(v) - min(v)) / statistics.median(v)

print()
print(f"medians of {len(runs[configs[0], readers[0]])} rounds; ratio: wall time / no tracer's; +ns/read: (wall - no tracer's) / {reads} reads;")
print("min: the fastest round and its ratio to no tracer's fastest; CPU: the reader's user + system (dd's from")
print("wait4, the loop's from getrusage); +-%: the spread of wall time, (max - min) / median")
print(f"{'reader':<7} {'config':<10} {'wall s':>7} {'GB/s':>6} {'ratio':>7} {'+ns/read':>8} {'min s':>7} {'min ratio':>9}"
      f" {'CPU s':>6} {'CPU ratio':>9} {'+-%':>5}")
for rd in readers:
    b = ("none", rd)
    for c in configs:
        k = (c, rd)
        extra = "-" if c == "none" else f"{(wall[k] - wall[b]) / reads * 1e9:.0f}"
        print(f"{rd if c == 'none' else '':<7} {c:<10} {wall[k]:7.3f} {size / wall[k] / 1e9:6.2f} {wall[k] / wall[b]:6.3f}x {extra:>8}"
              f" {best[k]:7.3f} {best[k] / best[b]:8.3f}x {cpu[k]:6.3f} {cpu[k] / cpu[b]:8.3f}x {spread(k):5.1f}")
print()
print("wall s of each round (in the order run; * another process had eBPF programs attached):")
for rd in readers:
    for c in configs:
        print(f"  {rd:<5} {c:<10}" + " ".join(f"{r[0] / 1e9:7.3f}{'*' if len(r) > 3 and r[3] else ' '}" for r in runs[c, rd]))
if rewarms:
    print(f"the file was not fully cached before {rewarms} reads and was read again first")
if disturbed_reads:
    print(f"{disturbed_reads} reads had another process's eBPF programs attached and were made again (up to 3 times)")
print()
ratios = {rd: wall["cachestat", rd] / wall["none", rd] for rd in readers}
# Each round's own ratio: its cachestat read over its no-tracer read (the same round, minutes apart
# at most); a round where another process's eBPF programs were attached (r[3]) is disturbed.
verdicts = {}
for rd in readers:
    pairs = zip(runs["cachestat", rd], runs["none", rd])
    verdicts[rd] = verdict.judge([(c[0] / n[0], c[3] or n[3]) for c, n in pairs], f"<= {goal_ratio}",
                                 plausible="0.95..", max_spread=0.10)
print(f"goal: reading a cached file with 4k reads with iolens cachestat running at most {100 * (goal_ratio - 1):.0f} % slower"
      f" (each round's cachestat / none <= {goal_ratio}, every reader): {verdict.combine(verdicts.values())}")
for rd in readers:
    print(f"  {rd}: {verdicts[rd]}")
print("      cachestat / none of the medians: " + ", ".join(f"{rd} {ratios[rd]:.3f}x" for rd in readers))
print("      no goal, for information: " + ", ".join(f"{c} / none {rd} {wall[c, rd] / wall['none', rd]:.3f}x"
                                                   for c in ("cachetop", "files") for rd in readers))
if "floor" in configs:
    print("the floor, an eBPF program that does nothing where cachestat sees reads: " +
          ", ".join(f"{rd} {wall['floor', rd] / wall['none', rd]:.3f}x of none" for rd in readers))
    print("      what counting adds above it (config / floor): " +
          ", ".join(f"{c} {rd} {wall[c, rd] / wall['floor', rd]:.3f}x" for c in ("cachestat", "cachetop", "files")
                    for rd in readers))
sys.exit(verdict.exit_status(verdicts.values()))
EOF
[[ $status == [013] ]] || die "making the table failed"

# ---- the eBPF programs' own time ---------------------------------------------------------------
# prog_snapshot PID: "prog_id run_cnt run_time_ns" for each eBPF program the process holds.
prog_snapshot() {
	local fd info
	for fd in /proc/"$1"/fd/*; do
		[[ $(readlink "$fd" 2>/dev/null) == anon_inode:bpf-prog ]] || continue
		info=/proc/$1/fdinfo/${fd##*/}
		awk '$1 == "prog_id:" { id = $2 } $1 == "run_cnt:" { n = $2 } $1 == "run_time_ns:" { t = $2 }
			END { if (id != "") print id, n + 0, t + 0 }' "$info" 2>/dev/null || true
	done | sort -u # as join wants it
}
median_wall() { awk '{ print $1 }' "$1" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# The measured cost per read of CONFIG with READER: (median wall - no tracer's median wall) / reads.
cost_per_read() { awk -v a="$(median_wall "$work/$1.$2")" -v b="$(median_wall "$work/none.$2")" -v n="$reads" 'BEGIN { print (a - b) / n }'; }
prog_name() {
	local name=""
	[[ -n $bpftool ]] && name=$("$bpftool" prog show id "$1" 2>/dev/null | awk 'NR == 1 { for (i = 1; i < NF; i++) if ($i == "name") print $(i + 1) }')
	echo "${name:-prog $1}"
}

if [[ $PROG_STATS == 1 ]]; then
	echo
	echo "eBPF programs' own time (kernel.bpf_stats_enabled=1 for this part only, which adds to each run):"
	echo "one more read per reader and tracer; events and time of each program during that read (the whole"
	echo "system's events, the reader's nearly all), ns per event, events and ns per 4k read, against the"
	echo "measured cost per read (+ns/read above, without the stats: the rest is the tracepoints' own dispatch"
	echo "and, with programs on syscalls:sys_enter_*/sys_exit_*, every system call's slower path)"
	stats_saved=$(sysctl -n kernel.bpf_stats_enabled) || die "cannot read kernel.bpf_stats_enabled"
	sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot set kernel.bpf_stats_enabled=1"
	for config in cachestat cachetop files; do
		start_tracer "$config"
		for rd in "${readers[@]}"; do
			snap_pid=$tracer_pid
			run_reader "stats.$config" "$rd"
			snap_pid=""
			read -r wall_ns _ _ disturbed < <(tail -n 1 "$work/stats.$config.$rd")
			echo
			printf '  %s, reader %s (%.3f s with the stats%s):\n' "$(describe_tracer "$config")" "$rd" \
				"$(awk -v w="$wall_ns" 'BEGIN { print w / 1e9 }')" "$([[ $disturbed == 0 ]] || echo "; another process's eBPF programs were attached")"
			printf '    %-22s %10s %10s %10s %10s\n' program events ns/event events/read ns/read
			join <(echo "$snap_before") <(echo "$snap_after") | while read -r id n0 t0 n1 t1; do
				((n1 > n0)) || continue
				printf '%s %s %s\n' "$(prog_name "$id")" $((n1 - n0)) $((t1 - t0))
			done | sort -k3,3nr | awk -v reads="$reads" '
				{ printf "    %-22s %10d %10.0f %10.3f %10.1f\n", $1, $2, $3 / $2, $2 / reads, $3 / reads; n += $2; t += $3 }
				END { printf "    %-22s %10d %10s %10.3f %10.1f\n", "all", n, "", n / reads, t / reads }'
			printf '    %-22s %43.0f\n' "measured (+ns/read)" "$(cost_per_read "$config" "$rd")"
		done
		stop_tracer "$config"
	done
	sysctl -q -w kernel.bpf_stats_enabled="$stats_saved" >/dev/null || true
	stats_saved=""
fi

echo
echo "took $((SECONDS - start_s)) s (writing the file, $ROUNDS rounds of ${#configs[@]} configurations," \
	"$((ROUNDS * ${#configs[@]} * ${#readers[@]})) timed reads$([[ $PROG_STATS == 0 ]] || echo ", then the programs' time"))"
exit "$status"
