# lib.sh: what command tests share: TAP checks, a scratch directory on a real filesystem, peer tools.
# Sourced by tests/cli/*.sh; tests/run sets IOLENS (the binary) and TEST_TMPDIR.

: "${TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${IOLENS:=$TOP/iolens}"
: "${TEST_TMPDIR:=${TMPDIR:-/tmp}}"
mkdir -p "$TEST_TMPDIR"
T=$(mktemp -d "$TEST_TMPDIR/cli.XXXXXX")
trap 'cleanup_hooks; [ -n "${KEEP_T:-}" ] || rm -rf "$T"' EXIT
CLEANUP=()
cleanup_hooks() { local c; for c in "${CLEANUP[@]}"; do eval "$c"; done; }
on_exit() { CLEANUP+=("$1"); }
# loop_release DEVICE FILE: detaches the loop device if it still reads FILE (an exit hook's: once
# detached, its number may be the device of another test, run beside this one).
loop_release() {
	local backing
	[ -n "$1" ] && backing=$(cat "/sys/block/${1#/dev/}/loop/backing_file" 2>/dev/null) || return 0
	[ "${backing% (deleted)}" != "$(readlink -f "$2")" ] || losetup -d "$1" 2>/dev/null
	return 0
}

# loop_attach_apart FILE: attaches FILE to a loop device at a number the other tests' `losetup -f`
# does not take (from 200 on: the first free), and prints it; for a test that detaches it and
# attaches it again by number. Fails when none is free.
loop_attach_apart() {
	local n
	for n in $(seq $((200 + $$ % 40)) 299); do
		[ -e "/sys/block/loop$n/loop/backing_file" ] && continue
		losetup "/dev/loop$n" "$1" 2>/dev/null && { echo "/dev/loop$n"; return 0; }
	done
	return 1
}

# child_probed_fs IMAGE: makes IMAGE (a sparse file) a btrfs filesystem, a disk's filesystem that
# doctor asks in its probe child, marked (an ext4 and a tmpfs it asks itself). Fails, saying why
# on standard output, when this machine cannot.
child_probed_fs() {
	command -v mkfs.btrfs >/dev/null || { echo "needs mkfs.btrfs (make test-deps: btrfs-progs)"; return 1; }
	grep -qw btrfs /proc/filesystems || modprobe -q btrfs 2>/dev/null || { echo "this kernel has no btrfs"; return 1; }
	truncate -s 120M "$1" && mkfs.btrfs -q -f "$1" >/dev/null 2>&1 || { echo "mkfs.btrfs $1 failed"; return 1; }
}

# A command run under strace for the statfs calls it and its children make (execve too, for its
# pid). LeakSanitizer cannot run under ptrace: a sanitized build's leaks are checked by other runs.
STATFS_TRACED=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=execve,statfs)
# traced_iolens STRACE: the pid of the iolens that STRACE (strace -f -o's file) saw start.
traced_iolens() { awk '/execve\(.*iolens/ { print $1; exit }' "$1"; }
# statfs_askers STRACE DIR: the processes that asked DIR's statfs (strace's pid column), each once.
statfs_askers() { awk -v d="statfs(\"$2\"," 'index($0, d) { print $1 }' "$1" | sort -u | tr '\n' ' '; }

t_count=0
ok()     { t_count=$((t_count + 1)); echo "ok $t_count - $*"; }
not_ok() { t_count=$((t_count + 1)); echo "not ok $t_count - $*"; }
skip()   { t_count=$((t_count + 1)); echo "ok $t_count # SKIP $*"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
# tap CHECKER LINES: a checker's "ok TEXT", "ok TEXT # SKIP" and "not ok TEXT" lines as this
# test's checks; any other line is a failure, said with the checker's name.
tap() {
	local line
	while IFS= read -r line; do
		case $line in
		"not ok "*) not_ok "${line#not ok }" ;;
		"ok "*"# SKIP") line=${line#ok }; skip "${line% # SKIP}" ;;
		"ok "*) ok "${line#ok }" ;;
		*) not_ok "$1 said: $line" ;;
		esac
	done <<<"$2"
}

# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
# check_fails DESCRIPTION COMMAND...: passes when the command fails.
check_fails() { local d=$1; shift; if "$@"; then not_ok "$d"; else ok "$d"; fi; }
# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: expected '$2', got '$3'"; fi
}
# check_match DESCRIPTION REGEX TEXT
check_match() {
	if grep -qE -- "$2" <<<"$3"; then ok "$1"; else not_ok "$1: /$2/ not in: $(head -c 400 <<<"$3")"; fi
}
check_no_match() {
	if grep -qE -- "$2" <<<"$3"; then not_ok "$1: /$2/ found in: $(head -c 400 <<<"$3")"; else ok "$1"; fi
}

is_root() { [ "$(id -u)" = 0 ]; }

