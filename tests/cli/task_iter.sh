#!/usr/bin/env bash
# task_iter.sh: what doctor reads of every thread from eBPF's task iterator (one read, not a file a thread) is what /proc says: a stopped process's I/O counters (its ended thread's and reaped child's too), parent, start and threads; a thread waiting in D seen in D; a process's end, with its last counts, as it said them.
. "$(dirname "$0")/lib.sh"

why=$(ebpf_expected) || skip_all "$why"
ROWS=$BUILD/tests/helpers/taskrows
[ -x "$ROWS" ] || skip_all "taskrows is not built (make check builds it)"

# WORK: a process that reads 1 MiB in a thread that ends, 2 MiB in a child it reaps, and writes
# 1 MiB to a file of the disk (the first argument); the lines after it say what it does next.
WORK='import os, signal, sys, threading
def read(n):
    with open("/dev/zero", "rb", buffering=0) as f:
        while n: n -= len(f.read(min(n, 65536)))
t = threading.Thread(target=read, args=(1 << 20,)); t.start(); t.join()
child = os.fork()
if child == 0:
    read(2 << 20); os._exit(0)
os.waitpid(child, 0)
with open(sys.argv[1], "wb") as f:
    f.write(b"x" * (1 << 20)); f.flush(); os.fsync(f.fileno())
'
# WORK, then it stops itself: its counters hold still while they are compared.
python3 -c "$WORK"'
threading.Thread(target=signal.pause, daemon=True).start()
os.kill(os.getpid(), signal.SIGSTOP)' "$T/written" &
P=$!
on_exit "kill -KILL $P 2>/dev/null"
wait_until 60 in_state "$P" T || { not_ok "the process stopped itself"; echo "1..$t_count"; exit 1; }

"$ROWS" >"$T/rows" 2>"$T/rows.err" &
ROWS_PID=$!
if ! wait $ROWS_PID; then
	not_ok "the task iterator loads and reads as root: $(head -c 300 "$T/rows.err")"
	echo "1..$t_count"
	exit 1
fi
ok "the task iterator loads and reads as root"
# The truth: /proc/PID/io, /proc/PID/stat and /proc/PID/task, read by the kernel's own code.
read -r rchar read_bytes write_bytes < <(awk '/^rchar/ { r = $2 } /^read_bytes/ { b = $2 } /^write_bytes/ { w = $2 }
	END { print r, b, w }' /proc/$P/io)
read -r ppid start < <(sed 's/.*) //' /proc/$P/stat | awk '{ print $2, $20 }')
row=$(awk -v p=$P '$1 == "proc" && $2 == p' "$T/rows")
check_eq "its I/O counters, parent, start and name as /proc says" \
	"proc $P $ppid $start $rchar $read_bytes $write_bytes python3" "$row"
read -r _ _ _ _ it_rchar _ it_write _ <<<"$row"
check "… rchar holds the 3 MiB its ended thread and reaped child read from /dev/zero ($it_rchar)" \
	[ "${it_rchar:-0}" -ge $((3 << 20)) ]
case "$(fs_type "$T")" in
tmpfs|ramfs) skip "… write_bytes: the scratch directory is on $(fs_type "$T"), which accounts no write" ;;
*) check "… write_bytes the 1 MiB it wrote to $(fs_type "$T") ($it_write)" [ "${it_write:-0}" -ge $((1 << 20)) ] ;;
esac
check_eq "its threads, each stopped, as /proc/PID/task lists them" \
	"$(ls /proc/$P/task | sort -n | sed "s/^/$P T /")" \
	"$(awk -v p=$P '$1 == "thread" && $2 == p { print $2, $4, $3 }' "$T/rows" | sort -n -k3 | awk '{ print $1, $2, $3 }')"
check_eq "… and this process is not among the processes" "" "$(awk -v p=$ROWS_PID '$1 == "proc" && $2 == p' "$T/rows")"

# Every process both list holds the same parent, start and name (counters move meanwhile).
read -r up _ </proc/uptime # (CLOCK_BOOTTIME, as start times count: when /proc's listing began)
"$ROWS" --proc >"$T/proc" 2>/dev/null
"$ROWS" >"$T/rows"
diffs=$(join <(awk '$1 == "proc" { print $2, $3, $4 }' "$T/rows" | sort) \
	<(awk '$1 == "proc" { print $2, $3, $4 }' "$T/proc" | sort) | awk '$2 != $4 || $3 != $5')
check_eq "every process both list: the same parent and start" "" "$diffs"
# Those in one list only came or went between the two: one only /proc listed is gone now (the
# iterator ran after), one only the iterator listed started after /proc's listing began.
unexplained=$(python3 - "$T/proc" "$T/rows" "$up" "$(getconf CLK_TCK)" <<'PY'
import os, sys
def procs(path):
    return {int(w[1]): int(w[3]) for w in (line.split() for line in open(path)) if w and w[0] == "proc"}
listed, rows = procs(sys.argv[1]), procs(sys.argv[2])
began = float(sys.argv[3]) * int(sys.argv[4]) - 1 # in clock ticks, one early for rounding
def alive(pid, start):
    try:
        return int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[19]) == start
    except (OSError, IndexError, ValueError):
        return False
