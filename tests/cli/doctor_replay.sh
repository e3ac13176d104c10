#!/usr/bin/env bash
# doctor_replay.sh: recorded snapshots (tests/fixtures/doctor/CASE/snapshot) judged by doctor --replay as the user nobody give the findings expected of each rule; a live run recorded and replayed says the same; a bad snapshot is refused with exit 2.
. "$(dirname "$0")/lib.sh"

FIXTURES=$TOP/tests/fixtures/doctor
summary() { python3 "$TOP/tests/cli/doctor_query.py" summary; }
# nobody reads what it judges from a copy it can read (the worktree may be closed to it).
cp -r "$FIXTURES" "$T/fixtures"
chmod -R a+rX "$T"
as_nobody=()
is_root && as_nobody=("${AS_NOBODY[@]}")

# ---- Each fixture: its findings (rule, severity, numbers) and exit status, as expected ------------

for dir in "$T"/fixtures/*/; do
	case=$(basename "$dir")
	run env TZ=UTC "${as_nobody[@]}" "$IOLENS" doctor --no-config --json --replay "$dir/snapshot"
	got=$(printf 'exit %s\n%s\n' "$RC" "$(summary <<<"$OUT")")
	check_eq "$case: the findings of its snapshot, replayed as $("${as_nobody[@]}" id -un)" "$(cat "$dir/expected")" "$got"
done
# Every rule has a case that fires it and one that does not.
rules=$("$IOLENS" doctor --help-all | awk '/^Rules/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')
for rule in $rules; do
	fires=$(grep -l "^[a-z]* $rule " "$T"/fixtures/*/expected | wc -l)
	quiet=$(grep -L "^[a-z]* $rule " "$T"/fixtures/*/expected | wc -l)
	check "rule $rule: fired by $fires fixtures, not by $quiet" test "$fires" -ge 1 -a "$quiet" -ge 1
done

# ---- The text says what the JSON says; the configuration applies to a replay -----------------------

run "${as_nobody[@]}" "$IOLENS" doctor --no-config --replay "$T/fixtures/full-inodes/snapshot"
check_match "the text of a replay: the full filesystem" "warning: /tmp/dr/fs1 \(tmpfs on fulltest\) is nearly full" "$OUT"
run "${as_nobody[@]}" "$IOLENS" doctor --no-config --json --disable inodes --set full.warning_percent=96 \
	--replay "$T/fixtures/full-inodes/snapshot"
check_eq "--disable and --set judge a replay too" "worst none" "$(summary <<<"$OUT")"

# ---- A live run, recorded, replays to the same document ---------------------------------------------

if is_root; then
	run "$IOLENS" doctor --no-config --json --record "$T/live.snap" 0.5
	live=$OUT
	check "doctor --record: the snapshot written ($(wc -l <"$T/live.snap" 2>/dev/null) lines)" test -s "$T/live.snap"
	chmod a+r "$T/live.snap"
	run "${AS_NOBODY[@]}" "$IOLENS" doctor --no-config --json --replay "$T/live.snap"
	check_eq "… replayed as nobody: the same JSON document" "$live" "$OUT"
else
	skip "a live recording needs root"
fi

# ---- Older formats: a snapshot whose header names no version (version 1) judged as the same ---------

sed 's/^\(iolens-doctor-snapshot\) 1$/\1/' "$T/fixtures/swap-out/snapshot" >"$T/unversioned.snap"
check "the unversioned copy's header has no version" grep -qx iolens-doctor-snapshot "$T/unversioned.snap"
chmod a+r "$T/unversioned.snap"
run env TZ=UTC "${as_nobody[@]}" "$IOLENS" doctor --no-config --json --replay "$T/unversioned.snap"
got=$(printf 'exit %s\n%s\n' "$RC" "$(summary <<<"$OUT")")
check_eq "a snapshot without a version: read as version 1, the same findings" "$(cat "$T/fixtures/swap-out/expected")" "$got"

# ---- Bad snapshots: a clear message and exit 2, never a crash ----------------------------------------

bad() { # bad NAME TEXT MESSAGE-PATTERN
	printf '%b' "$2" >"$T/bad.snap"
	run "$IOLENS" doctor --no-config --replay "$T/bad.snap"
	check_eq "a snapshot $1: exit 2" 2 "$RC"
	check_match "… said: $3" "$3" "$ERR"
}
bad "that is not one" 'hello\n' "bad.snap: line 1: not a doctor snapshot"
bad "that is empty" '' "empty: not a doctor snapshot"
bad "of a later version" 'iolens-doctor-snapshot 9\n' "line 1: version 9: this doctor reads up to version "
bad "with an unknown key" 'iolens-doctor-snapshot 1\npage_size 4096\nfrobs 3\n' "line 3: unknown key 'frobs'"
bad "with a field missing" 'iolens-doctor-snapshot 1\npage_size 4096\nmem 1 2\n' "line 3: mem_available missing"
bad "with a field too many" 'iolens-doctor-snapshot 1\npage_size 4096 7\n' "line 2: more fields"
bad "with a negative count" 'iolens-doctor-snapshot 1\npage_size 4096\nswaps -1 0\n' "line 3: swaps: '-1' is not a whole number"
bad "with a bad escape" 'iolens-doctor-snapshot 1\npage_size 4096\nrate 1 a\\\\q 0 0 0\n' "line 3: comm: a backslash"
bad "with a file index out of range" 'iolens-doctor-snapshot 1\npage_size 4096\ndirect 1 x 3 0 ebpf - 0 0 0 0 0 0 1 5 0\n' "direct 1: file 5"
bad "with an op before its server" 'iolens-doctor-snapshot 1\npage_size 4096\nop READ 0 1 1 1 0 0 0\n' "line 3: op before any vtrace line"
bad "without a page size" 'iolens-doctor-snapshot 1\nseconds 1\n' "no page_size line"
bad "with an endless number" 'iolens-doctor-snapshot 1\npage_size 4096\nseconds 1e400\n' "line 3: seconds"
run "$IOLENS" doctor --replay "$T/no-such-file"
check_eq "a snapshot that is not there: exit 2" 2 "$RC"
check_match "… said" "no-such-file: No such file or directory" "$ERR"
run "$IOLENS" doctor --replay /dev/zero
check_eq "/dev/zero: not a regular file, exit 2" 2 "$RC"
run "$IOLENS" doctor --replay "$T/fixtures/quiet/snapshot" 3
check_eq "--replay with seconds: exit 2" 2 "$RC"
run "$IOLENS" doctor --replay "$T/fixtures/quiet/snapshot" --record "$T/x.snap"
check_eq "--replay with --record: exit 2" 2 "$RC"
run "$IOLENS" doctor --record /nonexistent/dir/x.snap 0
check_eq "--record to where it cannot write: exit 1, the findings still written" "1 yes" \
	"$RC $(grep -q 'No I/O problem\|^[a-z]*: ' <<<"$OUT" && echo yes)"
ln -s "$T/elsewhere" "$T/link.snap"
run "$IOLENS" doctor --record "$T/link.snap" 0
check_eq "--record to a symbolic link: not followed, exit 1" "1 no" "$RC $([ -e "$T/elsewhere" ] && echo yes || echo no)"
check_match "… said" "link.snap: a symbolic link, not followed" "$ERR"
mkfifo "$T/fifo.snap"
run "$IOLENS" doctor --record "$T/fifo.snap" 0
check_eq "--record to a FIFO: refused at once, exit 1" 1 "$RC"

echo "1..$t_count"
