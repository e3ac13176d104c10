#!/usr/bin/env bash
# tests/kernels/run.sh: runs one command as root in another kernel, booted in qemu, and powers it off.
#
#   tests/kernels/run.sh [OPTIONS] KERNEL COMMAND [ARG...]
#   tests/kernels/run.sh 6.1 ./iolens cachestat 1 1
#
# KERNEL is a series of the matrix (5.10, 6.1, 6.12) or a Debian release (6.1.0-57-amd64), fetched into
# build/kernels/ by tests/kernels/fetch.sh the first time. The guest sees the host's / read-only
# (9p), so the command runs on this checkout and its build at their paths, in the directory run.sh
# was started from; /tmp is a fresh ext4 filesystem on a virtio disk (O_DIRECT, a block device),
# TMPDIR and HOME are there. The command's stdout and stderr are run.sh's; its exit status is
# run.sh's. A guest that does not end in time is stopped: exit 124; one that dies without a
# status (a panic): 125, with the end of its console. The guest keeps what it read of the host's
# files (9p cache=loose): rebuilding iolens while a guest runs it feeds it a torn binary.
#
# Options:
#   --timeout SECONDS   stop the guest after that long (default 1800)
#   --accel kvm|tcg     default: KVM when a guest runs on it here, else TCG (single-threaded)
#   --memory SIZE       the guest's memory (default 2G); --cpus N (default 2)
#   --disk SIZE         the scratch disk /tmp (default 4G, sparse)
#   --share DIR         a host directory (made if missing) the guest mounts writable at that path;
#                       job, stdout, stderr, status and console.log stay there after the run
#   --tracefs           mount tracefs and debugfs (a freshly booted Debian here has neither)
#   --quiet             no line about the guest's start and end on stderr
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${KERNELS_DIR:=$top/build/kernels}"

usage() { sed -n '3,4p' "$0" | sed 's/^# */usage: /' >&2; exit 2; }
die() { echo "run.sh: $*" >&2; exit 2; }

timeout=1800 accel=${KERNEL_ACCEL:-auto} memory=2G cpus=2 disk_size=4G share= tracefs= quiet=
while [ $# -gt 0 ]; do
	case $1 in
	--timeout) timeout=${2:-}; shift 2 ;;
	--accel) accel=${2:-}; shift 2 ;;
	--memory) memory=${2:-}; shift 2 ;;
	--cpus) cpus=${2:-}; shift 2 ;;
	--disk) disk_size=${2:-}; shift 2 ;;
	--share) share=${2:-}; shift 2 ;;
	--tracefs) tracefs=1; shift ;;
	--quiet) quiet=1; shift ;;
	--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || usage
