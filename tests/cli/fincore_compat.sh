#!/bin/bash
# fincore_compat.sh: a link named fincore takes util-linux fincore's options and columns with fincore's meanings (PAGES: resident pages), held to the real fincore on the same files.
. "$(dirname "$0")/lib.sh"

command -v fincore >/dev/null || skip_all "fincore (util-linux) is not installed (make deps)"
can_evict || skip_all "the scratch directory is on $(fs_type "$T"): its pages cannot be dropped"
pause_damon
mkdir -p "$T/bin" "$T/dir"
ln -s "$IOLENS" "$T/bin/fincore"
F=$T/bin/fincore
make_file "$T/a" 100000
make_file "$T/mid" 2000000
make_file "$T/big" 5000000
printf x > "$T/tiny"
: > "$T/empty"
make_file "$T/$(printf 'odd\tname\001')" 5000
sync
state() {
	"$IOLENS" evict "$T/a" "$T/mid" "$T/big" "$T/tiny" > /dev/null
	cat "$T/a" "$T/tiny" > /dev/null
	head -c 1000000 "$T/mid" > /dev/null
}
same() {
	local d=$1 ours theirs; shift
	state; ours=$("$F" "$@" 2>&1; echo "exit $?")
	state; theirs=$(fincore "$@" 2>&1; echo "exit $?")
	if [ "$ours" = "$theirs" ]; then ok "$d: as fincore $*"; else not_ok "$d: fincore $*: ours
$ours
theirs
$theirs"; fi
}
files=("$T/a" "$T/mid" "$T/big" "$T/tiny" "$T/empty")
same "the default columns" "${files[@]}"
same "-b: bytes" -b "${files[@]}"
same "-J: JSON, sizes as strings" -J "${files[@]}"
same "-J -b: JSON, sizes as numbers" -J -b "${files[@]}"
same "-r: raw" -r "${files[@]}"
same "-n: no headings" -n "${files[@]}"
same "-o PAGES,FILE" -o PAGES,FILE "${files[@]}"
same "-o lower case" -o pages,res,size "${files[@]}"
same "-o +PAGES: added to the defaults" -o +PAGES "$T/a"
same "--output --noheadings --raw --bytes --json" --output RES,FILE --noheadings --raw --bytes "$T/a"
same "a directory: passed over" "$T/dir" "$T/a"
same "a name with a tab and a control character" "$T/$(printf 'odd\tname\001')"
same "-J: the same name in JSON" -J "$T/$(printf 'odd\tname\001')"
same "an unknown column" -o BOGUS "$T/a"

# What PAGES means: resident pages, here as in fincore; iolens pcstat's pages are all the file's.
state
check_eq "PAGES is iolens pcstat's cached" "$("$IOLENS" pcstat --csv --no-header -o cached "$T/mid")" \
	"$("$F" -n -o PAGES "$T/mid" | tr -d ' ')"

# Errors: said, exit 1, the other files still shown.
run "$F" "$T/missing" "$T/a"
check_eq "a missing file: exit 1, as fincore" 1 "$RC"
check_match "... said" "missing: No such file or directory" "$ERR"
check_match "... the other shown" "$T/a\$" "$OUT"
mkfifo "$T/fifo"
run "$F" "$T/fifo"
check_eq "a FIFO: an error, never a hang (fincore would wait on it)" 1 "$RC"
run "$F"
check_eq "no file: usage error" 2 "$RC"

# Columns of util-linux 2.41, from cachestat(2).
if "$IOLENS" pcstat --json /bin/ls | grep -qE '"method": ?"cachestat"'; then
	printf 'dirty' >> "$T/a"
	run "$F" -b -n -r -o DIRTY_PAGES,DIRTY,WRITEBACK_PAGES,EVICTED_PAGES,RECENTLY_EVICTED_PAGES,FILE "$T/a"
	check_match "DIRTY_PAGES and the other 2.41 columns" "^[1-9][0-9]* [0-9]+ [0-9]+ [0-9]+ [0-9]+ $T/a\$" "$OUT"
	sync
else
	skip "the 2.41 columns need cachestat(2)"
fi

echo "1..$t_count"
