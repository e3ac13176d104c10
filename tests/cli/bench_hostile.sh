#!/usr/bin/env bash
# bench_hostile.sh: what another user does to the paths bench writes (files, directories, device links swapped mid-run, a filesystem written behind its back) never gets anything but bench's own file or the named device written.
. "$(dirname "$0")/lib.sh"

is_root || skip_all "bench is attacked here as root by nobody (needs root: setpriv, chown, loop devices)"
case "$(fs_type "$T")" in
tmpfs|ramfs) skip_all "the scratch directory is on $(fs_type "$T"): no disk to measure with O_DIRECT" ;;
esac
chmod 755 "$T"

# The truth each check is held to: the bytes of files and devices nobody may have bench write,
# compared before and after (md5sum), and the names in directories (ls).
sum() { md5sum <"$1" | cut -c 1-32; }
nobody() { "${AS_NOBODY[@]}" "$@"; }
# nobody_dir NAME: a directory of nobody's, as $T/NAME.
nobody_dir() { mkdir -p "$T/$1" && chown nobody:nogroup "$T/$1"; }
# running OUT PID: bench (writing JSON interval lines to OUT) is in its runs.
running() { lines_at_least "$1" 1 || ! kill -0 "$2" 2>/dev/null; }
# runs N REFUSALS ARGS...: bench ARGS run N times; their exit statuses, each 1 whose message
# is not one of the REFUSALS (an ERE) followed by that message.
runs() {
	local n=$1 refusals=$2 rc
	shift 2
	for _ in $(seq "$n"); do
		"$IOLENS" bench "$@" >/dev/null 2>"$T/runs.err"
		rc=$?
		printf '%s ' $rc
		[ $rc != 0 ] && ! grep -qE "$refusals" "$T/runs.err" && printf '(%s) ' "$(head -c 200 "$T/runs.err")"
	done
}
# said_if RC ERR: RC, and when it is not 0 what bench said on stderr (ERR), for the failure's message.
said_if() { if [ "$1" = 0 ]; then echo 0; else echo "$1 ($(head -c 400 "$2"))"; fi; }
# A sweep of five points, each its own open of the target in the old code: 4k to 64k.
SWEEP=(--rw write --bs 4k-64k --size 2m --time-based --runtime 0.3 --interval 0.1)