# ebpf_expected: eBPF must count here: root on a kernel with BTF (and an iolens built with it,
# which make deps and make see to). Else prints why not, for a skip.
ebpf_expected() {
	if ! is_root; then
		echo "eBPF needs root"
		return 1
	fi
	if [ ! -r /sys/kernel/btf/vmlinux ]; then
		echo "this kernel has no BTF (/sys/kernel/btf/vmlinux)"
		return 1
	fi
	return 0
}
# bio_mechanisms: the ways iolens can see block requests' submitters on this kernel (its
# IOLENS_BIO_MECHANISM), by the tracepoints its BTF has (the btf_trace_ typedefs tp_btf programs
# attach by), not by asking iolens: block_io_start (Linux 6.5), block_getrq with block_rq_insert
# (every kernel since 5.11). A test holds each to the same truths.
bio_mechanisms() {
	local btf=/sys/kernel/btf/vmlinux found=""
	[ -r "$btf" ] || return 0
	bio_too_old && return 0
	grep -aqP '\x00btf_trace_block_io_start\x00' "$btf" && found="block_io_start"
	grep -aqP '\x00btf_trace_block_getrq\x00' "$btf" && grep -aqP '\x00btf_trace_block_rq_insert\x00' "$btf" &&
		found="${found:+$found }block_getrq"
	echo "$found"
}
# bio_too_old: this kernel is older than BPF's atomic compare-and-exchange, which iolens's block
# programs need (Linux 5.12): its BTF has no BPF_MAP_TYPE_TASK_STORAGE (5.11), as iolens judges
# it. Such kernels (Debian 11's 5.10) are refused with that reason (bio_refused_says).
bio_too_old() { [ -r /sys/kernel/btf/vmlinux ] && ! grep -aq 'BPF_MAP_TYPE_TASK_STORAGE' /sys/kernel/btf/vmlinux; }
BIO_TOO_OLD_SAYS="is older than the block programs, which need BPF's atomic compare-and-exchange \(Linux 5.12\)"
# bio_expected: as ebpf_expected, for iolens's block programs: also refused on kernels before them.
bio_expected() {
	ebpf_expected || return 1
	if bio_too_old; then
		echo "this kernel is older than BPF's atomic compare-and-exchange (Linux 5.12), which the block programs need: refused (biotop.sh checks the reason)"
		return 1
	fi
}
# bio_quiet MECHANISM FILE: FILE, a command's standard error, says nothing; with block_getrq, but
# its one line of what is less exact than with block_io_start.
bio_quiet() {
	if [ "$1" = block_getrq ]; then
		[ "$(grep -c . "$2")" = 1 ] && grep -q "each request's process seen at block_getrq (no block_io_start before Linux 6.5)" "$2"
	else
		! grep -q . "$2"
	fi
}
# need_ebpf: skips the whole test where eBPF cannot be expected; where it can, a test that
# finds it not counting fails, with iolens's reason, and ends.
need_ebpf() {
	local why
	why=$(ebpf_expected) || skip_all "$why"
	"$IOLENS" cachestat --json 0.1 1 >"$T/ebpf-probe.out" 2>"$T/ebpf-probe.err"
	if ! grep -q '"mode":"ebpf"' "$T/ebpf-probe.out"; then
		not_ok "eBPF counts here (root, BTF): $(head -c 300 "$T/ebpf-probe.err")"
		echo "1..$t_count"
		exit 1
	fi
}
# waits_between_samples PID: doctor PID waits for its next sample (ring_buffer__poll, or
# clock_nanosleep without eBPF), as its wait channel says, or its kernel stack where wchan says 0
# (x86's ORC unwinder before Linux 5.16). Root.
waits_between_samples() {
	case $(cat /proc/$1/wchan 2>/dev/null) in
	do_epoll_wait|ep_poll|hrtimer_nanosleep|do_nanosleep) return 0 ;;
	0) grep -qE '^\[<[0-9a-f]+>\] (ep_poll|do_epoll_wait|hrtimer_nanosleep|do_nanosleep)\+' /proc/$1/stack 2>/dev/null ;;
	*) return 1 ;;
	esac
}
# pause_damon: a kernel reclaim thread (DAMON with a pageout scheme, which some machines run)
# pages out page cache in regions it judges cold, even with free memory and even pages read a
# moment ago. A test that holds exact residency to a truth turns it off while it runs (as root),
# and back on when it ends.
pause_damon() {
	local state
	is_root || return 0
	for state in /sys/kernel/mm/damon/admin/kdamonds/*/state; do
		[ -w "$state" ] && [ "$(cat "$state" 2>/dev/null)" = on ] || continue
		echo off >"$state" 2>/dev/null && on_exit "echo on > '$state'"
	done
	return 0
}
fs_type() { stat -f -c %T "$1"; }
# by_each_mechanism SCRIPT ARGS...: runs the python TAP script once by each mechanism this kernel
# counts page-cache accesses with (tracepoints, fentry, kprobes; IOLENS_CACHE_MECHANISM set: that
# one), its checks numbered on and marked with the mechanism, its plan left out; prints the plan and
# returns non-zero if any run failed.
by_each_mechanism() {
	local mechanism mechanisms=() status=0 line
	for mechanism in ${IOLENS_CACHE_MECHANISM:-tracepoints fentry kprobes}; do
		if IOLENS_CACHE_MECHANISM=$mechanism "$IOLENS" cachestat --json 0.1 1 2>"$T/why" | grep -q '"mode":"ebpf"'; then
			mechanisms+=("$mechanism")
		else
			echo "# $mechanism: not here: $(cat "$T/why")"
		fi
	done
	[ ${#mechanisms[@]} -gt 0 ] || { not_ok "no mechanism counts here"; echo "1..$t_count"; return 1; }
	for mechanism in "${mechanisms[@]}"; do
		echo "# $mechanism"
		IOLENS_CACHE_MECHANISM=$mechanism python3 "$@" >"$T/tap" || status=1
		while IFS= read -r line; do
			if [[ $line =~ ^(not\ )?ok\ [0-9]+(\ -\ )?(.*)$ ]]; then
				t_count=$((t_count + 1))
				echo "${BASH_REMATCH[1]}ok $t_count - [$mechanism] ${BASH_REMATCH[3]}"
			elif [[ ! $line =~ ^1\.\.[0-9]+ ]]; then
				echo "$line"
			fi
		done <"$T/tap"
	done
	echo "1..$t_count"
	return $status
}
# Page-cache eviction needs a disk filesystem: tmpfs pages are the file itself.
can_evict() { case "$(fs_type "$T")" in tmpfs|ramfs|overlayfs) return 1 ;; esac; return 0; }

# run CMD...: sets OUT, ERR and RC; a hang is a failure, not a stuck suite.
run() {
	OUT=$(timeout -k 5 120 "$@" 2>"$T/.stderr")
	RC=$?
	ERR=$(cat "$T/.stderr")
	# Nothing a test runs takes minutes: one stopped by the timeout is a hang (or a test that
	# waits for nothing), said as a failure of its own, not left to pass on what it printed.
	if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
		not_ok "'${*:1:3}' was still running after 120 s: stopped (exit $RC)"
	fi
}

# As an unprivileged user, for permission tests: run "${AS_NOBODY[@]}" CMD...
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all)

# start_vtload NAME OPS...: vtload (tests/helpers/vtload, a libvtrace server the test drives) in the
# background, as VTLOAD_PID; vtload_say COMMAND sends it one command and waits for its "ok".
start_vtload() {
	mkfifo "$T/vtload.in" "$T/vtload.out"
	"${BUILD:-$TOP/build}/tests/helpers/vtload" "$@" <"$T/vtload.in" >"$T/vtload.out" &
	VTLOAD_PID=$!
	exec {VTLOAD_IN}>"$T/vtload.in" {VTLOAD_OUT}<"$T/vtload.out"
	read -r -u "$VTLOAD_OUT" _ _
	on_exit "kill $VTLOAD_PID 2>/dev/null"
}
vtload_say() {
	local answer
	echo "$1" >&"$VTLOAD_IN"
	read -r -u "$VTLOAD_OUT" answer
}
# vtload_start NAME SERVICE [RUNNER...] -- OPS...: one of several vtloads, of SERVICE, run by
# RUNNER (such as "${AS_NOBODY[@]}"; root without), fed through FIFOs: NAME_pid, NAME_path.
# vtload_to NAME COMMAND sends it one command and waits for its "ok".
vtload_start() {
	local name=$1 service=$2 runner=() fd_in fd_out; shift 2
	while [ "$1" != -- ]; do runner+=("$1"); shift; done
	shift
	rm -f "$T/$name.in" "$T/$name.out"
	mkfifo "$T/$name.in" "$T/$name.out"
	"${runner[@]}" "${BUILD:-$TOP/build}/tests/helpers/vtload" "$service" "$@" <"$T/$name.in" >"$T/$name.out" &
	eval "${name}_pid=$!"
	exec {fd_in}>"$T/$name.in" {fd_out}<"$T/$name.out"
	eval "${name}_in=$fd_in ${name}_out=$fd_out"
	read -r -u "$fd_out" _ "${name}_path"
	on_exit "kill $! 2>/dev/null"
}
vtload_to() {
	local in out answer
	eval "in=\$${1}_in out=\$${1}_out"
	echo "$2" >&"$in"
	read -r -u "$out" answer
}

# Cached pages of one file by each tool.
iolens_cached()  { "$IOLENS" pcstat --csv --no-header -o cached "$1"; }
fincore_cached() { fincore --raw --noheadings --output PAGES "$1"; }
# nobody_told FILE: whether the kernel tells the user nobody FILE's cached pages: cachestat(2) as
# nobody answers (a kernel before 6.5 has none, and its mincore tells only owners and writers since
# 5.2; 6.10 and later refuse cachestat to the others too). Its answer, or nothing, on stdout.
nobody_told() {
	"${AS_NOBODY[@]}" /usr/bin/python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_RDONLY)
rng, st = (ctypes.c_uint64 * 2)(0, 0), (ctypes.c_uint64 * 5)()
if libc.syscall(451, fd, rng, st, 0) == 0:
    print(st[0])' "$1" 2>/dev/null
}
vmtouch_cached() { vmtouch "$1" 2>/dev/null | awk '/Resident Pages/ { split($3, a, "/"); print a[1] }'; }

# Read-ahead finishes after the reader returns: wait until two looks in a row agree.
settle() {
	local f=$1 a b i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		a=$(iolens_cached "$f"); sleep 0.1; b=$(iolens_cached "$f")
		[ "$a" = "$b" ] && return 0
	done
	return 0
}

# Cached pages by all three tools on one line; "A A A" when they agree.
three_tools() { echo "$(iolens_cached "$1") $(fincore_cached "$1") $(vmtouch_cached "$1")"; }
# check_peers DESCRIPTION FILE [EXPECTED]: iolens, fincore and vmtouch count the same pages.
check_peers() {
	local d=$1 f=$2 want=${3:-} got i
	for i in 1 2 3 4 5; do
		settle "$f"
		got=$(three_tools "$f")
		set -- $got
		[ "$1" = "$2" ] && [ "$2" = "$3" ] && { [ -z "$want" ] || [ "$1" = "$want" ]; } && break
	done
	set -- $got
	if [ "$1" = "$2" ] && [ "$2" = "$3" ] && { [ -z "$want" ] || [ "$1" = "$want" ]; }; then
		ok "$d (iolens fincore vmtouch: $got)"
	else
		not_ok "$d: iolens fincore vmtouch = $got${want:+, expected $want}"
	fi
}

# remove_cgroup DIR: a cgroup the test made, removed: what still runs in it killed, and waited
# for (a cgroup with a task in it cannot be removed; one killed a moment ago may still be there).
remove_cgroup() {
	local i pid
	for i in $(seq 100); do
		[ -s "$1/cgroup.procs" ] || break
		for pid in $(cat "$1/cgroup.procs" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
		sleep 0.05
	done
	for i in $(seq 100); do rmdir "$1" 2>/dev/null && return 0; [ -d "$1" ] || return 0; sleep 0.05; done
	echo "# could not remove the cgroup $1" >&2
	return 1
}

# wait_until [SECONDS] COMMAND...: runs COMMAND every 0.05 s until it succeeds. SECONDS (default
# 120) only ends a wait that would never end: tests wait for the condition they need, never for
# a time, so a busy machine makes them slower, not wrong. It tries SECONDS x 20 times, and stops
# at twice SECONDS however many tries a slow COMMAND allowed (a python3 check on a loaded machine
# took half a second a try: 60 s meant 10 minutes).
wait_until() {
	local limit=120 i end
	case $1 in [0-9]*) limit=$1; shift ;; esac
	end=$((SECONDS + 2 * limit))
	for ((i = 0; i < limit * 20 && SECONDS < end; i++)); do "$@" && return 0; sleep 0.05; done
	return 1
}
# check_unit UNIT: a unit of docs/ as systemd reads it (its ExecStart on this build, its man page
# there): systemd-analyze verify says nothing, and its exposure is below MEDIUM.
check_unit() {
	local name score
	name=$(basename "$1" .service)
	if ! command -v systemd-analyze >/dev/null; then
		skip "$name: systemd-analyze is not installed"
		return
	fi
	mkdir -p "$T/man/man1"
	ln -sf "$TOP/docs/$name.1" "$T/man/man1/$name.1"
	sed "s|^ExecStart=/usr/local/bin/iolens|ExecStart=$IOLENS|" "$1" >"$T/$name.service"
	check_eq "systemd-analyze verify $name: nothing to say" "" "$(MANPATH=$T/man systemd-analyze verify "$T/$name.service" 2>&1)"
	score=$(systemd-analyze security --offline=yes "$T/$name.service" 2>/dev/null | awk '/Overall exposure level/ { print $(NF-2) }')
	if [ -n "$score" ]; then
		check "systemd-analyze security $name: exposure $score, OK (below 4.0: not MEDIUM, EXPOSED or UNSAFE)" \
			awk -v s="$score" 'BEGIN { exit !(s + 0 < 4.0) }'
	else
		skip "systemd-analyze security --offline: not in this systemd"
	fi
}
# free_port: a TCP port of 127.0.0.1 that nothing listens on now, as the kernel picks one, never one
# this test was given before (tests run beside each other: ports made from pids collided).
free_port() {
	python3 - "$T/ports" <<'PY'
import socket, sys
used = set(open(sys.argv[1]).read().split()) if __import__("os").path.exists(sys.argv[1]) else set()
while True:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = str(s.getsockname()[1])
    s.close()
    if port not in used:
        break
open(sys.argv[1], "a").write(port + "\n")
print(port)
PY
}
# gone PID: the process PID has ended (or was never there).
gone() { ! kill -0 "$1" 2>/dev/null; }
# state_of PID: the state letter /proc/PID/stat gives (R, S, D, T, Z ...), after the command's
# name, which may hold ") "; nothing when PID is gone. in_state PID LETTER: PID is in that state.
state_of() {
	local line
	read -r line 2>/dev/null <"/proc/$1/stat" || return 0
	line=${line##*) }
	echo "${line%% *}"
}
in_state() { [ "$(state_of "$1")" = "$2" ]; }
# vfork_end PID...: ends taskrows --vfork's parents (in D) and their children (asleep), and reaps
# the parents (a container's pid 1 may leave them zombies, listed as processes by later tests).
vfork_end() {
	local v
	for v in "$@"; do
		kill -KILL $(children_of "$v") "$v" 2>/dev/null
		wait "$v" 2>/dev/null
	done
	return 0
}
# children_of PID: the pids of PID's child processes, one a line, lowest first (pgrep -P's list,
# read from /proc: with or without procps, a test signals only a process it started).
children_of() {
	local parent=$1 stat line fields
	for stat in /proc/[0-9]*/stat; do
		read -r line 2>/dev/null <"$stat" || continue
		read -ra fields <<<"${line##*) }" # after the command's name, which may hold ") ": state, ppid
		[ "${fields[1]}" = "$parent" ] || continue
		stat=${stat#/proc/}
		echo "${stat%/stat}"
	done | sort -n
}
# wait_while PID [SECONDS] COMMAND...: wait_until COMMAND, while process PID lives: a condition only
# PID brings about ends the wait, failed, once PID has ended (COMMAND looked at once more then).
# (SECONDS is counted as wait_until counts it: in tries, and never past twice SECONDS.)
wait_while() {
	local pid=$1 limit=120 i end
	shift
	case $1 in [0-9]*) limit=$1; shift ;; esac
	end=$((SECONDS + 2 * limit))
	for ((i = 0; i < limit * 20 && SECONDS < end; i++)); do
		"$@" && return 0
		kill -0 "$pid" 2>/dev/null || { "$@"; return; }
		sleep 0.05
	done
	return 1
}
# lines_at_least FILE N: FILE has N lines or more.
# lines_of FILE: its line count (0 when it does not exist).
lines_of() { wc -l 2>/dev/null <"$1" || echo 0; }
lines_at_least() { [ "$(lines_of "$1")" -ge "$2" ]; }
# now_ns: CLOCK_REALTIME in ns, as the JSON lines' time_ns.
now_ns() { date +%s%N; }
# next_interval SECONDS NS: the interval to try a run again with that took NS nanoseconds and did not
# fit in one line of SECONDS: twice as long, and at least twice the run, so a slow machine (a guest
# under TCG beside other work: 2000 reads of fio over 8 s) gets there in one more try, not four.
next_interval() { awk -v i="$1" -v ns="$2" 'BEGIN { i *= 2; while (i < 2 * ns / 1e9) i *= 2; print i }'; }
# sampled_since FILE NS: the last whole JSON line of FILE was sampled at NS or after (its time_ns:
# when stat or biotop read its counts), so it and the lines before hold all that ended before NS.
sampled_since() {
	local n t
	n=$(lines_of "$1")
	[ "$n" -gt 0 ] || return 1
	t=$(head -n "$n" "$1" | tail -n 1 | grep -o '"time_ns":[0-9]*' | head -n 1)
	[ -n "$t" ] && [ "${t#*:}" -ge "$2" ]
}
# diskstats_sum DEV FIELD...: the sum of those fields of DEV's /proc/diskstats line, as an integer
# (4 reads completed, 6 sectors read, 10 sectors written; mawk would print a large sum as 2.5e+09).
diskstats_sum() {
	local dev=$1; shift
	awk -v d="$dev" -v f="$*" '$3 == d { n = split(f, k, " "); s = 0; for (i = 1; i <= n; i++) s += $(k[i]); printf "%.0f\n", s }' /proc/diskstats
}

