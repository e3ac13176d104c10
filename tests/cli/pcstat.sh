#!/usr/bin/env bash
# pcstat.sh: iolens pcstat as a user runs it: columns, formats, sorting, totals, ranges, maps, processes, trees.
. "$(dirname "$0")/lib.sh"

can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where pages cannot be evicted"
pause_damon # residency is held to exact counts: no pageout in between

a=$T/a; b=$T/b; c=$T/c
make_file "$a" $((1 << 20))    # 256 pages, fully cached below
make_file "$b" $((2 << 20))    # 512 pages, evicted
make_file "$c" 10000           # 3 pages, fully cached
sync
"$IOLENS" evict "$b" >/dev/null
cat "$a" "$c" >/dev/null

run "$IOLENS" pcstat "$a"
check_eq "default columns are pcstat's" "Name Size (bytes) Pages Cached Percent" "$(head -1 <<<"$OUT" | tr -s ' ')"
check_eq "a fully cached file" "$a 1048576 256 256 100.000" "$(tail -1 <<<"$OUT" | tr -s ' ')"
check_eq "exit 0" 0 "$RC"

run "$IOLENS" pcstat -o percent,name "$b"
check_eq "-o chooses and orders columns" "0.000 $b" "$(tail -1 <<<"$OUT" | tr -s ' ' | sed 's/^ //')"
run "$IOLENS" pcstat -o +dirty,evicted,method --csv "$a"
check_eq "-o +LIST adds to the defaults" "name,size,pages,cached,percent,dirty,evicted,method" "$(head -1 <<<"$OUT")"
check_eq "… with their values" "$a,1048576,256,256,100.000,0,0,cachestat" "$(tail -1 <<<"$OUT")"
run "$IOLENS" pcstat -o NAME,Cached_Bytes --csv --no-header "$a"
check_eq "column names ignore case; cached_bytes" "$a,1048576" "$OUT"

run "$IOLENS" pcstat -H -o name,size "$b"
check_eq "-H: human sizes in tables" "$b 2M" "$(tail -1 <<<"$OUT" | tr -s ' ')"
check_eq "-H: the header drops '(bytes)'" "Name Size" "$(head -1 <<<"$OUT" | tr -s ' ')"
run "$IOLENS" pcstat -H --csv -o size "$b"
check_eq "-H leaves CSV in bytes" "2097152" "$(tail -1 <<<"$OUT")"
run "$IOLENS" pcstat --no-header "$a"
check_eq "--no-header" 1 "$(wc -l <<<"$OUT")"

run "$IOLENS" pcstat --json "$a" "$b"
check "--json is valid JSON" python3 -c 'import json,sys; json.loads(sys.argv[1])' "$OUT"
check_eq "--json rows, typed" "$a 256 100.0 int|$b 0 0.0 int" "$(python3 -c '
import json,sys; d=json.loads(sys.argv[1])
print("|".join("%s %d %s %s" % (f["name"], f["cached"], float(f["percent"]), type(f["size"]).__name__) for f in d["files"]))' "$OUT")"
check_eq "--json says the page size and method" "$PAGE cachestat" "$(python3 -c '
import json,sys; d=json.loads(sys.argv[1]); print(d["page_size"], d["method"])' "$OUT")"

run "$IOLENS" pcstat --csv --sort cached -o name,cached "$b" "$c" "$a"
check_eq "--sort: largest first" "$a,256 $c,3 $b,0" "$(tail -n +2 <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')"
run "$IOLENS" pcstat --csv --sort cached --reverse -o name "$b" "$c" "$a"
check_eq "--reverse" "$b $c $a" "$(tail -n +2 <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')"
run "$IOLENS" pcstat --csv --sort name -o name "$c" "$b" "$a"
check_eq "--sort name: A to Z" "$a $b $c" "$(tail -n +2 <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')"

run "$IOLENS" pcstat --total --csv --no-header -o name,size,pages,cached,percent "$a" "$b" "$c"
check_eq "--total adds a TOTAL row" "TOTAL,3155728,771,259,33.593" "$(tail -1 <<<"$OUT")"
run "$IOLENS" pcstat --summary --csv --no-header "$a" "$b" "$c"
check_eq "--summary: only the TOTAL row" "TOTAL,3155728,771,259,33.593" "$OUT"
run "$IOLENS" pcstat --total --json "$a" "$b"
check_eq "--total in JSON: its own object, not a row" "2 256 768" "$(python3 -c '
import json,sys; d=json.loads(sys.argv[1]); print(len(d["files"]), d["total"]["cached"], d["total"]["pages"])' "$OUT")"

# --range: pages and percent of one part of the file.
"$IOLENS" evict "$b" >/dev/null
dd if="$b" of=/dev/null bs=4k count=1 skip=100 iflag=direct status=none   # O_DIRECT: no page cache
python3 -c 'import os,sys
fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
os.pread(fd, 4096, 100 * 4096); os.pread(fd, 4096, 300 * 4096)' "$b"
run "$IOLENS" pcstat --csv --no-header -o pages,cached "$b"
check_eq "two single pages read at random" "512,2" "$OUT"
run "$IOLENS" pcstat --range 400k:8k --csv --no-header -o pages,cached,percent "$b"
check_eq "--range OFFSET:LENGTH covers 2 pages, one cached" "2,1,50.000" "$OUT"
run "$IOLENS" pcstat --range 1M --csv --no-header -o pages,cached "$b"
check_eq "--range OFFSET: to the end" "256,1" "$OUT"
run "$IOLENS" pcstat --range 4G --csv --no-header -o pages,cached,percent "$b"
check_eq "--range past the end: nothing, 0 %" "0,0,0.000" "$OUT"

