#!/usr/bin/env bash
# doctor_memfs.sh: a memory filesystem (tmpfs) and an ext4 on a disk are asked stat and statfs by doctor itself, not by its probe child (strace says which process asks), and their numbers are statvfs's (os.statvfs of the same mount); another disk's filesystem (btrfs) is still asked by the probe; a tmpfs mounted below a FUSE mount whose lookups stall is asked by a bounded probe, said not to answer, and doctor ends; the recorder's windows the same.
# The mounts live in a mount namespace of the test's own: nothing else on the machine sees them.
if [ -z "${DOCTOR_MEMFS_NS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	DOCTOR_MEMFS_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

need_fuse_example
command -v strace >/dev/null || skip_all "no strace (make test-deps)"
command -v mkfs.ext4 >/dev/null || skip_all "needs mkfs.ext4 (make test-deps: e2fsprogs)"
why=$(child_probed_fs "$T/btrfs.img") || skip_all "$why"

SRC=$T/src MNT=$T/mnt RAM=$T/ram EXT=$T/ext BTR=$T/btr
mkdir -p "$SRC/sub" "$MNT" "$RAM" "$EXT" "$BTR"
dq() { python3 "$TOP/tests/cli/doctor_query.py" "$@" 2>>"$T/dq.err"; }

# ---- A tmpfs with 3 MiB in it, an ext4 and a btrfs on loop devices: the test's own ----------------

mount -t tmpfs -o size=64m iolens-memfs "$RAM" || { not_ok "mount -t tmpfs at $RAM"; exit 1; }
on_exit "umount -l '$RAM'"
head -c 3M /dev/zero >"$RAM/data"
truncate -s 16M "$T/ext4.img"
mkfs.ext4 -q -F "$T/ext4.img" >/dev/null 2>&1 || { not_ok "mkfs.ext4 of a 16 MiB image"; exit 1; }
for fs in ext4 btrfs; do
	loop=$(loop_attach_apart "$T/$fs.img") || skip_all "no free loop device"
	dir=$EXT; [ $fs = btrfs ] && dir=$BTR
	on_exit "umount '$dir' 2>/dev/null" # (hooks run in order: unmounted, then the loop device let go)
	on_exit "loop_release '$loop' '$T/$fs.img'"
	mount "$loop" "$dir" || { not_ok "mount $loop ($fs) at $dir"; exit 1; }
done
head -c 2M /dev/zero >"$EXT/data"
statvfs() { python3 -c 'import os, sys
v = os.statvfs(sys.argv[1])
print(v.f_blocks, v.f_bfree, v.f_bavail, v.f_files, v.f_ffree, v.f_frsize)' "$1"; }

run "${STATFS_TRACED[@]}" -o "$T/strace" "$IOLENS" doctor --record "$T/snap" 1
check_match "doctor 1 under strace (exit $RC)" "^[034]$" "$RC"
numbers() { awk -v d="$1" '$1 == "mount" && $2 == d { print $7, $8, $9, $10, $11, $13 }' "$T/snap"; }
check_eq "the tmpfs in the snapshot: statvfs's blocks, free, available, files, free files, fragment size" \
	"$(statvfs "$RAM")" "$(numbers "$RAM")"
check_eq "the ext4 in the snapshot: statvfs's too" "$(statvfs "$EXT")" "$(numbers "$EXT")"
doctor_pid=$(traced_iolens "$T/strace")
askers() { statfs_askers "$T/strace" "$1"; }
check_eq "… the tmpfs asked by doctor itself (pid $doctor_pid), no child" "$doctor_pid " "$(askers "$RAM")"
check_eq "… the ext4 too" "$doctor_pid " "$(askers "$EXT")"
btrfs_askers=$(askers "$BTR")
check_match "the btrfs asked by a probe child ($btrfs_askers)" "^[0-9]+ $" "$btrfs_askers"
check "… not doctor itself" test "$btrfs_askers" != "$doctor_pid "
check_eq "… its numbers statvfs's" "$(statvfs "$BTR")" "$(numbers "$BTR")"

# ---- A tmpfs below a FUSE mount whose lookups take a minute -------------------------------------

stop_server() {
	[ -n "${SERVER:-}" ] || return 0
	# Killed, not asked: its lookups wait a minute each, one after another (one name); with it gone
	# the kernel ends every request it held, and the probes waiting on them end.
	kill -KILL "$SERVER" 2>/dev/null
	wait "$SERVER" 2>/dev/null
	umount -l "$MNT/sub" 2>/dev/null
	umount -l "$MNT" 2>/dev/null
	SERVER=
}
on_exit stop_server
# Names and attributes never cached (--timeout 0): each path through the mount asks the server.
"$FPT" --no-vtrace --timeout 0 --slow-op FUSE_LOOKUP:60000 "$SRC" "$MNT" 2>"$T/server.log" &
SERVER=$!
wait_mounted "$MNT" "$SERVER" || { not_ok "fuse-passthrough mounts: $(head -c 400 "$T/server.log")"; exit 1; }
mount -t tmpfs -o size=1m iolens-memfs-below "$MNT/sub" || { not_ok "mount -t tmpfs at $MNT/sub"; exit 1; }
kill -USR2 "$SERVER" # every FUSE_LOOKUP now takes a minute
# A stat of the tmpfs, made again until one waits on the server (the signal is taken in its own
# time); one waiting there cannot be killed until the server answers: it is left to wait.
STAT=
stat_waits() {
	if [ -z "$STAT" ] || ! kill -0 "$STAT" 2>/dev/null; then
		stat "$MNT/sub" >/dev/null 2>&1 &
		STAT=$!
		on_exit "kill -KILL $STAT 2>/dev/null"
	fi
	[ "$(cat "/proc/$STAT/wchan" 2>/dev/null)" = request_wait_answer ]
}
check "a stat of the tmpfs below it now waits on the server (its wchan: request_wait_answer)" wait_until 30 stat_waits

run timeout 50 "$IOLENS" doctor --json 1
check_match "doctor 1 ends all the same, with a warning or worse (exit $RC, not timeout's 124)" "^[34]$" "$RC"
check_eq "… the tmpfs below the FUSE mount does not answer: probed in a child, bounded" tmpfs \
	"$(dq get unresponsive type mount "$MNT/sub" <<<"$OUT")"
check_eq "… the test's own tmpfs answered (nothing said of it)" absent \
	"$(dq get unresponsive type mount "$RAM" <<<"$OUT")"

run timeout 50 "$IOLENS" record --doctor --dir "$T/store" --count 2 1
check_eq "record --doctor: two windows beside it, ended (exit $RC)" 0 "$RC"
run timeout 50 "$IOLENS" doctor --json --from -10m --record-dir "$T/store"
check_eq "… their windows say the tmpfs below it does not answer" tmpfs \
	"$(dq get unresponsive type mount "$MNT/sub" <<<"$OUT")"

# ---- A tmpfs covered by a FUSE mount whose statfs never answers ------------------------------------
# /proc/mounts still lists the tmpfs, but a stat of its mount point reaches the FUSE mount on top:
# asked in a child all the same.
COV=$T/covered
mkdir -p "$COV" "$T/src2"
mount -t tmpfs -o size=1m iolens-memfs-covered "$COV" || { not_ok "mount -t tmpfs at $COV"; exit 1; }
"$FPT" --no-vtrace --hang-op FUSE_STATFS --hang-all "$T/src2" "$COV" 2>"$T/server2.log" &
SERVER2=$!
# (the server killed: the statfs it holds ends; then both mounts go, the FUSE one first)
on_exit "kill -KILL $SERVER2 2>/dev/null; wait $SERVER2 2>/dev/null; umount -l '$COV' 2>/dev/null; umount -l '$COV' 2>/dev/null"
covered() { [ "$(awk -v d="$COV" '$5 == d' /proc/self/mountinfo | wc -l)" = 2 ]; }
check "a FUSE mount over the tmpfs at $COV (two mounts there, mountinfo)" wait_until 30 covered
run timeout 50 "$IOLENS" doctor --json 1
check_match "doctor 1 ends all the same, with a warning or worse (exit $RC, not timeout's 124)" "^[34]$" "$RC"
check_eq "… the tmpfs's line: asked in a child, which got no answer" tmpfs \
	"$(dq get unresponsive type mount "$COV" <<<"$OUT")"
kill -KILL "$SERVER2" 2>/dev/null

# ---- A recorder's later windows see a mount made after its first -----------------------------------
# (its mount table is kept between windows, read again when the kernel flags a change)
LATE=$T/late
mkdir -p "$LATE"
"$IOLENS" record --doctor --dir "$T/store2" --count 4 1 2>"$T/rec2.err" &
REC=$!
on_exit "kill $REC 2>/dev/null"
frames() { "$IOLENS" record --list --json --dir "$T/store2" 2>/dev/null |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["frames"])' 2>/dev/null || echo 0; }
two_windows() { [ "$(frames)" -ge 5 ]; } # the first system frame, then a window's and a system frame each
check "record --doctor: two windows recorded" wait_until 60 two_windows
mount -t tmpfs -o size=1m iolens-memfs-late "$LATE" || { not_ok "mount -t tmpfs at $LATE"; exit 1; }
on_exit "umount -l '$LATE'"
head -c 1M /dev/zero >"$LATE/fill" 2>/dev/null
check_eq "… a tmpfs mounted then, filled (df: 100 %)" 100% "$(df --output=pcent "$LATE" | tail -1 | tr -d ' ')"
wait "$REC"
check_eq "… the recorder ends (exit $?)" 0 "$?"
run "$IOLENS" doctor --json --from -10m --record-dir "$T/store2"
check_eq "… its later windows have the new mount: full" "$LATE" "$(dq get full mount mount "$LATE" <<<"$OUT")"

echo "1..$t_count"