# all_but_missed N COUNT: COUNT is N, but for the block completions the kernel ran no eBPF program
# for: at most 0.5 % fewer, never more. ftrace's block_rq_complete saw every one of those, and no
# eBPF program ran for them (tp_btf, raw_tp, tracepoint; block_rq_complete or block_io_done; a
# program of a few lines that logs each completion too) with no recursion miss counted (fdinfo's
# recursion_misses 0). On this VM each was completed in a softirq run on top of one thread of the
# VM's own agent (tokio-rt-worker of PID 1): all 16 of those in 350 000 completions logged, no
# other. They come in bursts (35 in a row once): a test that finds more missing measures again;
# a program that forgets requests is short every time.
all_but_missed() { [ -n "$2" ] && [ "$2" -le "$1" ] && [ $(($2 * 1000)) -ge $(($1 * 995)) ]; }
# all_the_tracer_saw N COUNT SEEN: COUNT is N but for completions the kernel ran no eBPF program
# for, which the block tracer (SEEN of the same requests, lib.sh) missed too: COUNT at most N and
# at least SEEN. On a busy machine more than 0.5 % went by unseen (77 of 9000 reads once); a
# program that forgets requests the kernel ran it for is short of the tracer's. (9/10 of N at
# least, lest a tracer that saw nothing pass.)
all_the_tracer_saw() {
	[ -n "$2" ] && [ -n "$3" ] && [ "$2" -le "$1" ] && [ "$2" -ge "$3" ] && [ $(($2 * 10)) -ge $(($1 * 9)) ]
}