case $timeout in '' | *[!0-9]*) die "--timeout: not a number of seconds: $timeout" ;; esac
case $accel in auto | kvm | tcg) ;; *) die "--accel: kvm, tcg or auto, not $accel" ;; esac
kernel=$1; shift
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing (make test-deps: qemu-system-x86)"
command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 is missing (make test-deps: e2fsprogs)"
# The guest's /tmp is its own disk, over the host's: a checkout or a directory under /tmp would be
# hidden from the command.
for path in "$(cd "$top" && pwd -P)" "$(pwd -P)"; do
	case $path/ in /tmp/*) die "$path is under /tmp, which the guest's own /tmp hides: run it from elsewhere" ;; esac
done

# The kernel: fetched once (a series resolves to the release build/kernels/SERIES points at).
dir=$KERNELS_DIR/$kernel
if [ ! -e "$dir/ready" ]; then
	"$here/fetch.sh" "$kernel" >/dev/null || exit 2
fi
dir=$(cd "$dir" && pwd -P)
release=$(basename "$dir")

# Everything of this run in one directory of the build tree, removed at the end (but a --share).
mkdir -p "$KERNELS_DIR"
run=$(mktemp -d "$KERNELS_DIR/run.XXXXXX") || die "cannot make a directory in $KERNELS_DIR"
qemu_pid= tails=()
cleanup() {
	# timeout(1) passes the signal on to qemu, and ends when qemu has.
	[ -n "$qemu_pid" ] && kill -TERM "$qemu_pid" 2>/dev/null && wait "$qemu_pid" 2>/dev/null
	local pid
	for pid in "${tails[@]}"; do kill "$pid" 2>/dev/null; done
	rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -n "$share" ]; then
	mkdir -p "$share" && share=$(cd "$share" && pwd -P) || die "--share: cannot make $share"
	rm -f "$share"/{job,stdout,stderr,status,console.log}
else
	share=$run/share
	mkdir "$share"
fi
console=$share/console.log

truncate -s "$disk_size" "$run/disk.img" || die "--disk: cannot make a disk of $disk_size"
mkfs.ext4 -q -F -L scratch "$run/disk.img" || die "mkfs.ext4 failed on $run/disk.img"

# The job: the command with its words quoted, in this directory.
{
	echo "# The command run.sh runs in $release."
	printf 'cd %q || exit 126\n' "$PWD"
	printf 'exec'; printf ' %q' "$@"; echo
} >"$share/job"

# qemu_args ACCEL: the machine. The kernel is booted through its ELF (PVH): no decompression,
# no BIOS boot loader.
qemu_args() {
	local accel_opts=$1 append
	# no_timer_check: under TCG on a busy host the kernel's check that the timer ticks through the
	# IO-APIC can time out, and it panics ("IO-APIC + timer doesn't work", seen with 6.1 here).
	append="console=ttyS0 quiet panic=-1 no_timer_check rdinit=/init iolens.init=$here/guest.sh iolens.share=$share"
	append+=" iolens.modprobe=$dir/modprobe${tracefs:+ iolens.tracefs}"
	printf '%s\n' -nodefaults -no-user-config -display none -no-reboot \
		-machine pc -accel "$accel_opts" -cpu max -smp "$cpus" -m "$memory" \
		-kernel "$dir/vmlinux" -initrd "$dir/initramfs.cpio" -append "$append" \
		-serial "file:$console" \
		-virtfs "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$share,mount_tag=share,security_model=none,multidevs=remap" \
		-drive "file=$run/disk.img,if=virtio,format=raw,cache=unsafe"
}

# kvm_works: whether a guest gets as far as its root on KVM here, remembered for this boot of
# the host (where KVM is nested it may not: qemu aborts, or the guest dies on an emulation failure).
kvm_works() {
	local memo=$KERNELS_DIR/kvm-works boot_id answer=no probe_log=$run/probe.log
	[ -w /dev/kvm ] || return 1
	boot_id=$(cat /proc/sys/kernel/random/boot_id)
	if [ -r "$memo" ] && [ "$(head -n 1 "$memo")" = "$boot_id" ]; then
		[ "$(sed -n 2p "$memo")" = yes ]
		return
	fi
	local args
	mapfile -t args < <(qemu_args kvm)
	args=("${args[@]/#file:$console/file:$probe_log}")
	args=("${args[@]/iolens.init=/iolens.probe iolens.init=}")
	# (in braces: bash's own word on a qemu that aborts, "Aborted", goes with the probe's output)
	{ timeout -k 5 20 qemu-system-x86_64 "${args[@]}" >/dev/null 2>&1 </dev/null; } 2>/dev/null
	grep -q '^iolens.probe: ok' "$probe_log" 2>/dev/null && answer=yes
	printf '%s\n%s\n' "$boot_id" "$answer" >"$memo"
	[ "$answer" = yes ]
}
if [ "$accel" = auto ]; then
	if kvm_works; then accel=kvm; else accel=tcg; fi
fi
# Under TCG one thread runs every CPU: thread=multi once oopsed a 6.12 guest under I/O here.
accel_opts=kvm
[ "$accel" = tcg ] && accel_opts=tcg,thread=single
mapfile -t args < <(qemu_args "$accel_opts")

began=$SECONDS
[ -n "$quiet" ] || echo "run.sh: $release ($accel): $*" >&2
: >"$share/stdout"; : >"$share/stderr"
timeout -k 10 "$timeout" qemu-system-x86_64 "${args[@]}" </dev/null >"$run/qemu.log" 2>&1 &
qemu_pid=$!
# The command's output as the guest writes it; each tail reads to the end once qemu is gone.
tail -q -n +1 --pid="$qemu_pid" -f "$share/stdout" & tails+=($!)
tail -q -n +1 --pid="$qemu_pid" -f "$share/stderr" >&2 & tails+=($!)
wait "$qemu_pid"
qemu_status=$?
qemu_pid=
wait "${tails[@]}"
tails=()
took=$((SECONDS - began))

if [ -r "$share/status" ]; then
	status=$(cat "$share/status")
	[ -n "$quiet" ] || echo "run.sh: $release ($accel): exit $status after $took s" >&2
	exit "$status"
fi
if [ "$qemu_status" = 124 ] || [ "$qemu_status" = 137 ]; then
	echo "run.sh: $release ($accel): still running after $timeout s: stopped" >&2
	status=124
else
	echo "run.sh: $release ($accel): the guest ended without a status (qemu: exit $qemu_status$(
		[ -s "$run/qemu.log" ] && echo ", $(tail -n 1 "$run/qemu.log")"))" >&2
	status=125
fi
# From the first sign of trouble (a panic's reason comes before its stack), else the end.
first=$(grep -nE 'Kernel panic|BUG:|Oops|general protection|initramfs:|guest\.sh:' "$console" 2>/dev/null |
	head -n 1 | cut -d: -f1)
if [ -n "$first" ]; then
	echo "run.sh: its console:" >&2
	sed -n "$first,$((first + 29))p" "$console" | sed 's/^/    /' >&2
else
	echo "run.sh: the end of its console:" >&2
	tail -n 30 "$console" 2>/dev/null | sed 's/^/    /' >&2
fi
exit "$status"
