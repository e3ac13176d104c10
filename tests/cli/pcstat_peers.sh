#!/usr/bin/env bash
# pcstat_peers.sh: iolens pcstat counts the same cached pages as fincore and vmtouch, in every state a file can be in.
. "$(dirname "$0")/lib.sh"

command -v vmtouch >/dev/null && command -v fincore >/dev/null || skip_all "needs vmtouch and fincore (make test-deps)"
can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where pages cannot be evicted"
pause_damon # residency is held to exact counts: no pageout in between

f=$T/data
make_file "$f" $((64 << 20))
sync "$f"
pages=$(pages_of "$f")

vmtouch -e "$f" >/dev/null
check_peers "evicted (by vmtouch -e)" "$f" 0

dd if="$f" of=/dev/null bs=1M count=32 status=none
check_peers "first half read (read-ahead included)" "$f"
half=$(iolens_cached "$f")
check "the half-read file is partly cached ($half of $pages)" test "$half" -gt 0 -a "$half" -lt "$pages"

cat "$f" > /dev/null
check_peers "fully read" "$f" "$pages"

"$IOLENS" evict "$f" >/dev/null
check_peers "evicted (by iolens evict)" "$f" 0

# A buffered write leaves dirty pages: all are cached, and pcstat says how many are dirty.
w=$T/written
dd if=/dev/urandom of="$w" bs=1M count=4 status=none
check_peers "after a buffered write" "$w" "$(pages_of "$w")"
# Another program's sync(1) may write them back first: written again, up to 5 times, until seen.
for try in 1 2 3 4 5; do
	run "$IOLENS" pcstat --csv --no-header -o dirty,writeback "$w"
	IFS=, read -r dirty writeback <<<"$OUT"
	[ $((dirty + writeback)) -gt 0 ] && break
	dd if=/dev/urandom of="$w" bs=1M count=4 conv=notrunc status=none
done
check "dirty + writeback pages after a buffered write ($dirty + $writeback, try $try)" \
	test $((dirty + writeback)) -gt 0
sync "$w"
check_eq "no dirty pages after sync" 0 "$("$IOLENS" pcstat --csv --no-header -o dirty "$w")"

# Same counts through the mincore fallback, as root (whose mincore answer is true).
cat "$f" > /dev/null
dd if=/dev/zero of="$f" bs=4k count=1 seek=10 conv=notrunc status=none
got=$(IOLENS_PAGECACHE=mincore "$IOLENS" pcstat --csv --no-header -o cached,method "$f")
check_eq "mincore fallback counts the same pages" "$(iolens_cached "$f"),mincore" "$got"
"$IOLENS" evict "$f" > /dev/null
check_eq "mincore fallback after evict" "0,mincore" \
	"$(IOLENS_PAGECACHE=mincore "$IOLENS" pcstat --csv --no-header -o cached,method "$f")"

# A directory tree: hard links once, symbolic links not followed, as vmtouch counts.
tree=$T/tree
mkdir -p "$tree/a/b" "$tree/c"
for i in 1 2 3 4 5 6; do make_file "$tree/a/f$i" $((i * 100000)); done
make_file "$tree/a/b/deep" 300000
make_file "$tree/c/big" $((3 << 20))
ln "$tree/a/f1" "$tree/c/hardlink"
ln -s ../a/f2 "$tree/c/symlink"
: > "$tree/c/empty"
sync
vmtouch -e "$tree" >/dev/null
cat "$tree"/a/f2 "$tree"/a/f5 "$tree"/a/b/deep > /dev/null
dd if="$tree/c/big" of=/dev/null bs=64k count=8 status=none
for i in 1 2 3 4 5; do
	settle "$tree/c/big"
	ours=$("$IOLENS" pcstat -R --summary --csv --no-header -o cached,pages "$tree")
	theirs=$(vmtouch "$tree" | awk '/Resident Pages/ { split($3, a, "/"); print a[1] "," a[2] }')
	fin=$(find "$tree" -type f -links 1 -exec fincore --raw --noheadings --output PAGES {} + | awk '{ s += $1 } END { print s }')
	fin=$((fin + $(fincore --raw --noheadings --output PAGES "$tree/a/f1")))
	[ "$ours" = "$theirs" ] && [ "${ours%,*}" = "$fin" ] && break
done
check_eq "a tree: cached,pages as vmtouch counts them" "$theirs" "$ours"
check_eq "a tree: cached pages as fincore adds them up" "$fin" "${ours%,*}"
check_eq "a tree: hard link counted once, symlink not followed, empty file listed" 9 \
	"$("$IOLENS" pcstat -R --csv --no-header -o name "$tree" | wc -l)"

# A block device: its page cache lives while someone holds it open.
if is_root && command -v losetup >/dev/null && loop=$(losetup -f --show "$f" 2>/dev/null); then
	on_exit "loop_release $loop $f"
	exec 7<"$loop"
	dd if="$loop" of=/dev/null bs=1M count=3 status=none
	settle "$loop"
	ours=$(iolens_cached "$loop")
	check_eq "block device: same cached pages as vmtouch" "$(vmtouch_cached "$loop")" "$ours"
	check "block device: read pages are cached ($ours)" test "$ours" -ge $(((3 << 20) / PAGE))
	check_eq "block device: size from BLKGETSIZE64" "$(blockdev --getsize64 "$loop")" \
		"$("$IOLENS" pcstat --csv --no-header -o size "$loop")"
	# fincore 2.38 reports 0 bytes for block devices; compare with it only when it can tell.
	if [ "$(fincore --raw --noheadings --bytes --output SIZE "$loop")" != 0 ]; then
		check_eq "block device: same cached pages as fincore" "$(fincore_cached "$loop")" "$ours"
	else
		skip "block device vs fincore: this fincore reports block devices as empty"
	fi
	exec 7<&-
else
	skip "block device: needs root and a loop device"
fi
