#!/usr/bin/env bash
# evict_warm.sh: iolens evict and warm change the page cache, and report what really happened, checked with vmtouch.
. "$(dirname "$0")/lib.sh"

can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where pages cannot be evicted"
pause_damon # residency is held to exact counts: no pageout in between

f=$T/data
make_file "$f" $((4 << 20))
sync "$f"
pages=$(pages_of "$f")

# evict: what was cached, what left, what stayed.
cat "$f" > /dev/null
run "$IOLENS" evict --csv --no-header -o name,pages,cached_before,dropped,cached_after "$f"
check_eq "evict a cached file" "$f,$pages,$pages,$pages,0" "$OUT"
check_eq "vmtouch agrees it is gone" 0 "$(vmtouch_cached "$f")"
cat "$f" > /dev/null
run "$IOLENS" evict --json "$f"
check_eq "nothing stayed: held_by is empty, not unknown" '"held_by": ""' "$(grep -o '"held_by": [^ ]*' <<<"$OUT")"
run "$IOLENS" evict --csv --no-header -o cached_before,dropped,cached_after "$f"
check_eq "evict an evicted file" "0,0,0" "$OUT"

# Dirty pages are written back first, then dropped.
w=$T/dirty
dd if=/dev/urandom of="$w" bs=1M count=2 status=none
run "$IOLENS" evict --csv --no-header -o dirty_before,cached_after "$w"
check_match "evict a file just written: dirty before, nothing after" "^[1-9][0-9]*,0$" "$OUT"
check_eq "… and its data reached the disk" "$(head -c 2M "$w" | md5sum)" "$(dd if="$w" iflag=direct bs=1M status=none | md5sum)"

# Pages a process maps stay, and evict says who holds them.
python3 -c 'import mmap,os,sys,time
m=mmap.mmap(os.open(sys.argv[1], os.O_RDONLY), 0, prot=mmap.PROT_READ)
s=sum(m[i] for i in range(0, len(m), 4096)); print("ready", flush=True); time.sleep(60)' "$f" > "$T/ready" &
holder=$!
on_exit "kill $holder 2>/dev/null"
for i in $(seq 50); do grep -q ready "$T/ready" && break; sleep 0.1; done
run "$IOLENS" evict --csv --no-header -o cached_after,held_by "$f"
check_eq "mapped pages stay, held by the process" "$pages,$holder (python3)" "$OUT"
kill $holder; wait $holder 2>/dev/null

# warm: loads what is missing, and only that.
"$IOLENS" evict "$f" > /dev/null
run "$IOLENS" warm --csv --no-header -o pages,cached_before,loaded,cached_after,percent,read_bytes "$f"
check_eq "warm an evicted file" "$pages,0,$pages,$pages,100.000,$((4 << 20))" "$OUT"
check_peers "vmtouch and fincore agree it is all cached" "$f" "$pages"
run "$IOLENS" warm --csv --no-header -o loaded,read_bytes,locked "$f"
check_eq "warm a cached file reads nothing (and locks nothing)" "0,0,0" "$OUT"

"$IOLENS" evict "$f" > /dev/null
python3 -c 'import os,sys
fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
for p in range(0, 1024, 2): os.pread(fd, 4096, p * 4096)' "$f"
before=$(iolens_cached "$f")
run "$IOLENS" warm --csv --no-header -o cached_before,cached_after,read_bytes "$f"
IFS=, read -r b_cached a_cached read_bytes <<<"$OUT"
check_eq "warm a half cached file: all cached after" "$pages" "$a_cached"
check "… and it read less than the whole file ($read_bytes of $((4 << 20)) bytes, $b_cached pages were cached)" \
	test "$read_bytes" -lt $((4 << 20)) -a "$b_cached" = "$before"

# -R on a tree, with a total.
mkdir -p "$T/tree/sub"
make_file "$T/tree/one" 100000; make_file "$T/tree/sub/two" 200000
"$IOLENS" evict -R "$T/tree" > /dev/null
run "$IOLENS" warm -R --total --csv --no-header -o name,pages,cached_after "$T/tree"
check_eq "warm -R --total" "TOTAL,74,74" "$(tail -1 <<<"$OUT")"
run "$IOLENS" evict -R --total --csv --no-header -o name,dropped "$T/tree"
check_eq "evict -R --total" "TOTAL,74" "$(tail -1 <<<"$OUT")"

