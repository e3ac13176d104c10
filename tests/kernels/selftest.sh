#!/usr/bin/env bash
# selftest.sh: tests/kernels/run.sh keeps its word in KERNEL (default 6.1): the kernel of the package,
# the host's / read-only, a share and a scratch disk, the command's output and status, a stop in time.
. "$(dirname "$0")/../cli/lib.sh"
kernel=${KERNEL:-6.1}
runner=$TOP/tests/kernels/run.sh
is_root || skip_all "qemu's 9p shares of / need root"
command -v qemu-system-x86_64 >/dev/null || skip_all "no qemu-system-x86_64 (make test-deps)"
"$TOP/tests/kernels/fetch.sh" -q "$kernel" >"$T/release" 2>"$T/fetch.err" ||
	{ not_ok "fetch.sh $kernel: $(tail -n 1 "$T/fetch.err")"; echo "1..$t_count"; exit 1; }
kernels_dir=$TOP/build/kernels
dir=$kernels_dir/$(cat "$T/release")
# The truth for uname -r: the name of the package dpkg-deb unpacked, and its modules' directory.
package=$(cut -d' ' -f1 "$dir/package")
modules_release=$(ls "$dir/root/lib/modules")
# The run directories of other run.sh's (a guest of another test run here) are not this test's.
runs_before=$(ls -d "$kernels_dir"/run.* 2>/dev/null)

# guest ARGS...: run.sh with them; sets OUT, ERR (files) and RC.
guest() {
	"$runner" --quiet "$@" >"$T/out" 2>"$T/err"
	RC=$?
	OUT=$(cat "$T/out") ERR=$(cat "$T/err")
}
# fact NAME: the value of the line "NAME=VALUE" the guest printed.
fact() { sed -n "s/^$1=//p" <<<"$OUT" | head -n 1; }

# One boot that reports what it sees, writes to the share, says something on stderr and exits 7.
token=$RANDOM$RANDOM
mkdir -p "$T/share"
cat >"$T/share/facts.sh" <<EOF
echo release=\$(uname -r)
echo uid=\$(id -u)
echo cwd=\$PWD
echo token-$token >'$T/share/written'
touch '$TOP/.selftest-$token' 2>/dev/null && echo checkout=writable || echo checkout=read-only
echo tmp=\$(findmnt -n -o FSTYPE,SOURCE /tmp | tr -s ' ' ,)
dd if=/dev/urandom of=/tmp/direct bs=1M count=4 oflag=direct status=none &&
	dd if=/tmp/direct of=/dev/null bs=1M iflag=direct status=none && echo direct=ok
echo tracefs=\$(ls /sys/kernel/tracing | wc -l)
echo bpffs=\$(findmnt -n -o FSTYPE /sys/fs/bpf)
echo cgroup=\$(findmnt -n -o FSTYPE /sys/fs/cgroup)
echo loop=\$(grep -c '^loop ' /proc/modules)
mkdir /tmp/mnt && mount -t vfat /dev/null /tmp/mnt 2>/dev/null
echo vfat=\$(grep -cw vfat /proc/filesystems)
python3 -c 'import socket; s = socket.create_server(("127.0.0.1", 0)); socket.create_connection(s.getsockname())' &&
	echo loopback=ok
echo a line on stderr >&2
exit 7
EOF
cd "$TOP/tests" || exit 1
guest --share "$T/share" "$kernel" bash "$T/share/facts.sh"
cd "$TOP" || exit 1
check_eq "the command's exit status is run.sh's" 7 "$RC"
check_eq "uname -r in the guest is the package's ($package)" "${package#linux-image-}" "$(fact release)"
check_eq "… and its modules' directory" "$modules_release" "$(fact release)"
check_eq "the command runs as root" 0 "$(fact uid)"
check_eq "… in run.sh's directory, at its host path" "$TOP/tests" "$(fact cwd)"
check_eq "a file the guest wrote on the share is on the host" "token-$token" "$(cat "$T/share/written" 2>/dev/null)"
check_eq "the checkout is read-only in the guest" read-only "$(fact checkout)"
check "… and the host has no file it tried to make" test ! -e "$TOP/.selftest-$token"
check_eq "/tmp is ext4 on the virtio disk" ext4,/dev/vda "$(fact tmp)"
check_eq "… and O_DIRECT writes and reads there" ok "$(fact direct)"
check_eq "no tracefs mounted, as on a freshly booted machine" 0 "$(fact tracefs)"
check_eq "bpffs and cgroup2 mounted" "bpf cgroup2" "$(fact bpffs) $(fact cgroup)"
check_eq "the package's loop module loaded" 1 "$(fact loop)"
check_eq "the kernel loads a module it needs (vfat for a mount)" 1 "$(fact vfat)"
check_eq "the loopback interface is up: a TCP connection to 127.0.0.1" ok "$(fact loopback)"
check_eq "stderr is run.sh's stderr" "a line on stderr" "$ERR"
check_no_match "… not mixed into stdout" "on stderr" "$OUT"
check "the guest's console is kept on the share" test -s "$T/share/console.log"

guest --tracefs "$kernel" sh -c 'test -d /sys/kernel/tracing/events && echo tracefs=yes'
check_eq "--tracefs: tracefs mounted" "0 tracefs=yes" "$RC $OUT"

# A guest whose command never ends: stopped by the timeout, not waited for (sleep would take 600 s).
guest --timeout 20 "$kernel" sleep 600
check_eq "a hung guest is stopped at --timeout: exit 124" 124 "$RC"
check_match "… saying so" "still running after 20 s: stopped" "$ERR"

# A guest that panics: qemu ends at once (panic=-1, -no-reboot), no status.
guest "$kernel" sh -c 'echo c >/proc/sysrq-trigger; sleep 600'
check_eq "a guest that panics: exit 125" 125 "$RC"
check_match "… with its console from the panic on" "Kernel panic - not syncing: sysrq triggered crash" "$ERR"

ours=$(comm -13 <(echo "$runs_before") <(ls -d "$kernels_dir"/run.* 2>/dev/null))
check_eq "run.sh leaves no run directory behind" "" "$ours"
processes=$(ps -eo args)
running=$(grep -F "$kernels_dir/run." <<<"$processes")
for dir in $runs_before; do running=$(grep -vF "$dir/" <<<"$running"); done
check_eq "… no qemu running on them" "" "$running"
check_no_match "… nothing mounted from them on the host" "$kernels_dir" "$(cat /proc/mounts)"
echo "1..$t_count"