R=$T/root # root's: what nobody must never get written
mkdir -p "$R"
head -c 1M /dev/urandom >"$R/victim"
chmod 644 "$R/victim"
victim_sum=$(sum "$R/victim")
root_listing() { stat -c '%n %y' "$R" "$R"/*; }
root_before=$(root_listing)

# ---- Files -------------------------------------------------------------------------------------
nobody_dir nd
run "$IOLENS" bench --rw write --bs 64k --size 1m "$T/nd"
check_eq "a test file in nobody's directory: exit 0" 0 "$RC"
check_match "… said before the run: nobody can change what it names" "uid 65534 \(nobody\) owns $T/nd and can change what it names" "$ERR"
check_eq "… and removed after" "" "$(ls "$T/nd")"

# The test file moved away and a link to root's file put in its place between two points.
"$IOLENS" bench "${SWEEP[@]}" "$T/nd" >"$T/swap.out" 2>"$T/swap.err" &
pid=$!
wait_until running "$T/swap.out" $pid
made=$(cd "$T/nd" && ls -d iolens-bench.* 2>/dev/null | head -n 1)
nobody sh -c "mv '$T/nd/$made' '$T/nd/away' && ln -s '$R/victim' '$T/nd/$made'"
wait $pid
check_eq "the test file swapped for a link to root's file mid-sweep: the sweep goes on (exit 0)" 0 "$(said_if $? "$T/swap.err")"
check_eq "… five points, all on bench's own file" 5 "$(grep -c '"type":"result"' "$T/swap.out" >/dev/null && tail -n 1 "$T/swap.out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["points"]))')"
check_eq "… root's file not written" "$victim_sum" "$(sum "$R/victim")"
check "… nobody's link left as it is" test -L "$T/nd/$made"
check_eq "… bench's own file, moved away, emptied (its blocks freed)" 0 "$(stat -c %s "$T/nd/away")"
check_match "… and said" "was moved or replaced during the run: its blocks are freed" "$(cat "$T/swap.err")"
rm -f "$T/nd/away" "$T/nd/$made"

# An existing file of nobody's, written with --force, swapped for a link between two points.
nobody_dir nd2
nobody sh -c "head -c 2M /dev/urandom >'$T/nd2/data'"
data_sum=$(sum "$T/nd2/data")
"$IOLENS" bench --force "${SWEEP[@]}" "$T/nd2/data" >"$T/swap2.out" 2>"$T/swap2.err" &
pid=$!
wait_until running "$T/swap2.out" $pid
nobody sh -c "mv '$T/nd2/data' '$T/nd2/data.away' && ln -s '$R/victim' '$T/nd2/data'"
wait $pid
check_eq "nobody's file swapped for a link mid-sweep (--force): exit 0" 0 "$(said_if $? "$T/swap2.err")"
check_eq "… root's file not written" "$victim_sum" "$(sum "$R/victim")"
check "… the file opened at the start was (its bytes changed)" test "$data_sum" != "$(sum "$T/nd2/data.away")"
check "… and the link left" test -L "$T/nd2/data"

# The link there from the start: refused, nothing written.
run "$IOLENS" bench --force --rw write --bs 64k --size 1m "$T/nd2/data"
check_eq "a link of nobody's to root's file, named: exit 1" 1 "$RC"
check_match "… said: who leads it where" "uid 65534 \(nobody\) (owns $T/nd2|owns the symbolic link $T/nd2/data) and can change where it leads, to $R/victim, which they could not write themselves: not written" "$ERR"
check_eq "… root's file not written" "$victim_sum" "$(sum "$R/victim")"

# ---- Directories ---------------------------------------------------------------------------------
nobody_dir np
nobody mkdir "$T/np/d"
"$IOLENS" bench "${SWEEP[@]}" "$T/np/d" >"$T/dir.out" 2>"$T/dir.err" &
pid=$!
wait_until running "$T/dir.out" $pid
nobody sh -c "mv '$T/np/d' '$T/np/d.away' && ln -s '$R' '$T/np/d'"
wait $pid
check_eq "the directory swapped for a link to root's mid-sweep: exit 0" 0 $?
check_eq "… nothing made or removed in root's directory (names and times)" "$root_before" "$(root_listing)"
check_eq "… bench's file removed from the directory it was made in" "" "$(ls "$T/np/d.away")"
run "$IOLENS" bench --rw write --bs 64k --size 1m "$T/np/d"
check_eq "the link to root's directory, named: exit 1" 1 "$RC"
check_match "… said" "can change where it leads, to $R, which they could not write themselves" "$ERR"
check_eq "… nothing made in root's directory" "$root_before" "$(root_listing)"

# ---- Racing swaps ----------------------------------------------------------------------------------
# nobody flips a name between a file of theirs, nothing, and a link to root's file as fast as it
# can, while root runs bench on the name again and again: whatever bench finds, root's file is
# never written (each run writes nobody's file, or a file of its own, or refuses).
nobody_dir race
nobody sh -c "head -c 256K /dev/urandom >'$T/race/file' && ln -s '$R/victim' '$T/race/link'"
cat >"$T/flip.sh" <<'EOF'
cd "$1" || exit 1
while [ ! -e stop ]; do
	mv -T file f; mv -T f file; mv -T link f; mv -T f link
done 2>/dev/null
EOF
nobody sh "$T/flip.sh" "$T/race" &
flipper=$!
on_exit "kill $flipper 2>/dev/null"
codes=$(runs 15 "not written|cannot make the test file|No such file|Too many levels" \
	--force --rw write --bs 64k --size 256k "$T/race/f")
nobody touch "$T/race/stop"
wait $flipper
check_match "15 runs while the name flips: each wrote or refused, none failed otherwise (exit statuses: $codes)" "^([01] )+$" "$codes"
check_eq "… root's file never written" "$victim_sum" "$(sum "$R/victim")"

# ---- Block devices -------------------------------------------------------------------------------
loop_of() { truncate -s 8M "$1" && losetup -f --show "$1" 2>/dev/null; }
A=$(loop_of "$T/a.img") B=$(loop_of "$T/b.img")
if [ -z "$A" ] || [ -z "$B" ]; then
	skip "block devices: no loop device here"
else
	# The device nodes outlive the devices: given back to root (as devtmpfs makes them) on exit, and
	# B made root's here whatever an earlier run left.
	on_exit "chown root $A $B; loop_release $A $T/a.img; loop_release $B $T/b.img"
	chown root "$B"
	chown nobody "$A"            # nobody's to write: bench may write it on their word
	mkfs.ext4 -q -F "$B" >/dev/null 2>&1 # root's, holding a filesystem
	b_sum=$(sum "$B")
	nobody_dir nl
	nobody ln -s "$A" "$T/nl/disk"
	a_sum=$(sum "$A")
	"$IOLENS" bench --force "${SWEEP[@]}" "$T/nl/disk" >"$T/dev.out" 2>"$T/dev.err" &
	pid=$!
	wait_until running "$T/dev.out" $pid
	nobody ln -sfn "$B" "$T/nl/disk"
	wait $pid
	check_eq "a device link flipped to another device mid-sweep: exit 0" 0 $?
	check "… the device named at the start was written" test "$a_sum" != "$(sum "$A")"
	check_eq "… the other not a byte (md5sum)" "$b_sum" "$(sum "$B")"
	check_eq "… its filesystem intact (blkid)" ext4 "$(blkid -p -o value -s TYPE "$B")"
	run "$IOLENS" bench --force --rw write --bs 64k --size 1m "$T/nl/disk"
	check_eq "the link to root's device, named: exit 1" 1 "$RC"
	check_match "… said" "can change where it leads, to $B, which they could not write themselves: not written" "$ERR"
	# Flipped as fast as nobody can while bench runs again and again.
	cat >"$T/flip_dev.sh" <<'EOF'
while [ ! -e "$1.stop" ]; do
	ln -sfn "$2" "$1.new" && mv -T "$1.new" "$1"
	ln -sfn "$3" "$1.new" && mv -T "$1.new" "$1"
done 2>/dev/null
EOF
	nobody sh "$T/flip_dev.sh" "$T/nl/disk" "$A" "$B" &
	flipper=$!
	on_exit "kill $flipper 2>/dev/null"
	codes=$(runs 12 "not written|No such file" --force --rw write --bs 64k --size 1m "$T/nl/disk")
	nobody touch "$T/nl/disk.stop"
	wait $flipper
	check_match "12 runs while the link flips between the two: each wrote or refused (exit statuses: $codes)" "^([01] )+$" "$codes"
	check_eq "… root's device never written" "$b_sum" "$(sum "$B")"

	# A filesystem written onto the device during a sequential point: bench overwrites it within
	# the point, so no signature is left to find; the device's count of sectors written is more
	# than bench wrote, and that is said.
	wipefs -qa "$A" >/dev/null 2>&1
	truncate -s 4M "$T/fs.img" && mkfs.ext4 -q -F "$T/fs.img" >/dev/null 2>&1
	head -c 64K "$T/fs.img" >"$T/fs.head"
	for rw in write randwrite; do
		rm -f "$T/fw.out" # else the write point's lines would say the randwrite one runs before it does
		"$IOLENS" bench --force --rw $rw --bs 64k --size 4m --time-based --runtime 2 --interval 0.1 "$A" \
			>"$T/fw.out" 2>"$T/fw.err" &
		pid=$!
		wait_until running "$T/fw.out" $pid
		nobody dd if="$T/fs.head" of="$A" bs=64k count=1 oflag=direct conv=notrunc status=none
		wait $pid
		check_eq "--rw $rw: a filesystem written onto the device during the point: exit 1" 1 $?
		# Sequential, bench passes offset 0 every few ms: only the device's count can tell. Random,
		# the header may still be there when the point ends: its signature then tells first.
		said="another process wrote 64K? to it during the run .*"
		[ $rw = randwrite ] && said="($said|a filesystem \(ext4\) appeared on it during the run)"
		check_match "… said: another process wrote to it" "$said: stopped, not written again" \
			"$(cat "$T/fw.err")"
		wipefs -qa "$A" >/dev/null 2>&1
	done
fi

# ---- A test file a killed run left, on a name the user gave -----------------------------------
if python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.iolens.probe", b"1")' "$R/victim" 2>/dev/null; then
	"$IOLENS" bench --rw write --bs 64k --size 8m --time-based --runtime 60 --interval 0.2 "$T/mine.dat" \
		>"$T/killed.out" 2>/dev/null &
	pid=$!
	wait_until running "$T/killed.out" $pid
	run "$IOLENS" bench --bs 64k --size 1m "$T/mine.dat"
	check_eq "a named test file of a run still going: not used (exit 1)" 1 "$RC"
	check_match "… said, with its pid" "mine.dat is the test file of a bench still running \(pid $pid\): not used" "$ERR"
	kill -9 $pid
	wait $pid 2>/dev/null
	check "the run killed with SIGKILL left its file" test -f "$T/mine.dat"
	run "$IOLENS" bench --bs 64k --size 1m "$T/mine.dat"
	check_eq "the next run on that name: exit 0" 0 "$RC"
	check_match "… the leftover found by its mark, removed and said" "removed $T/mine.dat: a test file an earlier run left \(pid $pid, no longer running\)" "$ERR"
	check "… and the file it made in its place removed after" test ! -e "$T/mine.dat"
	# A file of the user's own, without the mark, is theirs: read as it is, never removed.
	head -c 1M /dev/urandom >"$T/theirs.dat"
	chmod 600 "$T/theirs.dat"
	run "$IOLENS" bench --bs 64k --size 1m "$T/theirs.dat"
	check_eq "a file without the mark: read, kept" "0 yes" "$RC $([ -f "$T/theirs.dat" ] && echo yes)"
else
	skip "a named leftover: the scratch filesystem keeps no user xattrs"
fi

# ---- Other files bench writes: the chart ---------------------------------------------------------
nobody_dir ns
nobody ln -s "$R/victim" "$T/ns/chart.svg"
run "$IOLENS" bench --bs 64k --size 1m --svg "$T/ns/chart.svg" "$T"
check_eq "--svg through nobody's link to root's file: exit 1" 1 "$RC"
check_match "… said" "chart.svg: .*which they could not write themselves: not written" "$ERR"
check_eq "… root's file not written" "$victim_sum" "$(sum "$R/victim")"
run "$IOLENS" bench --bs 64k --size 1m --svg "$T/ns/new.svg" "$T"
check_eq "--svg in nobody's directory, a new file: written" "0 yes" "$RC $(grep -q '<svg' "$T/ns/new.svg" && echo yes)"

echo "1..$t_count"