# warm --lock: resident until SIGINT, locked in the process, and evict cannot drop it.
"$IOLENS" warm --lock --csv --no-header -o locked "$f" > "$T/lock.out" 2> "$T/lock.err" &
locker=$!
on_exit "kill $locker 2>/dev/null"
for i in $(seq 100); do grep -q "locked in memory" "$T/lock.err" && break; sleep 0.1; done
check_match "warm --lock says the pages are locked" "1 file locked in memory" "$(cat "$T/lock.err")"
check_eq "warm --lock reports the pages locked" "$pages" "$(cat "$T/lock.out")"
locked_kb=$(awk '/VmLck/ { print $2 }' /proc/$locker/status)
check_eq "the kernel counts them locked (VmLck)" $((4 << 10)) "$locked_kb"
run "$IOLENS" evict --csv --no-header -o cached_after,held_by "$f"
check_eq "evict leaves locked pages, and says so" "$pages,\"$locker (iolens, locked)\"" "$OUT"
kill -INT $locker
wait $locker
check_eq "SIGINT ends warm --lock cleanly" 0 $?
run "$IOLENS" evict --csv --no-header -o cached_after "$f"
check_eq "after it, the pages can be evicted" 0 "$OUT"

# Bad input: the same messages as pcstat.
run "$IOLENS" evict "$T/nope" "$f"
check_eq "evict: a missing path, exit 1" 1 "$RC"
check_match "evict: … said, the other file done" "iolens evict: $T/nope: No such file" "$ERR"
mkfifo "$T/fifo"
run "$IOLENS" warm "$T/fifo" "$f"
check_eq "warm: a FIFO is not opened, exit 1" 1 "$RC"
check_match "warm: … said" "iolens warm: $T/fifo: is a FIFO" "$ERR"
run "$IOLENS" warm
check_eq "warm: no path, exit 2" 2 "$RC"

