#!/bin/bash
# guest.sh: PID 1 of a test guest (tests/kernels/run.sh), on the host's / shared read-only: mounts
# what a freshly booted Debian has, runs the job as root, writes its status, powers off.
#
# Kernel parameters (from run.sh): iolens.share=DIR, the host's directory shared writable and
# mounted at the same path (job, stdout, stderr and status are files there); iolens.modprobe=PATH,
# the package's modprobe; iolens.tracefs, mount tracefs and debugfs too (a fresh Debian here has
# neither: programs must cope). /tmp is ext4 on the virtio disk /dev/vda.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8

say() { echo "guest.sh: $*" >/dev/console; }
poweroff() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 60
}
fail() {
	say "$*"
	poweroff
}
arg() {
	local word
	for word in $(</proc/cmdline); do
		case $word in "$1"=*) echo "${word#*=}"; return ;; "$1") echo yes; return ;; esac
	done
}

mount -t proc proc /proc || { echo o >/proc/sysrq-trigger; exit 1; }
mount -t sysfs sysfs /sys
mount -t devtmpfs -o mode=755 devtmpfs /dev
exec </dev/null >/dev/console 2>&1
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=000 devpts /dev/pts
mount -t tmpfs -o nosuid,nodev tmpfs /dev/shm
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
mount -t tmpfs -o nosuid,nodev,mode=755 tmpfs /run
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
mount -t bpf -o mode=700 bpf /sys/fs/bpf
if [ -n "$(arg iolens.tracefs)" ]; then
	mount -t debugfs debugfs /sys/kernel/debug
	mount -t tracefs tracefs /sys/kernel/tracing
fi

# The kernel loads a module (a filesystem, a loop device) with the package's modules.
modprobe=$(arg iolens.modprobe)
[ -x "$modprobe" ] && echo "$modprobe" >/proc/sys/kernel/modprobe
# What udev would have loaded for the devices tests make (their /dev nodes appear with them).
for module in loop fuse; do "$modprobe" -q "$module"; done

# The loopback interface up, as networking's first step does: servers the tests start listen on it.
ip link set lo up 2>/dev/null || busybox ip link set lo up || say "the loopback interface did not come up"

mount -t ext4 /dev/vda /tmp || fail "the scratch disk /dev/vda did not mount on /tmp"
chmod 1777 /tmp
mkdir -p /tmp/root

share=$(arg iolens.share)
# A share under /tmp (a test's scratch directory) has its mount point made on the scratch disk.
[ -n "$share" ] && mkdir -p "$share" 2>/dev/null
[ -n "$share" ] && [ -d "$share" ] || fail "iolens.share=$share is not a directory"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share "$share" || fail "the share $share did not mount"
[ -r "$share/job" ] || fail "no job in $share"

HOME=/tmp/root TMPDIR=/tmp bash "$share/job" </dev/null >"$share/stdout" 2>"$share/stderr"
echo $? >"$share/status.tmp" && mv "$share/status.tmp" "$share/status"
# What the job left running goes with it.
kill -KILL -1 2>/dev/null
umount "$share" /tmp
poweroff