# need_fuse_example: skips the whole test unless examples/fuse-passthrough can mount here; sets FPT.
need_fuse_example() {
	FPT=${BUILD:-$TOP/build}/examples/fuse-passthrough
	is_root || skip_all "FUSE mounts need root"
	[ -c /dev/fuse ] || skip_all "no /dev/fuse"
	command -v fusermount3 >/dev/null || skip_all "no fusermount3 (apt-get install fuse3)"
	[ -x "$FPT" ] || skip_all "$FPT is not built (make test-deps: libfuse3-dev)"
}
# wait_mounted DIR PID: until DIR is a mount point, while its server PID lives (5 s at most).
wait_mounted() {
	local i
	for i in $(seq 100); do mountpoint -q "$1" && return 0; kill -0 "$2" 2>/dev/null || return 1; sleep 0.05; done
	return 1
}

# unmount_fuse DIR: DIR's FUSE mount gone, lazily when busy; nothing when it is not mounted.
unmount_fuse() {
	mountpoint -q "$1" && { fusermount3 -u "$1" 2>/dev/null || fusermount3 -uz "$1"; }
	return 0
}
# stop_held_server PID DIR: a fuse-passthrough holding requests (--hang-op) told to answer them
# (SIGUSR1), its mount at DIR gone, and it ended and waited for.
stop_held_server() {
	kill -USR1 "$1" 2>/dev/null
	unmount_fuse "$2"
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# slow_device DIR SIZE [PREFIX... --] OPTIONS...: a device slower than this machine, a loop device
# (direct I/O) over a file of SIZE random bytes on examples/fuse-passthrough, started with OPTIONS
# (--slow-op, --single-thread...) under PREFIX (taskset...) and mounted at DIR/mnt: its --slow-op
# acts once SIGUSR2 turns it on. Sets SLOW_LOOP and SLOW_SERVER and registers their undoing (the
# loop device before the mount it holds); else fails with SLOW_WHY saying why.
slow_device() {
	local dir=$1 size=$2 fpt=${BUILD:-$TOP/build}/examples/fuse-passthrough prefix=() loop
	shift 2
	if [[ " $* " == *" -- "* ]]; then
		while [ "$1" != -- ]; do prefix+=("$1"); shift; done
		shift
	fi
	SLOW_LOOP="" SLOW_SERVER="" SLOW_WHY=""
	if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null || [ ! -x "$fpt" ]; then
		SLOW_WHY="needs /dev/fuse, fusermount3 and $fpt"
		return 1
	fi
	mkdir -p "$dir/src" "$dir/mnt"
	make_file "$dir/src/img" "$size"
	"${prefix[@]}" "$fpt" --no-vtrace "$@" "$dir/src" "$dir/mnt" 2>"$dir/fpt.log" &
	SLOW_SERVER=$!
	if ! wait_mounted "$dir/mnt" "$SLOW_SERVER"; then
		SLOW_WHY="the FUSE example did not mount ($(head -c 200 "$dir/fpt.log"))"
	elif ! loop=$(losetup -f --show --direct-io=on "$dir/mnt/img" 2>"$dir/losetup.err"); then
		SLOW_WHY="losetup: $(head -1 "$dir/losetup.err")"
	elif [ "$(cat "/sys/block/${loop#/dev/}/loop/dio" 2>/dev/null)" != 1 ]; then
		losetup -d "$loop" 2>/dev/null
		SLOW_WHY="no direct I/O through FUSE here (the page cache would answer the reads)"
	else
		SLOW_LOOP=$loop
		on_exit "loop_release $loop $dir/mnt/img; fusermount3 -u '$dir/mnt' 2>/dev/null; kill $SLOW_SERVER 2>/dev/null"
		return 0
	fi
	fusermount3 -u "$dir/mnt" 2>/dev/null
	kill "$SLOW_SERVER" 2>/dev/null
	return 1
}

# queued_device: a device whose requests wait in a scheduler, between their start and their issue
# (elsewhere they are a microsecond apart, and a program timing from the wrong one passes too): a
# loop device over memory whose driver takes 4 requests at a time (with no scheduler, nr_requests
# is the depth of the driver's tags, and it stays so under one), under mq-deadline, no merges
# (nomerges 2: each read a request of its own). Read with 64 in flight, 60 wait. Sets QUEUED_LOOP
# and registers its undoing (the loop device outlives its file, and its queue's settings with it;
# the driver's depth is written back only by a value other than the one nr_requests shows); else
# fails with QUEUED_WHY.
queued_device() {
	local image loop queue scheduler tags
	QUEUED_LOOP="" QUEUED_WHY=""
	image=$(mktemp -p /dev/shm iolens-queued.XXXXXX) || { QUEUED_WHY="no /dev/shm"; return 1; }
	on_exit "rm -f '$image'"
	head -c $((64 << 20)) /dev/zero >"$image"
	loop=$(losetup -f --show "$image" 2>"$T/queued.err") || { QUEUED_WHY="losetup: $(head -1 "$T/queued.err")"; return 1; }
	on_exit "loop_release $loop $image"
	queue=/sys/block/${loop#/dev/}/queue
	scheduler=$(sed 's/.*\[\(.*\)\].*/\1/' "$queue/scheduler")
	if [ "$scheduler" != none ] || ! grep -qw mq-deadline "$queue/scheduler"; then
		QUEUED_WHY="${loop#/dev/} has no mq-deadline, or a scheduler already ($(cat "$queue/scheduler"))"
		return 1
	fi
	tags=$(cat "$queue/nr_requests")
	on_exit "echo none >$queue/scheduler; echo $((tags - 1)) >$queue/nr_requests; echo $tags >$queue/nr_requests; echo $(cat "$queue/nomerges") >$queue/nomerges"
	echo 2 >"$queue/nomerges" && echo 4 >"$queue/nr_requests" && echo mq-deadline >"$queue/scheduler" ||
		{ QUEUED_WHY="its queue's settings could not be written"; return 1; }
	echo "# ${loop#/dev/}: 4 requests at a time in its driver, $(cat "$queue/nr_requests") in mq-deadline"
	QUEUED_LOOP=$loop
}

# prog_attached PID PROGRAM: process PID holds the eBPF program PROGRAM attached (a link of it among
# its descriptors). Doctor's O_DIRECT watch is waited for by its on_enter: cachestat.bpf.c, which
# doctor starts before it, has an on_exit too, and waiting for that name let dd run before the
# watch (CI, ASan). (Three programs whatever the descriptors: under qemu without KVM a grep of each
# took seconds.)
prog_attached() {
	local ids
	ids=$(bpftool prog show name "$2" 2>/dev/null | awk -F: '/^[0-9]+:/ { printf "%s%s", sep, $1; sep = "|" }')
	[ -n "$ids" ] &&
		grep -lE "^prog_id:[[:space:]]+($ids)\$" /proc/"$1"/fdinfo/* 2>/dev/null | xargs -r grep -l '^link_type:' 2>/dev/null |
		grep -q .
}

# A file of random data, so no filesystem can skip it.
make_file() { head -c "$2" /dev/urandom > "$1"; }
PAGE=$(getconf PAGESIZE)
pages_of() { echo $(( ($(stat -c %s "$1") + PAGE - 1) / PAGE )); }

# ---- An independent tracer of block requests: bpftrace on the block tracepoints ----------------------
# tests/cli/block_latency.py writes its program and reads what it printed: for each request of the
# disks asked, its spans to its completion from its bio's queueing, its start and its issue. It runs
# in a mount namespace of its own with tracefs mounted there unless it is already (a fresh machine
# has none mounted: bpftrace's tracepoints need it), which goes with it (block_latency.py run, as
# tests/kernels/matrix.py runs it too).
BLOCK_LATENCY=$TOP/tests/cli/block_latency.py
# block_tracer_why: why there is no tracer here; nothing when there is one.
block_tracer_why() {
	if ! is_root; then
		echo "the block tracer (bpftrace) needs root"
	elif ! command -v bpftrace >/dev/null || ! command -v unshare >/dev/null; then
		echo "the block tracer needs bpftrace and unshare (make test-deps)"
	fi
}
# dev_of DEVICE: a block device's MAJ:MIN.
dev_of() { printf '%d:%d\n' "0x$(stat -L -c %t "$1")" "0x$(stat -L -c %T "$1")"; }
# block_tracer_start NAME DEV...: the tracer of the whole disks DEV (MAJ:MIN), printing to
# $T/NAME.trace, once its programs are attached; sets TRACE to that file and TRACER to its pid (one
# runs at a time: the test ends it with block_tracer_stop, or its end does). Where there is none,
# TRACE is empty and check_latency skips, saying why (BLOCK_TRACER_WHY); one that does not start is
# a failure.
block_tracer_start() {
	local name=$1
	shift
	TRACE="" BLOCK_TRACER_WHY=$(block_tracer_why)
	[ -z "$BLOCK_TRACER_WHY" ] || return 0
	if ! python3 "$BLOCK_LATENCY" program "$@" >"$T/$name.bt" 2>"$T/$name.bt.err"; then
		BLOCK_TRACER_WHY="no block tracer for $*: $(tail -n 1 "$T/$name.bt.err" | head -c 300)"
		not_ok "$BLOCK_TRACER_WHY"
		return 1
	fi
	# (A file of an earlier tracer of the same name goes first: the shell empties it only as the
	# new one starts, after this one may have looked.)
	rm -f "$T/$name.trace" "$T/$name.trace.err"
	python3 "$BLOCK_LATENCY" run "$T/$name.bt" >"$T/$name.trace" 2>"$T/$name.trace.err" &
	TRACER=$!
	[ -n "${TRACER_HOOKED:-}" ] || on_exit '[ -z "$TRACER" ] || tracer_end "$TRACER"'
	TRACER_HOOKED=1
	wait_until tracer_attached_or_gone "$T/$name.trace"
	if ! grep -qs '^attached$' "$T/$name.trace"; then
		tracer_end "$TRACER"
		BLOCK_TRACER_WHY="the block tracer did not start (exit $?): $(cat "$T/$name.trace" "$T/$name.trace.err" 2>/dev/null | grep -v RLIMIT_MEMLOCK | head -c 300)"
		not_ok "$BLOCK_TRACER_WHY"
		return 1
	fi
	TRACE=$T/$name.trace
}
tracer_attached_or_gone() { grep -qs '^attached$' "$1" || ! tracer_runs "$TRACER"; }
# tracer_runs PID: the tracer PID has not ended (a child that ended is a zombie until waited for).
tracer_runs() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
# tracer_end PID: SIGINT, again each second until it ends (bpftrace 0.17 heeds one only while it
# waits for events, 100 ms at a time: one that comes between two waits is lost); its status.
tracer_end() {
	local rc
	while tracer_runs "$1"; do
		kill -INT "$1" 2>/dev/null
		wait_until 1 eval '! tracer_runs '"$1"
	done
	wait "$1"
	rc=$?
	TRACER=""
	return $rc
}
# block_tracer_stop: the tracer ends, printing what it counted; its spans summed up in the log.
block_tracer_stop() {
	[ -n "$TRACE" ] || return 0
	tracer_end "$TRACER"
	python3 "$BLOCK_LATENCY" summary "$TRACE"
}
# check_latency DESCRIPTION NS ARGS...: NS, a percentile iolens printed, is the tracer's of the same
# requests (block_latency.py holds ARGS: iolens's span, the disk, op, process, quantile, count and
# scale), within the bound it says. check_latency_not: is not, as a program timing another span
# would not be (ARGS: --span, one of the tracer's own).
check_latency() {
	local said
	[ -n "$TRACE" ] || { skip "$1: $BLOCK_TRACER_WHY"; return 0; }
	said=$(python3 "$BLOCK_LATENCY" holds "$TRACE" --value "$2" "${@:3}")
	if [ $? = 0 ]; then ok "$1 ($2 ns): $said"; else not_ok "$1 ($2 ns): $said"; fi
}
check_latency_not() {
	local said
	[ -n "$TRACE" ] || { skip "$1: $BLOCK_TRACER_WHY"; return 0; }
	said=$(python3 "$BLOCK_LATENCY" holds "$TRACE" --value "$2" "${@:3}")
	if [ $? = 3 ]; then ok "$1 ($2 ns): not $said"; else not_ok "$1 ($2 ns): yet $said"; fi
}

# check_more DESC JSON: every command a finding of doctor's JSON prints after "more:" runs as printed
# (iolens being the one under test) and exits 0; each distinct one once, all at once, while what
# the findings name still lives: one about a process (data's pid, process.pid or probe_pid) or a
# file (data's file) that failed once the process had ended or the file was gone (another test's,
# on a shared machine) is a skip, saying so.
check_more() {
	local desc=$1 json=$2 i=0 rc rule owner more pids=() lines=() owners=()
	while IFS=$'\t' read -r rule owner more; do
		[ -n "$more" ] || continue
		IOLENS=$IOLENS bash -c 'iolens() { "$IOLENS" "$@"; }; export -f iolens; eval "$1"' _ "$more" \
			>"$T/more.$i.out" 2>"$T/more.$i.err" </dev/null &
		pids+=($!)
		lines+=("$rule: $more")
		owners+=("$owner")
		i=$((i + 1))
	done < <(python3 -c 'import json, sys
seen = set()
for f in json.load(sys.stdin)["findings"]:  # (on stdin: an argument holds 128 KiB at most)
    d = f["data"]
    pid = d.get("pid") or (d.get("process") or {}).get("pid") or d.get("probe_pid")
    owner = "pid:%d" % pid if pid else "file:" + d["file"] if d.get("file") else "-"
    if f["more"] not in seen:
        seen.add(f["more"])
        print("%s\t%s\t%s" % (f["rule"], owner, f["more"]))' <<<"$json")
	[ "$i" -gt 0 ] || { skip "$desc: no finding, no more: to run"; return; }
	for ((i = 0; i < ${#pids[@]}; i++)); do
		wait "${pids[$i]}"
		rc=$?
		if [ "$rc" = 0 ]; then
			ok "$desc: more: ${lines[$i]} (exit 0)"
		elif [[ ${owners[$i]} == pid:* ]] && ! kill -0 "${owners[$i]#pid:}" 2>/dev/null; then
			skip "$desc: more: ${lines[$i]}: its process ${owners[$i]#pid:} ended meanwhile"
		elif [[ ${owners[$i]} == file:* ]] && [ ! -e "${owners[$i]#file:}" ]; then
			skip "$desc: more: ${lines[$i]}: its file ${owners[$i]#file:} was removed meanwhile"
		else
			not_ok "$desc: more: ${lines[$i]}: exit $rc ($(head -c 300 "$T/more.$i.err"))"
		fi
	done
}
