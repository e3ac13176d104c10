#!/bin/bash
# vmtouch_compat.sh: a link named vmtouch takes vmtouch's flags and prints what vmtouch prints, held to the real vmtouch on the same files.
. "$(dirname "$0")/lib.sh"

command -v vmtouch >/dev/null || skip_all "vmtouch is not installed (make test-deps)"
can_evict || skip_all "the scratch directory is on $(fs_type "$T"): its pages cannot be dropped"
pause_damon
mkdir -p "$T/bin" "$T/tree/sub" "$T/tree/skipme"
ln -s "$IOLENS" "$T/bin/vmtouch"
V=$T/bin/vmtouch
make_file "$T/tree/a" 100000
make_file "$T/tree/big" 300000
make_file "$T/tree/sub/b" 5000
make_file "$T/tree/sub/c.log" 9000
make_file "$T/tree/skipme/d" 20000
: > "$T/tree/empty"
ln "$T/tree/a" "$T/tree/hard-a"
sync
# A known state: a and sub/b cached, the rest not (dirty pages would stay: synced above).
state() {
	vmtouch -q -e "$T/tree"
	cat "$T/tree/a" "$T/tree/sub/b" > /dev/null
	head -c 8192 "$T/tree/big" > /dev/null
}
# Both tools' output with Elapsed's number taken out (it is a time), stderr apart. With -t -v,
# vmtouch redraws the bar while it touches when that takes over 0.1 s (a loaded machine): only the
# first and the last bar of a line are kept.
timeless() {
	sed -E -e 's/Elapsed: [0-9.e+-]* seconds/Elapsed: N seconds/' \
		-e 's/^(\r\[[^]]*\] [0-9]+\/[0-9]+)(\r\[[^]]*\] [0-9]+\/[0-9]+)*(\r\[[^]]*\] [0-9]+\/[0-9]+)$/\1\3/'
}
both() {
	state; OURS=$("$V" "$@" 2>"$T/ours.err" | timeless); OURS_RC=$?
	state; THEIRS=$(vmtouch "$@" 2>"$T/theirs.err" | timeless)
}
same() {
	local d=$1; shift
	both "$@"
	if [ "$OURS" = "$THEIRS" ]; then ok "$d: as vmtouch $*"; else not_ok "$d: vmtouch $*: ours
$OURS
theirs
$THEIRS"; fi
}

same "the summary of a tree" "$T/tree"
check_match "... in vmtouch's format" "^ +Files: 6
 +Directories: 3
  Resident Pages: [0-9]+/[0-9]+  [0-9]+K?/[0-9]+K  [0-9.]+%
 +Elapsed: N seconds$" "$OURS"
same "one file" "$T/tree/a"
same "-v: a line and a bar per file" -v "$T/tree/a" "$T/tree/big" "$T/tree/sub/b"
same "-v: a tree" -v "$T/tree/sub"
same "-m: larger files skipped, still counted" -m 10k "$T/tree"
same "-p A-B" -p 4k-12k "$T/tree/big"
same "-p A-" -p 8k- "$T/tree/big" "$T/tree/a"
same "-p B" -p 16k "$T/tree/big"
same "-i: a directory ignored" -i skipme "$T/tree"
same "-i: a pattern" -i '*.log' "$T/tree"
same "-I: only files that match" -I '*.log' "$T/tree"
same "-h: hard links counted again" -h "$T/tree"
same "-q: nothing" -q "$T/tree"
printf '%s\n' "$T/tree/a" "$T/tree/sub" > "$T/list"
same "-b: a list file" -b "$T/list"
printf '%s\0' "$T/tree/a" "$T/tree/big" > "$T/list0"
same "-b -0: a NUL-separated list" -b "$T/list0" -0
state; OURS=$("$V" -b - < "$T/list" 2>&1 | grep -v Elapsed)
state; THEIRS=$(vmtouch -b - < "$T/list" 2>&1 | grep -v Elapsed)
check_eq "-b -: the list on stdin, as vmtouch -b -" "$THEIRS" "$OURS"
same "-b and names: both" -b "$T/list" "$T/tree/big"
same "-e: evict" -e "$T/tree"
check_eq "-e: the pages left (iolens pcstat)" 0 "$("$IOLENS" pcstat -R --csv --no-header -s -o cached "$T/tree")"
same "-e -v" -e -v "$T/tree/a"
same "-t: touch" -t "$T/tree"
check_eq "-t: every page cached after (iolens pcstat)" "100.000" "$("$IOLENS" pcstat -R --csv --no-header -s -o percent "$T/tree")"
same "-t -v: the bars before and after" -t -v "$T/tree/big"

