#!/usr/bin/env bash
# doctor_projinherit.sh: an ext4 is asked stat and statfs by doctor itself, but not while its root inherits a project (chattr +P) under project quotas: its statfs then counts the project's quota, which may be read from the disk, and a probe child asks it (strace says which process asks).
# The mount lives in a mount namespace of the test's own. Project quotas need a kernel built with
# CONFIG_QUOTA (Debian's are; this is also run in Debian 12's 6.1 and 6.12: make check-kernels).
if [ -z "${DOCTOR_PROJ_NS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	DOCTOR_PROJ_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

is_root || skip_all "needs root (a loop device's mount)"
[ -n "${DOCTOR_PROJ_NS:-}" ] || skip_all "needs unshare (a mount namespace of the test's own)"
for tool in mkfs.ext4 chattr strace; do
	command -v $tool >/dev/null || skip_all "needs $tool (make test-deps)"
done

MNT=$T/mnt
mkdir -p "$MNT"
truncate -s 16M "$T/fs.img"
mkfs.ext4 -q -F -O project,quota "$T/fs.img" >/dev/null 2>&1 || { not_ok "mkfs.ext4 -O project,quota"; exit 1; }
LOOP=$(loop_attach_apart "$T/fs.img") || skip_all "no free loop device"
on_exit 'umount "$MNT" 2>/dev/null' # (hooks run in order: unmounted, then the loop device let go)
on_exit 'loop_release "$LOOP" "$T/fs.img"'
mount -o prjquota "$LOOP" "$MNT" 2>"$T/mount.err" ||
	skip_all "this kernel cannot mount an ext4 with project quotas (no CONFIG_QUOTA): $(dmesg | tail -1)"
chattr -p 7 +P "$MNT" || { not_ok "chattr -p 7 +P $MNT"; exit 1; }
check_match "its root inherits project 7 (lsattr)" "^ *7 [^ ]*P" "$(lsattr -d -p "$MNT")"

# askers: the processes that asked the mount's statfs: by its path (the probe child), or on the
# directory opened (doctor itself: its flags read first, then fstat and fstatfs only if no +P).
askers() {
	awk -v s="statfs(\"$MNT\"," -v o="openat(AT_FDCWD, \"$MNT\", " \
		'index($0, s) || (index($0, o) && /O_DIRECTORY/) { print $1 }' "$T/strace" | sort -u | tr '\n' ' '
}
STRACED=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=execve,statfs,fstatfs,openat)
doctor_asks() {
	run "${STRACED[@]}" -o "$T/strace" "$IOLENS" doctor --record "$T/snap" 0
	doctor_pid=$(awk '/execve\(.*iolens/ { print $1; exit }' "$T/strace")
	in_doctor=$(awk -v d="statfs(\"$MNT\"," -v p="$doctor_pid" 'index($0, d) && $1 == p' "$T/strace")
	fstatfs=$(grep -c "^$doctor_pid fstatfs(" "$T/strace")
	child=$(awk -v d="statfs(\"$MNT\"," -v p="$doctor_pid" 'index($0, d) && $1 != p { print $1 }' "$T/strace" | sort -u)
}
doctor_asks
check_match "doctor 0 under strace (exit $RC)" "^[034]$" "$RC"
check_match "+P under project quotas: asked by a probe child ($(askers))" "^[0-9]+$" "$child"
check "… which is not doctor ($doctor_pid)" test "$child" != "$doctor_pid"
got=$(awk -v d="$MNT" '$1 == "mount" && $2 == d { print $5 }' "$T/snap")
check_eq "… and answered (state 0 in the snapshot)" 0 "$got"
# filesystem_probe_here alone, whatever the way to the mount crosses: declines while +P.
FSPROBE=${BUILD:-$TOP/build}/tests/helpers/fsprobe
check_eq "filesystem_probe_here declines the +P root (reads its flags, asks nothing)" child "$("$FSPROBE" "$MNT")"

chattr -P "$MNT"
doctor_asks
check_eq "without +P: answered" 0 "$(awk -v d="$MNT" '$1 == "mount" && $2 == d { print $5 }' "$T/snap")"
check_eq "… filesystem_probe_here asks it, with statvfs's blocks" "here 0 $(stat -f -c %b "$MNT")" "$("$FSPROBE" "$MNT")"
# (a guest of make check-kernels sees the host's files through 9p: a network filesystem crossed)
crossed=$( { findmnt -n -o FSTYPE /; findmnt -n -o FSTYPE -T "$T"; } | grep -E '^(9p|nfs|cifs|smb|fuse|overlay|autofs)' | head -1)
if [ -n "$crossed" ]; then
	skip "… asked by doctor itself: the way to it crosses a $crossed mount, and so is asked in a child"
else
	check_eq "… asked by doctor itself, no child" "$doctor_pid " "$(askers)"
fi
echo "1..$t_count"