out = ["%d listed by /proc, not by the iterator, still there" % p for p, st in listed.items() if p not in rows and alive(p, st)]
out += ["%d listed by the iterator, not by /proc, older than its listing" % p for p, st in rows.items() if p not in listed and st < began]
print("; ".join(out))
PY
)
check_eq "… and they list the same processes, but those that came or went between" "" "$unexplained"

# The files processes hold open with O_DIRECT, as fdinfo's flags say: the iterator's list is
# /proc's (the truth: every fd's fdinfo read), with a reader of the test's own in it, and the same
# file held open without O_DIRECT by this shell not.
READER=$BUILD/tests/helpers/odirect_reader
case "$(fs_type "$T")" in
tmpfs|ramfs) skip "O_DIRECT fds: the scratch directory is on $(fs_type "$T")" ;;
*)
	make_file "$T/direct.dat" $((1 << 20))
	"$READER" "$T/direct.dat" "$T/direct.ready" &
	R=$!
	on_exit "kill $R 2>/dev/null"
	wait_until test -e "$T/direct.ready"
	exec 7<"$T/direct.dat"
	"$ROWS" >"$T/rows"
	"$ROWS" --proc >"$T/proc"
	# (other processes' may open and close theirs between the two reads: the test's own compared)
	check_eq "the reader's files open with O_DIRECT: the iterator's list is fdinfo's" \
		"$(grep "^direct $R " "$T/proc")" "$(grep "^direct $R " "$T/rows")"
	check "… its file among them" grep -q "^direct $R " "$T/rows"
	check_eq "… and not this shell's, open without O_DIRECT" "" "$(grep "^direct $$ " "$T/rows")"
	exec 7<&-
	kill $R
	;;
esac

# A child that ended and is not reaped yet: a zombie, Z as /proc says (its exit state, not its state).
python3 -c 'import os, sys, time
child = os.fork()
if child == 0: os._exit(0)
print(child, flush=True); time.sleep(60)' >"$T/zombie" &
Z=$!
on_exit "kill $Z 2>/dev/null"
wait_until test -s "$T/zombie"
zombie=$(cat "$T/zombie")
wait_until 60 in_state "$zombie" Z
check_eq "a zombie (/proc says Z)" "thread $zombie $zombie Z" \
	"$("$ROWS" | awk -v p=$zombie '$1 == "thread" && $3 == p { print $1, $2, $3, $4 }')"
kill $Z

# A parent waiting for its vfork child is in D (killable), as a hung reader is: seen so.
"$ROWS" --vfork 30 &
V=$!
on_exit "vfork_end $V"
wait_until 60 in_state "$V" D
check_eq "a thread in D (a vfork's parent, /proc says D)" "thread $V $V D taskrows" \
	"$("$ROWS" | awk -v p=$V '$1 == "thread" && $3 == p')"
# A run for the threads in D alone (a recorder's sample while some are): that thread, and no
# thread in another state (the test's shell, which /proc says sleeps: S).
"$ROWS" --in-d >"$T/in_d" 2>"$T/in_d.err"
check_eq "… a run for the threads in D alone has its row ($(head -c 200 "$T/in_d.err"))" "thread $V $V D taskrows" \
	"$(awk -v p=$V '$1 == "thread" && $3 == p' "$T/in_d")"
check_eq "… and rows of D and I (idle) threads only, not the shell's ($$, /proc: $(state_of $$))" "" \
	"$(awk -v s=$$ '$4 != "D" && $4 != "I" || $3 == s' "$T/in_d")"
check "… fewer rows than a whole run's ($(wc -l <"$T/in_d") of $("$ROWS" | grep -c '^thread'))" \
	[ "$(wc -l <"$T/in_d")" -lt "$("$ROWS" | grep -c '^thread')" ]
vfork_end "$V"

# A process's end, as eBPF sees it (what doctor's rounds take for a process gone between two of
# them): WORK, then it reads its own /proc/self/io and ends from another thread than its leader
# (exit_group: either may be the last). The truth: that /proc/self/io, its own counts read by the
# kernel's code as its last act (rchar then grows by the bytes that read returned; its pages
# locked in before, no fault of its code reads more after).
coproc EXITS { "$ROWS" --exits 2>"$T/exits.err"; }
# Copies of the coprocess's pipes: bash closes its own as soon as it reaps the coprocess, which
# may end (having written all) before the read below starts.
exec {exits_out}<&"${EXITS[0]}" {exits_in}>&"${EXITS[1]}"
on_exit "exec $exits_out<&- $exits_in>&-"
ready=
read -r -t 60 ready <&"$exits_out"
check_eq "taskrows --exits: the iterator loaded ($(head -c 200 "$T/exits.err"))" ready "$ready"
python3 -c "$WORK"'
stat = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
import ctypes
ctypes.CDLL(None).mlockall(1) # MCL_CURRENT: its code read in now, not by a fault after its last read
def last():
    with open("/proc/self/io", "rb", buffering=0) as f:
        text = f.read(4096)
    io = dict(line.split(b": ") for line in text.splitlines())
    sys.stdout.write("%d %s %s %d %d %d %d\n" % (os.getpid(), stat[1], stat[19], int(io[b"rchar"]) + len(text),
                     int(io[b"read_bytes"]), int(io[b"write_bytes"]), child))
    sys.stdout.flush()
    os._exit(0)
