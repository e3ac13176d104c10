#!/usr/bin/env bash
# output_paths.sh: the files commands write where they are told (stat --output and --pidfile, doctor --record, vmtouch -P), run as root, are never written through a path another user leads to root's files.
. "$(dirname "$0")/lib.sh"

is_root || skip_all "the paths are another user's (nobody): needs root for setpriv and chown"
chmod 755 "$T"

# The truth: the bytes of root's file, before and after (md5sum).
sum() { md5sum <"$1" | cut -c 1-32; }
mkdir -p "$T/root" "$T/theirs"
head -c 64K /dev/urandom >"$T/root/victim"
chmod 644 "$T/root/victim"
victim_sum=$(sum "$T/root/victim")
chown nobody:nogroup "$T/theirs"
for name in out.csv pid snap vpid; do
	"${AS_NOBODY[@]}" ln -s "$T/root/victim" "$T/theirs/$name"
done
refused="uid 65534 \(nobody\) (owns $T/theirs|owns the symbolic link [^ ]*) and can change where it leads, to $T/root/victim, which they could not write themselves"

run "$IOLENS" stat -c --output "$T/theirs/out.csv" 0.1 1
check_eq "stat --output through nobody's link to root's file: exit 1" 1 "$RC"
check_match "… said" "out.csv: $refused" "$ERR"
run "$IOLENS" stat -c --pidfile "$T/theirs/pid" 0.1 1
check_eq "stat --pidfile through it: exit 1 (the rest shown)" 1 "$RC"
check_match "… said" "pid: $refused" "$ERR"
run "$IOLENS" doctor --record "$T/theirs/snap" 0.2
check_match "doctor --record through it: said (a link, not followed)" "snap: a symbolic link, not followed" "$ERR"
# As root's own link in nobody's directory, followed, the link is not theirs, the directory is.
ln -s "$T/root/victim" "$T/theirs/rootlink"
run "$IOLENS" doctor --record "$T/theirs/rootlink" 0.2
check_match "doctor --record through root's link in nobody's directory: refused" "rootlink: a symbolic link, not followed" "$ERR"
printf 'x' >"$T/page"
"$IOLENS" vmtouch -l -P "$T/theirs/vpid" "$T/page" >"$T/vm.out" 2>"$T/vm.err" &
pid=$!
wait_until grep -q LOCKED "$T/vm.out"
wait_until test -s "$T/vm.err"
kill -INT $pid
wait $pid
check_match "vmtouch -P through it: said" "vpid: $refused" "$(cat "$T/vm.err")"
check_eq "… root's file written by none of them" "$victim_sum" "$(sum "$T/root/victim")"

# Into nobody's directory, new files: made, and the pid files removed at the end.
run "$IOLENS" stat -c --output "$T/theirs/new.csv" --pidfile "$T/theirs/new.pid" 0.1 2
check_eq "stat --output and --pidfile as new files in nobody's directory: exit 0" 0 "$RC"
check_match "… the CSV written" "usr" "$(cat "$T/theirs/new.csv")"
check "… the pid file removed at the end" test ! -e "$T/theirs/new.pid"
# The pid file swapped by nobody while stat runs: what nobody put there is left alone.
"$IOLENS" stat -c --pidfile "$T/theirs/swap.pid" 0.1 100 >/dev/null 2>&1 &
pid=$!
wait_until test -s "$T/theirs/swap.pid"
"${AS_NOBODY[@]}" sh -c "mv '$T/theirs/swap.pid' '$T/theirs/moved.pid' && echo mine >'$T/theirs/swap.pid'"
kill -INT $pid
wait $pid
check_eq "a pid file replaced by nobody's: theirs left as it is" mine "$(cat "$T/theirs/swap.pid")"

echo "1..$t_count"
