#!/usr/bin/env bash
# pcstat_errors.sh: bad input gets one clear message, the other paths keep their rows, exit 1, never a hang.
. "$(dirname "$0")/lib.sh"

good=$T/good
make_file "$good" 10000

# Each case: the message expected on stderr, and the good file still has its row.
expect_error() {
	local what=$1 pattern=$2; shift 2
	run "$@"
	check_eq "$what: exit status 1" 1 "$RC"
	check_match "$what: message on stderr" "^iolens pcstat: .*$pattern" "$ERR"
	check_eq "$what: one message" 1 "$(grep -c . <<<"$ERR")"
	check_match "$what: the other file keeps its row" "$good" "$OUT"
}

expect_error "missing path" "$T/nope: No such file or directory" "$IOLENS" pcstat "$T/nope" "$good"
expect_error "directory without -R" "is a directory \(use -R" "$IOLENS" pcstat "$T" "$good"

mkfifo "$T/fifo"
expect_error "FIFO (never opened, so no hang)" "fifo: is a FIFO" "$IOLENS" pcstat "$T/fifo" "$good"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/sock"
expect_error "socket" "sock: is a socket" "$IOLENS" pcstat "$T/sock" "$good"
expect_error "character device" "is a character device" "$IOLENS" pcstat /dev/null "$good"
ln -s loop "$T/loop"
expect_error "symbolic link loop" "loop: Too many levels of symbolic links" "$IOLENS" pcstat "$T/loop" "$good"

if is_root; then
	mknod "$T/nodisk" b 240 254 2>/dev/null  # a block device with no driver behind it
	expect_error "unreadable block device" "nodisk: No such device" "$IOLENS" pcstat "$T/nodisk" "$good"
	chmod 600 "$good"; cp "$good" "$T/private"; chmod 600 "$T/private"; chmod 755 "$T"
	run "${AS_NOBODY[@]}" "$IOLENS" pcstat "$T/private"
	check_eq "permission denied: exit 1" 1 "$RC"
	check_match "permission denied: message" "private: Permission denied" "$ERR"
	chmod 644 "$good"
else
	skip "unreadable device and permission denied: need root (mknod, setpriv)"
fi

# A loop through directories with -L is reported, and the walk goes on.
mkdir -p "$T/tree/sub"
make_file "$T/tree/sub/file" 5000
ln -s .. "$T/tree/sub/up"
run "$IOLENS" pcstat -R -L "$T/tree"
check_eq "-R -L with a directory loop: exit 1" 1 "$RC"
check_match "-R -L with a directory loop: reported" "tree/sub/up: symbolic link loop" "$ERR"
check_eq "-R -L with a directory loop: the file is still listed once" 1 "$(grep -c 'sub/file' <<<"$OUT")"
run "$IOLENS" pcstat -R "$T/tree"
check_eq "-R without -L: links are not followed, no loop" "0:" "$RC:$ERR"

# An empty file: 0 pages, 0 %, not NaN.
: > "$T/empty"
run "$IOLENS" pcstat --csv --no-header "$T/empty"
check_eq "empty file: 0 pages, 0 %" "$T/empty,0,0,0,0.000" "$OUT"
run "$IOLENS" pcstat --json "$T/empty"
check_match "empty file in JSON: percent 0" '"percent": 0.000' "$OUT"

# Names with spaces and newlines: escaped in tables, exact in JSON and CSV.
odd="$T/with space
and newline"
make_file "$odd" 100
run "$IOLENS" pcstat "$odd"
check_match "newline escaped in the table" 'with space\\x0aand newline' "$OUT"
check_eq "table: one row for it plus the header" 2 "$(wc -l <<<"$OUT")"
run "$IOLENS" pcstat --json "$odd"
check_eq "exact name in JSON" "$odd" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["files"][0]["name"])' <<<"$OUT")"
run "$IOLENS" pcstat --csv -o name,size "$odd"
check_eq "exact name in CSV" "$odd|100" "$(python3 -c 'import csv,sys; r=list(csv.DictReader(sys.stdin))[0]; print(r["name"] + "|" + r["size"])' <<<"$OUT")"
run "$IOLENS" pcstat "$T/no
pe"
check_eq "newline escaped in messages too" "iolens pcstat: $T/no\x0ape: No such file or directory" "$ERR"

