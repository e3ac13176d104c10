#!/bin/bash
# pcstat_vmtouch_options.sh: vmtouch's daily options on iolens pcstat, evict and warm: -m, -i, -I, -b, -0, -q, -f, and --range for evict and warm.
. "$(dirname "$0")/lib.sh"

can_evict || skip_all "the scratch directory is on $(fs_type "$T"): its pages cannot be dropped"
pause_damon
mkdir -p "$T/tree/sub" "$T/tree/skipme"
make_file "$T/tree/a" 100000
make_file "$T/tree/big" 300000
make_file "$T/tree/sub/b.log" 5000
make_file "$T/tree/skipme/c" 20000
sync
names() { "$IOLENS" "$@" --csv --no-header -o name 2>/dev/null | sed "s|^$T/tree/||" | sort | tr '\n' ' ' | sed 's/ $//'; }

for cmd in pcstat evict warm; do
	check_eq "$cmd -m: larger files left out" "a skipme/c sub/b.log" "$(names $cmd -R -m 100k "$T/tree")"
	run "$IOLENS" $cmd -R -m 100k "$T/tree" --csv
	check_eq "$cmd -m: exit 0 (left out as asked)" 0 "$RC"
	check_match "$cmd -m: each one said" "big: larger than the maximum size given: skipped" "$ERR"
	run "$IOLENS" $cmd -R -q -m 100k "$T/tree"
	check_eq "$cmd -q: no table, no word, exit 0" "0::" "$RC:$OUT:$ERR"
	check_eq "$cmd -i: a directory and a pattern left out" "a big" "$(names $cmd -R -i skipme -i '*.log' "$T/tree")"
	check_eq "$cmd -I: only the names that match" "sub/b.log" "$(names $cmd -R -I '*.log' "$T/tree")"
	check_eq "$cmd --ignore / --only / --max-size" "sub/b.log" "$(names $cmd -R --ignore skipme --only '[abc]*' --max-size 10k "$T/tree")"
	printf '%s\n' "$T/tree/a" "" "$T/tree/sub/b.log" > "$T/list"
	check_eq "$cmd -b: paths from a file" "a big sub/b.log" "$(names $cmd -b "$T/list" "$T/tree/big")"
	check_eq "$cmd -b -: from standard input" "a sub/b.log" "$(names $cmd -b - < "$T/list")"
	printf '%s\0' "$T/tree/a" "$T/tree/big" > "$T/list0"
	check_eq "$cmd -b -0: NUL-separated (find -print0)" "a big" "$(names $cmd --files-from "$T/list0" --null)"
	run "$IOLENS" $cmd -0 "$T/tree/a"
	check_eq "$cmd -0 without -b: usage error" 2 "$RC"
	run "$IOLENS" $cmd -b "$T/missing"
	check_eq "$cmd -b: a list that cannot be read: exit 1" 1 "$RC"
	check_match "... said" "missing: No such file or directory" "$ERR"
done
ln -s "$T/tree/skipme" "$T/tree/link"
check_eq "-f follows links inside trees (as -L)" "$(names pcstat -R -L "$T/tree")" "$(names pcstat -R -f "$T/tree")"
rm "$T/tree/link"

# --range on evict and warm (vmtouch's -p): only those pages.
"$IOLENS" evict "$T/tree/big" > /dev/null
run "$IOLENS" warm --range 8k:16k --csv --no-header -o pages,cached_before,cached_after "$T/tree/big"
check_eq "warm --range 8k:16k: 4 pages loaded" "4,0,4" "$OUT"
check_eq "... and no others (pcstat)" "4" "$("$IOLENS" pcstat --csv --no-header -o cached "$T/tree/big")"
check_eq "... those (pcstat --range)" "4" "$("$IOLENS" pcstat --range 8k:16k --csv --no-header -o cached "$T/tree/big")"
check_eq "... as vmtouch sees them" "4" "$(vmtouch -p 8k-24k "$T/tree/big" | awk '/Resident/ { split($3, a, "/"); print a[1] }')"
cat "$T/tree/big" > /dev/null
run "$IOLENS" evict --range 0:64k --csv --no-header -o pages,cached_before,cached_after "$T/tree/big"
check_eq "evict --range 0:64k: 16 pages dropped" "16,16,0" "$OUT"
check_eq "... the rest stayed" "$(( $(pages_of "$T/tree/big") - 16 ))" "$("$IOLENS" pcstat --csv --no-header -o cached "$T/tree/big")"
run "$IOLENS" evict --range 64k "$T/tree/big" --csv --no-header -o cached_after
check_eq "evict --range 64k: to the end" "0" "$OUT"
run "$IOLENS" warm --range 1:bogus "$T/tree/big"
check_eq "--range: a bad one is a usage error" 2 "$RC"
if is_root; then
	"$IOLENS" evict "$T/tree/big" > /dev/null
	"$IOLENS" warm --lock --range 4097:8k "$T/tree/big" > "$T/lock.out" 2>&1 & locker=$!
	for i in $(seq 50); do grep -q 'locked in memory' "$T/lock.out" && break; sleep 0.1; done
	"$IOLENS" evict "$T/tree/big" > /dev/null
	check_eq "warm --lock --range 4097:8k: the 3 pages it overlaps stay locked" 3 \
		"$("$IOLENS" pcstat --csv --no-header -o cached "$T/tree/big")"
	kill $locker; wait $locker 2>/dev/null
else
	skip "warm --lock --range: needs root"
fi

echo "1..$t_count"