# What vmtouch refuses, refused.
run "$V" -t -e "$T/tree"
check_eq "-t -e: usage error" 2 "$RC"
check_match "... said as vmtouch says it" "invalid option combination: -t and -e" "$ERR"
run "$V" -q -v "$T/tree"
check_match "-q -v: refused" "invalid option combination: -q and -v" "$ERR"
run "$V" -d -l "$T/tree"
check_eq "-d: not here, said" 2:1 "$RC:$(grep -c 'daemon mode is not supported' <<<"$ERR")"
run "$V"
check_match "no file: vmtouch's words" "no files or directories specified" "$ERR"
run "$V" -h
check_match "-h is vmtouch's (hard links), not help: no file given" "no files or directories specified" "$ERR"
run "$V" --help
check_match "--help: the trap of -L said" "-L .*mlockall.*NOT -L of iolens" "$(tr '\n' ' ' <<<"$OUT")"

# A symbolic link named on the command line: followed only with -f, as vmtouch.
ln -s "$T/tree/a" "$T/link"
both "$T/link"
check_eq "a symbolic link: not followed" "$THEIRS" "$OURS"
check_match "... said" "symbolic link" "$(cat "$T/ours.err")"
same "-f: followed" -f "$T/link"

# -l: locked until a signal, "LOCKED N pages (SIZE)" first.
if is_root; then
	"$V" -l "$T/tree/a" > "$T/lock.out" 2>&1 & locker=$!
	for i in $(seq 50); do grep -q LOCKED "$T/lock.out" && break; sleep 0.1; done
	check_eq "-l: LOCKED as vmtouch says it" "LOCKED 25 pages (100K)" "$(cat "$T/lock.out")"
	"$IOLENS" evict "$T/tree/a" > /dev/null
	check_eq "-l: the pages stay through an evict" 25 "$("$IOLENS" pcstat --csv --no-header -o cached "$T/tree/a")"
	kill -TERM $locker; wait $locker
	check_eq "-l: SIGTERM ends it, exit 0" 0 $?
else
	skip "-l: needs root for an unlimited locked-memory limit"
fi

# Errors: a warning in vmtouch's words, exit 0, the rest still counted.
run "$V" "$T/missing" "$T/tree/a"
check_eq "a missing file: exit 0, as vmtouch" 0 "$RC"
check_eq "... said in vmtouch's words" "vmtouch: WARNING: unable to stat $T/missing (No such file or directory)" "$ERR"
check_match "... the other one counted" "Files: 1" "$OUT"