# A user who neither owns nor may write a world-readable file gets what the kernel tells them:
# cachestat(2) answers them before Linux 6.10 (then the count is fincore's), mincore never since 5.2
# (it says every page is cached: unknown, never 100 %). Exit 0 either way: pcstat did its job.
if is_root; then
	make_file "$T/rootfile" 40000
	chmod 644 "$T/rootfile"
	cat "$T/rootfile" > /dev/null
	told=$(nobody_told "$T/rootfile")
	for method in cachestat mincore; do
		run env IOLENS_PAGECACHE=$method "${AS_NOBODY[@]}" "$IOLENS" pcstat --csv --no-header -o name,pages,cached "$T/rootfile"
		check_eq "$method as another user: exit 0" 0 "$RC"
		if [ "$method" = cachestat ] && [ -n "$told" ]; then
			check_eq "… the kernel tells them: the cached pages fincore counts" \
				"$T/rootfile,10,$(fincore_cached "$T/rootfile")" "$OUT"
			continue
		fi
		check_eq "… cached unknown (empty in CSV)" "$T/rootfile,10," "$OUT"
		check_match "… the reason, in one line" \
			"^iolens pcstat: $T/rootfile: cached pages unknown \(not owner or writer\)$" "$ERR"
		run env IOLENS_PAGECACHE=$method "${AS_NOBODY[@]}" "$IOLENS" pcstat --json "$T/rootfile"
		check_match "$method as another user: null in JSON" '"cached": null' "$OUT"
		run env IOLENS_PAGECACHE=$method "${AS_NOBODY[@]}" "$IOLENS" pcstat "$T/rootfile"
		check_match "$method as another user: '-' in the table" "rootfile +40000 +10 +- +-" "$OUT"
	done
else
	skip "unknown state for other users: needs root to create the case"
fi

# Files removed while a tree is scanned: messages, never a crash.
mkdir "$T/churn"
python3 -c 'import sys
for i in range(20000): open("%s/f%d" % (sys.argv[1], i), "w").close()' "$T/churn"
rm -rf "$T/churn" &
run "$IOLENS" pcstat -R "$T/churn"
wait
check "removed during the scan: exit 0 or 1, no crash (status $RC)" test "$RC" -le 1
check_no_match "removed during the scan: messages in the house format" "^[^i]|^i[^o]" "$ERR"

# A file truncated and extended while it is scanned: no crash, never above 100 %.
make_file "$T/shrinking" $((16 << 20))
( for i in $(seq 1 200); do truncate -s $((i % 7 * 3))M "$T/shrinking"; done ) &
bad=0
for i in $(seq 1 30); do
	for method in cachestat mincore; do
		out=$(IOLENS_PAGECACHE=$method "$IOLENS" pcstat --map=40 --csv --no-header -o percent "$T/shrinking" 2>&1)
		rc=$?
		if [ $rc -gt 1 ] || ! awk -v p="$out" 'BEGIN { exit !(p + 0 <= 100) }'; then bad=$((bad + 1)); fi
	done
done
wait
check_eq "truncated during the scan: no crash, percent at most 100" 0 "$bad"

# Usage errors exit 2.
run "$IOLENS" pcstat
check_eq "no path: exit 2" 2 "$RC"
run "$IOLENS" pcstat -o name,bogus "$good"
check_eq "unknown column: exit 2" 2 "$RC"
check_match "unknown column: named" "unknown column 'bogus'" "$ERR"
run "$IOLENS" pcstat --range 12x "$good"
check_eq "bad --range: exit 2" 2 "$RC"
run "$IOLENS" pcstat --sort nosuch "$good"
check_eq "bad --sort: exit 2" 2 "$RC"
run "$IOLENS" pcstat --pid 0
check_eq "bad --pid: exit 2" 2 "$RC"
run "$IOLENS" pcstat --pid 4000000
check_eq "no such process: exit 1" "1" "$RC"
check_match "no such process: said" "pid 4000000: No such process" "$ERR"
