#!/usr/bin/env bash
# doctor_prjquota.sh: an ext4 is asked stat and statfs by doctor itself, but not one enforcing project quotas (mounted prjquota): its statfs of a root inheriting a project counts that project's quota, which may be read from the disk, and a probe child asks it (strace says which process asks).
# The mount lives in a mount namespace of the test's own. Project quotas need a kernel built with
# CONFIG_QUOTA (Debian's are: make check-kernels runs this in Debian 12's 6.1 and 6.12).
if [ -z "${DOCTOR_PRJQUOTA_NS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	DOCTOR_PRJQUOTA_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

is_root || skip_all "needs root (a loop device's mount)"
[ -n "${DOCTOR_PRJQUOTA_NS:-}" ] || skip_all "needs unshare (a mount namespace of the test's own)"
for tool in mkfs.ext4 chattr strace findmnt; do
	command -v $tool >/dev/null || skip_all "needs $tool (make test-deps)"
done

MNT=$T/mnt
FSPROBE=${BUILD:-$TOP/build}/tests/helpers/fsprobe
mkdir -p "$MNT"
truncate -s 16M "$T/fs.img"
mkfs.ext4 -q -F -O project,quota "$T/fs.img" >/dev/null 2>&1 || { not_ok "mkfs.ext4 -O project,quota"; exit 1; }
LOOP=$(loop_attach_apart "$T/fs.img") || skip_all "no free loop device"
on_exit 'umount "$MNT" 2>/dev/null' # (hooks run in order: unmounted, then the loop device let go)
on_exit 'loop_release "$LOOP" "$T/fs.img"'
mount -o prjquota "$LOOP" "$MNT" 2>"$T/mount.err" ||
	skip_all "this kernel cannot mount an ext4 with project quotas (no CONFIG_QUOTA): $(dmesg | tail -1)"
# Its root inherits project 7: what statfs would count the quota of.
chattr -p 7 +P "$MNT" || { not_ok "chattr -p 7 +P $MNT"; exit 1; }
# (a guest of make check-kernels sees the host's files through 9p: a network filesystem crossed)
crossed=$( { findmnt -n -o FSTYPE /; findmnt -n -o FSTYPE -T "$T"; } | grep -E '^(9p|nfs|cifs|smb|fuse|overlay|autofs)' | head -1)

askers() { statfs_askers "$T/strace" "$MNT"; }
doctor_asks() {
	run "${STATFS_TRACED[@]}" -o "$T/strace" "$IOLENS" doctor --record "$T/snap" 0
	doctor_pid=$(traced_iolens "$T/strace")
}

check_eq "mounted prjquota: /proc/self/mountinfo says so, as doctor reads it" "prjquota yes in-place no" \
	"$("$FSPROBE" "$MNT")"
doctor_asks
check_match "doctor 0 under strace (exit $RC)" "^[034]$" "$RC"
child=$(askers)
check_match "… asked by one probe child ($child)" "^[0-9]+ $" "$child"
check "… not doctor itself ($doctor_pid)" test "$child" != "$doctor_pid "
check_eq "… and answered (state 0 in the snapshot)" 0 "$(awk -v d="$MNT" '$1 == "mount" && $2 == d { print $5 }' "$T/snap")"

# The same filesystem mounted without the option: quotas counted, none enforced.
umount "$MNT" && mount "$LOOP" "$MNT" || { not_ok "mount $LOOP again without prjquota"; exit 1; }
if [ -n "$crossed" ]; then
	check_eq "mounted without prjquota: not said so; asked in a child, the way to it crossing $crossed" \
		"prjquota no in-place no" "$("$FSPROBE" "$MNT")"
	skip "… asked by doctor itself: the way to it crosses a $crossed mount, and so is asked in a child"
else
	check_eq "mounted without prjquota: asked in place" "prjquota no in-place yes" "$("$FSPROBE" "$MNT")"
	doctor_asks
	check_eq "… by doctor itself, no child" "$doctor_pid " "$(askers)"
fi
echo "1..$t_count"