# --map: where the cached pages are.
run "$IOLENS" pcstat --map=16 --csv --no-header -o map "$a" "$b"
# 16 cells of 32 pages: page 100 is in cell 3, page 300 in cell 9.
check_eq "--map: all cached / two pages cached" "OOOOOOOOOOOOOOOO ...o.....o......" "$(tr '\n' ' ' <<<"$OUT" | sed 's/ $//')"
run "$IOLENS" pcstat --map "$a"
check_match "--map adds its column to the defaults" "Percent +Map" "$OUT"
check_match "--map default width 60" "O{60}$" "$OUT"
run "$IOLENS" pcstat --map=4 --csv -o name,percent "$a"
check_eq "--map adds its column to an -o list too" "name,percent,map|$a,100.000,OOOO" "$(tr '\n' '|' <<<"$OUT" | sed 's/|$//')"
# ext4 may dirty a whole large folio: the first page at least, maybe its neighbour. The kernel's
# writeback may clean it before pcstat looks, on a loaded machine: written again, three times at most.
for try in 1 2 3; do
	dd if=/dev/urandom of="$c" bs=4k count=1 conv=notrunc status=none
	run "$IOLENS" pcstat --map=3 --csv --no-header -o map,dirty "$c"
	[[ $OUT =~ ^D[DO]O,[12]$ ]] && break
	echo "# the written page was clean again when pcstat looked ($OUT): written again"
done
check_match "--map shows dirty pages where the write was" "^D[DO]O,[12]$" "$OUT"
sync "$c"
run "$IOLENS" pcstat --map=0 "$a"
check_eq "--map=0 is a usage error" 2 "$RC"

# --pid: what a process has open and mapped, through /proc, deleted files included.
make_file "$T/open" 50000; make_file "$T/mapped" 70000; make_file "$T/gone" 30000
python3 -c 'import mmap,os,sys,time
o=open(sys.argv[1],"rb"); g=open(sys.argv[3],"rb"); os.unlink(sys.argv[3])
m=mmap.mmap(os.open(sys.argv[2], os.O_RDONLY), 0, prot=mmap.PROT_READ)
print("ready", flush=True); time.sleep(60)' "$T/open" "$T/mapped" "$T/gone" > "$T/ready" &
holder=$!
on_exit "kill $holder 2>/dev/null"
for i in $(seq 50); do grep -q ready "$T/ready" && break; sleep 0.1; done
run "$IOLENS" pcstat --pid "$holder" --csv -o name,size
check_match "--pid: an open file" "^$T/open,50000$" "$OUT"
check_match "--pid: a mapped file (map_files)" "^$T/mapped,70000$" "$OUT"
check_match "--pid: a deleted file still open" "^$T/gone \(deleted\),30000$" "$OUT"
check_eq "--pid: each file once" 1 "$(grep -c "^$T/mapped," <<<"$OUT")"
kill $holder

# A link named pcstat runs iolens pcstat.
ln -s "$IOLENS" "$T/pcstat"
check_eq "a link named pcstat" "$("$IOLENS" pcstat "$a")" "$("$T/pcstat" "$a")"
run "$T/pcstat" --bogus
check_match "its messages say pcstat" "^pcstat: unrecognized option" "$ERR"

# -x stays on one filesystem.
if is_root; then
	mkdir -p "$T/x/inner"
	make_file "$T/x/top" 4096
	if mount -t tmpfs tmpfs "$T/x/inner" 2>/dev/null; then
		on_exit "umount $T/x/inner"
		make_file "$T/x/inner/other" 4096
		check_eq "-R crosses filesystems" 2 "$("$IOLENS" pcstat -R --csv --no-header -o name "$T/x" | wc -l)"
		check_eq "-R -x does not" "$T/x/top" "$("$IOLENS" pcstat -R -x --csv --no-header -o name "$T/x")"
	else
		skip "-x: cannot mount a tmpfs here"
	fi
else
	skip "-x: needs root to mount a second filesystem"
fi

# A 1 TiB sparse file: exact page count, nothing cached.
truncate -s 1T "$T/sparse"
run "$IOLENS" pcstat --map=8 --csv --no-header -o pages,cached,map "$T/sparse"
check_eq "a 1 TiB sparse file" "268435456,0,........" "$OUT"

# The mincore fallback works in bounded windows: its memory does not grow with the file.
if [ -x /usr/bin/time ]; then
	truncate -s 1G "$T/sparse-small"; truncate -s 64G "$T/sparse-big"
	rss() { /usr/bin/time -f %M env IOLENS_PAGECACHE=mincore "$IOLENS" pcstat -o pages "$1" 2>&1 >/dev/null | tail -1; }
	small=$(rss "$T/sparse-small"); big=$(rss "$T/sparse-big")
	check "mincore: 64 GiB takes no more memory than 1 GiB ($big KiB vs $small KiB, within 1 MiB)" \
		test "$big" -le $((small + 1024))
	check_eq "mincore: a 64 GiB sparse file, 0 cached" "16777216,0" \
		"$(IOLENS_PAGECACHE=mincore "$IOLENS" pcstat --csv --no-header -o pages,cached "$T/sparse-big")"
else
	skip "mincore memory: needs /usr/bin/time (make test-deps)"
fi
