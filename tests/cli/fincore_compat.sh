#!/bin/bash
# fincore_compat.sh: a link named fincore takes util-linux fincore's options and columns with fincore's meanings (PAGES: resident pages), held to the real fincore on the same files.
. "$(dirname "$0")/lib.sh"

command -v fincore >/dev/null || skip_all "fincore (util-linux) is not installed (make test-deps)"
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
# A name with an accent, a CJK word, a C1 control (U+009B, CSI) and a backslash before an x: escaped as
# fincore escapes them (in the table; -J keeps all but the C1 control, which fincore writes raw).
make_file "$T/$(printf 'caf\303\251 \344\270\255 csi\302\233 \\x41')" 5000
same "a name with é, 中, U+009B and a backslash before an x" "$T/$(printf 'caf\303\251 \344\270\255 csi\302\233 \\x41')"
same "-r: the same name raw" -r "$T/$(printf 'caf\303\251 \344\270\255 csi\302\233 \\x41')"
# What fincore prints as it is: a right-to-left override (U+202E), and a C1 control in JSON.
RLO=$T/$(printf 'evil\342\200\256txt.exe')
make_file "$RLO" 5000
run "$F" "$RLO"
check_match "a right-to-left override: escaped in the table (fincore prints it as it is)" 'evil\\xe2\\x80\\xaetxt\.exe$' "$OUT"
run "$F" -J "$RLO" "$T/$(printf 'caf\303\251 \344\270\255 csi\302\233 \\x41')"
check "… and in JSON as \\u202e, U+009B as \\u009b: the same strings to a parser" python3 -c 'import json, sys
files = [f["file"] for f in json.loads(sys.argv[1])["fincore"]]
sys.exit(files != [sys.argv[2], sys.argv[3]] or "\\u202e" not in sys.argv[1] or "\\u009b" not in sys.argv[1])' \
	"$OUT" "$RLO" "$T/$(printf 'caf\303\251 \344\270\255 csi\302\233 \\x5cx41')"

# What PAGES means: resident pages, here as in fincore; iolens pcstat's pages are all the file's.
state
check_eq "PAGES is iolens pcstat's cached" "$("$IOLENS" pcstat --csv --no-header -o cached "$T/mid")" \
	"$("$F" -n -o PAGES "$T/mid" | tr -d ' ')"

# Errors: said, exit 1, the other files still shown.
run "$F" "$T/missing" "$T/a"
check_eq "a missing file: exit 1, as fincore" 1 "$RC"
check_eq "... said in fincore's words" "fincore: failed to open: $T/missing: No such file or directory" "$ERR"
check_match "... the other shown" "$T/a\$" "$OUT"

# A character device: fincore's row of zeros, exit 0; a missing file: fincore's message and status.
# Each held to fincore byte for byte, stdout and stderr together, with the exit status.
for opts in "" "--bytes" "-b" "-J" "-J -b" "-r" "-n" "-r -n" "-o RES,PAGES,SIZE,FILE" "-o +RES" "-o FILE,SIZE -J" \
	"-n -r -o PAGES"; do
	same "/dev/null${opts:+ with $opts}" $opts /dev/null
	same "a missing file${opts:+ with $opts}" $opts "$T/missing"
done
same "/dev/null and /dev/zero among files" "$T/a" /dev/null /dev/zero "$T/tiny"
same "a missing file among others (-J)" -J "$T/a" "$T/missing" "$T/tiny"
same "a missing file among others (-r -b)" -r -b "$T/missing" "$T/a" /dev/null
ln -s nowhere "$T/dangling"
same "a dangling symbolic link" "$T/dangling" "$T/a"
mkdir -p "$T/closed"; make_file "$T/closed/f" 5000; chmod 700 "$T/closed"
make_file "$T/secret" 5000; chmod 600 "$T/secret"
chmod 755 "$T" "$T/bin"
for args in "secret" "closed/f" "-J secret /dev/null" "-r secret missing /dev/null"; do
	ours=$(cd "$T" && "${AS_NOBODY[@]}" "$F" $args 2>&1; echo "exit $?")
	theirs=$(cd "$T" && "${AS_NOBODY[@]}" fincore $args 2>&1; echo "exit $?")
	check_eq "as nobody, fincore $args: failed to open, as fincore" "$theirs" "$ours"
done
check_match "... in fincore's words" "^fincore: failed to open: secret: Permission denied$" \
	"$(cd "$T" && "${AS_NOBODY[@]}" "$F" secret 2>&1)"
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