# The walk and its warnings, held to vmtouch on one tree: links to files and directories, a loop,
# a dangling link, hard links, a FIFO. Each run's stdout (Elapsed taken out), stderr and exit
# status are vmtouch's, byte for byte; relative names, as a script types them.
mkdir -p "$T/w/d/sub" "$T/w/e" "$T/w/s" "$T/w/u/closed"
make_file "$T/w/d/a" 100000
make_file "$T/w/d/sub/b" 5000
make_file "$T/w/e/x" 9000
make_file "$T/w/s/one" 20000
ln "$T/w/d/a" "$T/w/d/hard"
ln -s a "$T/w/d/lnfile"                 # to a file with two names
ln -s "$T/w/d/a" "$T/w/d/abslink"
ln -s ../e "$T/w/d/lndir"               # to a directory
ln -s .. "$T/w/d/sub/loop"              # back up: a loop
ln -s nowhere "$T/w/d/dangle"
ln -s one "$T/w/s/l1"                   # to a file with one name: counted twice with -f
ln -s ../s/one "$T/w/s/l2"
ln -s d "$T/w/lnd"
mkfifo "$T/w/fifo"
: > "$T/w/s/empty"
make_file "$T/w/u/secret" 5000
touch "$T/w/u/closed/f"
chmod 600 "$T/w/u/secret"; chmod 700 "$T/w/u/closed"; chmod 755 "$T/w/u"
cat "$T/w/d/a" "$T/w/d/sub/b" "$T/w/e/x" "$T/w/s/one" "$T/w/u/secret" > /dev/null
peer() { # WHO ARGS...: in $T/w, stdout (Elapsed out), stderr and exit status in $T/peer.WHO.*
	local who=$1; shift
	(cd "$T/w" && "$who" "$@" >"$T/peer.out" 2>"$T/peer.err"; echo "rc $?" >>"$T/peer.err")
	sed 's/Elapsed: [0-9.e+-]* seconds/Elapsed: N seconds/' "$T/peer.out"; echo ---; cat "$T/peer.err"
}
walk_same() {
	local d=$1 ours theirs try; shift
	# (Three tries: /dev's devices come and go while other programs attach and detach loops.)
	for try in 1 2 3; do
		ours=$(peer "$V" "$@"); theirs=$(peer vmtouch "$@")
		[ "$ours" = "$theirs" ] && break
	done
	if [ "$ours" = "$theirs" ]; then ok "$d: stdout, stderr and exit status as vmtouch $*"; else not_ok "$d: vmtouch $*: ours
$ours
theirs
$theirs"; fi
}
walk_same "links inside a directory: not followed, each said" -v d
walk_same "-f: links to files and directories followed, a file with two names once" -f -v d
walk_same "-h: each name of a file counted" -h -v d
walk_same "-f -h: the loop said, every link counted (Files 6)" -f -h -v d
check_match "... Files 6, as vmtouch counts them" "Files: 6" "$(peer "$V" -f -h d)"
walk_same "-f: a file with one name reached by two links counts three times" -f s
walk_same "-f -v: a named file and links to it" -f -v s s/one
walk_same "a link named: not followed" lnd
walk_same "-f: a link named, followed" -f lnd
walk_same "a FIFO: skipped, said" fifo
walk_same "a character device: skipped, said" /dev/null
walk_same "a missing file and a directory" -v missing d/sub
walk_same "-q: no warnings" -q missing lnd fifo d
walk_same "-m: too large, said, still counted" -m 10k d
walk_same "-p: smaller than the offset, said" -p 200k- d/a d/sub/b s
walk_same "-i: a directory and a link ignored" -i sub -i lnfile d
walk_same "a trailing slash" d/
walk_same "-e: the warnings while evicting" -e -v d
walk_same "-F: other filesystems not entered, said" -F -f /dev
walk_same "unreadable file and directory (root opens them)" u
# As nobody: the real tools on the same tree, unprivileged.
V_real=$V
for args in "u" "-v u/secret" "-e u" "-t u"; do
	ours=$(V=; peer "${AS_NOBODY[@]}" "$V_real" $args)
	theirs=$(peer "${AS_NOBODY[@]}" vmtouch $args)
	check_eq "as nobody, vmtouch $args: unable to open, unable to opendir, as vmtouch" "$theirs" "$ours"
done
check_match "... the unreadable file said in vmtouch's words" \
	"^vmtouch: WARNING: unable to open u/secret \(Permission denied\), skipping$" "$(peer "${AS_NOBODY[@]}" "$V" u)"

echo "1..$t_count"