# Another user who may read but not write a file: the kernel may not tell them its cached pages
# (cachestat and mincore answer only its owner and writers on recent kernels); warm reads it all,
# evict drops it, both exit 0 with the counts the kernel gives, '-' for the others, one line why.
# The truth: fincore as root before and after, and cachestat as that user (nobody_told).
if is_root; then
	chmod 755 "$T"; chmod 644 "$f"
	"$IOLENS" evict "$f" > /dev/null
	told=$(nobody_told "$f")
	run "${AS_NOBODY[@]}" "$IOLENS" warm --csv --no-header -o cached_after,read_bytes "$f"
	check_eq "warm as another user: exit 0, read whole" "0 $((4 << 20))" "$RC ${OUT#*,}"
	check_eq "… and it is cached ($(fincore_cached "$f") pages by fincore)" "$pages" "$(fincore_cached "$f")"
	before=$(fincore_cached "$f")
	run "${AS_NOBODY[@]}" "$IOLENS" evict --csv --no-header -o cached_before,dropped,cached_after "$f"
	after=$(fincore_cached "$f")
	check_eq "evict as another user: exit 0" 0 "$RC"
	check_eq "… it is gone all the same (fincore: $before pages before, $after after)" "$pages 0" "$before $after"
	if [ -n "$told" ]; then
		check_eq "… the kernel tells them: dropped is fincore's before - after" \
			"$before,$((before - after)),$after" "$OUT"
		check_eq "… nothing said" "" "$ERR"
	else
		check_eq "… the kernel does not tell them (cachestat refused): counts unknown" ",," "$OUT"
		check_match "… said in one line of at most 100 characters" \
			"^iolens evict: $f: dropped; cached pages unknown \(not owner or writer\)$" "$ERR"
		check "… at most 100 characters for a path of 12 ($((${#ERR} - ${#f})) besides its path)" \
			test $((${#ERR} - ${#f} + 12)) -le 100
	fi
else
	skip "warm and evict as another user: needs root to set up"
fi

# Pages warm cannot keep cached, and evict cannot drop: the real reason, said.
sysfile=/sys/kernel/mm/transparent_hugepage/enabled
[ -r "$sysfile" ] || sysfile=/sys/kernel/uevent_seqnum
run "$IOLENS" warm "$sysfile"
check_match "warm a sysfs file: it has no page cache, said" "a sysfs file has no page cache$" "$ERR"
check_no_match "… not 'memory pressure?'" "memory pressure" "$ERR"
check_eq "… not a failure" 0 "$RC"
run "$IOLENS" warm /proc/self/status
check_eq "warm a procfs file: nothing to say (0 pages)" "0:" "$RC:$ERR"
shm=$(mktemp -d /dev/shm/iolens-test.XXXXXX)
on_exit "rm -rf '$shm'"
make_file "$shm/full" 100000
truncate -s 1M "$shm/holes"
run "$IOLENS" warm "$shm/full" "$shm/holes" --csv --no-header -o name,cached_after
check_eq "warm on tmpfs: written pages are cached, holes are not" "$shm/full,25
$shm/holes,0" "$OUT"
check_match "… the holes said as such" "holes: 256 of 256 pages are holes: on tmpfs they have no page cache" "$ERR"
check_no_match "… not 'memory pressure?'" "memory pressure" "$ERR"
run "$IOLENS" evict "$shm/full" --csv --no-header -o cached_before,cached_after,held_by
check_eq "evict on tmpfs: the pages stay, held by the file itself" "25,25,tmpfs: the pages are the file" "$OUT"
check_match "… said: tmpfs pages cannot be dropped" "full: on tmpfs the pages are the file itself: not dropped" "$ERR"
if is_root && command -v losetup >/dev/null; then
	make_file "$T/disk.img" $((4 << 20))
	if loop=$(losetup -f --show "$T/disk.img" 2>/dev/null); then
		on_exit "loop_release $loop $T/disk.img"
		run "$IOLENS" warm "$loop" --csv --no-header -o cached_after
		check_eq "warm a block device nobody holds: loaded" 1024 "$OUT"
		check_match "… and said that its cache went when warm closed it" \
			"its page cache went when warm closed it \(0 of 1024 pages left\)$" "$ERR"
		check_eq "… exit 1" 1 "$RC"
		exec {holder}<"$loop"
		run "$IOLENS" warm "$loop"
		check_eq "warm a block device a process holds open: it stays, nothing said" "0:" "$RC:$ERR"
		check_eq "… still cached after warm ends" 1024 "$("$IOLENS" pcstat --csv --no-header -o cached "$loop")"
		exec {holder}<&-
	else
		skip "warm a block device: no loop device here"
	fi
else
	skip "warm a block device: needs root and losetup"
fi
# A file truncated while warm loads it: said, not 'memory pressure?'. The truncation races the
# load (64 MiB from the disk takes longer than 50 ms here); a load that wins three times is a skip.
big=$T/big
make_file "$big" $((64 << 20))
sync "$big"
truncated=
for attempt in 1 2 3; do
	"$IOLENS" evict "$big" > /dev/null
	"$IOLENS" warm "$big" > /dev/null 2> "$T/trunc.err" & warmer=$!
	sleep 0.05
	truncate -s 1M "$big"
	wait $warmer
	if grep -q "truncated while loading" "$T/trunc.err"; then truncated=yes; break; fi
	grep -q "memory pressure" "$T/trunc.err" && break
	make_file "$big" $((64 << 20)); sync "$big"
done
if [ -n "$truncated" ]; then
	check_match "warm a file truncated while loading: said" \
		"big: truncated while loading, from 67108864 to 1048576 bytes$" "$(cat "$T/trunc.err")"
elif grep -q "memory pressure" "$T/trunc.err"; then
	not_ok "warm a file truncated while loading: said 'memory pressure?': $(cat "$T/trunc.err")"
else
	skip "warm a file truncated while loading: the load ended before the truncation, 3 times"
fi

# Progress on a terminal, none when stderr is not one.
if command -v script >/dev/null; then
	"$IOLENS" evict "$f" > /dev/null
	tty_out=$(script -qec "'$IOLENS' warm '$f'" /dev/null)
	check_match "warm shows progress on a terminal" "iolens warm: loading [0-9.]+[KMG]? \(" "$tty_out"
	"$IOLENS" evict "$f" > /dev/null
	run "$IOLENS" warm "$f"
	check_eq "… and none when stderr is not a terminal" "" "$ERR"
else
	skip "progress on a terminal: needs script(1)"
fi