threading.Thread(target=last).start()
threading.Event().wait()' "$T/written2" | cat >"$T/ended" # (a pipe: its last write dirties no page of its own)
# A server that ignores SIGCHLD: its child is reaped by the kernel, and its counts go to no one.
AUTO_CHILD=$(python3 -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
pid = os.fork()
if pid == 0:
    os._exit(0)
print(pid)
while os.path.exists("/proc/%d" % pid): pass')
echo go >&"$exits_in"
exec {exits_in}>&-
cat <&"$exits_out" >"$T/exits"
read -r E_PID E_PPID E_START E_RCHAR E_READ E_WRITE E_CHILD <"$T/ended"
check_eq "its end: its /proc/self/io as it ended, its parent, start and name" \
	"exit $E_PID $E_PPID $E_START $E_RCHAR $E_READ $E_WRITE parent python3" \
	"$(awk -v p="$E_PID" '$1 == "exit" && $2 == p' "$T/exits")"
check "… rchar holds the 3 MiB its ended thread and reaped child read ($E_RCHAR)" [ "${E_RCHAR:-0}" -ge $((3 << 20)) ]
case "$(fs_type "$T")" in
tmpfs|ramfs) skip "… write_bytes: the scratch directory is on $(fs_type "$T"), which accounts no write" ;;
*) check "… write_bytes the 1 MiB it wrote ($E_WRITE)" [ "${E_WRITE:-0}" -ge $((1 << 20)) ] ;;
esac
read -r _ _ c_ppid _ c_rchar _ _ c_reap _ <<<"$(awk -v p="$E_CHILD" '$1 == "exit" && $2 == p' "$T/exits")"
check "its child's end too, its parent that process (which takes its counts), with the 2 MiB it read ($c_rchar)" \
	[ "$c_ppid" = "$E_PID" ] && [ "${c_rchar:-0}" -ge $((2 << 20)) ] && [ "$c_reap" = parent ]
check_eq "… no end lost, none of taskrows itself" "" "$(grep -x lost "$T/exits"; awk '$1 == "exit" && $9 == "taskrows"' "$T/exits")"
check_eq "a child of a parent that ignores SIGCHLD: its end says no one takes its counts" auto \
	"$(awk -v p="$AUTO_CHILD" '$1 == "exit" && $2 == p { print $8 }' "$T/exits")"

# One look (a system call) at the pages dirty and under writeback, as doctor samples them between
# its walks: the nodes' counters, reached through the root memory cgroup, held to /proc/vmstat's
# nr_dirty and nr_writeback read just before and just after it, with 32 MiB a writer left dirty
# (the count caused: a wrong counter, or a node missed, is far from it). Another program's writes
# may move the counts between the reads: tried again until they stood still.
case "$(fs_type "$T")" in
tmpfs|ramfs) skip "the pages dirty: the scratch directory is on $(fs_type "$T"), which keeps none dirty" ;;
*)
	dd if=/dev/zero of="$T/dirty" bs=1M count=32 2>/dev/null
	for try in $(seq 20); do
		"$ROWS" --pages >"$T/pages" 2>"$T/pages.err" || break
		awk '{ d = $2 - $4; if (d < 0) d = -d; l = $3 - $2; if (l < 0) l = -l; if (l > d + 256) exit 1 }' "$T/pages" && break
	done
	read -r _ d_before d_look d_after <<<"$(grep ^dirty "$T/pages")"
	read -r _ w_before w_look w_after <<<"$(grep ^writeback "$T/pages")"
	check "the pages dirty, one look: /proc/vmstat's nr_dirty around it ($d_before $d_look $d_after; $(head -c 200 "$T/pages.err"))" \
		awk -v b="${d_before:--1}" -v l="${d_look:--2}" -v a="${d_after:--1}" \
		'BEGIN { d = b - a; if (d < 0) d = -d; e = l - b; if (e < 0) e = -e; exit !(b >= 0 && l >= 0 && e <= d + 256) }'
	check "… and under writeback: nr_writeback around it ($w_before $w_look $w_after)" \
		awk -v b="${w_before:--1}" -v l="${w_look:--2}" -v a="${w_after:--1}" \
		'BEGIN { d = b - a; if (d < 0) d = -d; e = l - b; if (e < 0) e = -e; exit !(b >= 0 && l >= 0 && e <= d + 256) }'
	check "… with the 32 MiB written (8192 pages) in them, unless written back since ($d_look + $w_look)" \
		[ $(( ${d_look:-0} + ${w_look:-0} )) -ge 8192 ] || [ "$(( ${d_before:-0} + ${w_before:-0} ))" -lt 8192 ]
	;;
esac

echo "1..$t_count"
