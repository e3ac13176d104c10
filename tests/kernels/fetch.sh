#!/usr/bin/env bash
# tests/kernels/fetch.sh: Debian's kernels of the test matrix, from packages, into build/kernels/ (never /boot).
#
#   tests/kernels/fetch.sh [-q] KERNEL...      KERNEL: a series (6.1, 6.12) or a release (6.1.0-57-amd64)
#   tests/kernels/fetch.sh --download DIR KERNEL PACKAGE...
#                                              other packages of KERNEL's Debian release into DIR
#                                              (bench/kernels.sh: its linux-headers, for bcc)
#
# A series means the newest linux-image-SERIES...-ARCH package apt's lists have now (6.1.0-N-amd64
# in Debian 12, 6.12.N+deb12-amd64 from bookworm-security): the archive drops old point releases, so
# none is written down here. Each is downloaded with apt-get download (checked against apt's signed
# lists), unpacked with dpkg-deb -x under build/kernels/RELEASE/root, and made bootable:
#   vmlinux          the ELF inside the bzImage, which qemu boots directly (PVH): about 12 s to
#                    power-off under TCG against about 30 s for the compressed image
#   initramfs.cpio   busybox and the modules that mount the root: virtio, 9p, ext4 (tests/kernels/init)
#   modprobe         modprobe for the guest, with the package's modules (the host has none of them)
# build/kernels/SERIES is a link to the release it chose. Prints the release of each KERNEL.
#
# 5.10 is Debian 11's (bullseye, and bullseye-security), which this machine's apt does not list:
# it comes through an apt configuration of the project's own, build/kernels/apt/bullseye (its
# sources, lists and cache, the archive checked with Debian's keyring from debian-archive-keyring),
# never /etc/apt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${KERNELS_DIR:=$top/build/kernels}"
quiet= download=
[ "${1:-}" = -q ] && { quiet=1; shift; }
[ "${1:-}" = --download ] && [ $# -ge 4 ] && { download=$2; shift 2; }
[ $# -gt 0 ] || { echo "usage: tests/kernels/fetch.sh [-q] KERNEL... | --download DIR KERNEL PACKAGE..." >&2; exit 2; }

say() { [ -n "$quiet" ] || echo "fetch.sh: $*" >&2; }
die() { echo "fetch.sh: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null || die "$1 is missing (make test-deps: $2)"; }
need apt-get apt; need dpkg-deb dpkg; need depmod kmod; need cpio cpio; need xz xz-utils
[ -x /bin/busybox ] && ! readelf -l /bin/busybox 2>/dev/null | grep -q 'program interpreter' ||
	die "/bin/busybox is not a static busybox (make test-deps: busybox-static)"

arch=$(dpkg --print-architecture)
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# codename_of KERNEL: the older Debian release a series or release comes from, or nothing when
# this machine's own apt lists have it.
codename_of() {
	case $1 in
	5.10 | 5.10.*) echo bullseye ;;
	esac
}

# apt_for KERNEL: sets apt_options, the options that point apt-get and apt-cache at the lists of
# the release KERNEL comes from (none: this machine's). Such a release's configuration is made,
# and its lists fetched, the first time.
apt_options=()
apt_for() {
	local codename root
	codename=$(codename_of "$1")
	apt_options=()
	[ -n "$codename" ] || return 0
	[ -r "$keyring" ] || die "$keyring is missing (make test-deps: debian-archive-keyring)"
	root=$KERNELS_DIR/apt/$codename
	mkdir -p "$root"/{sources.list.d,preferences.d,lists/partial,cache/archives/partial}
	printf 'deb [signed-by=%s] http://deb.debian.org/%s %s main\n' \
		"$keyring" debian "$codename" "$keyring" debian-security "$codename-security" >"$root/sources.list"
	# Only this configuration's sources, lists, cache and pins; apt's sandbox user may not reach
	# the build tree, where root alone writes.
	apt_options=(-o "Dir::Etc::SourceList=$root/sources.list" -o "Dir::Etc::SourceParts=$root/sources.list.d"
		-o "Dir::Etc::Preferences=$root/preferences" -o "Dir::Etc::PreferencesParts=$root/preferences.d"
		-o "Dir::State::Lists=$root/lists" -o "Dir::Cache=$root/cache" -o "APT::Sandbox::User=root")
	if [ ! -e "$root/updated" ]; then
		say "$codename: apt-get update (its own lists, in $root)"
		apt-get "${apt_options[@]}" update -qq >"$root/update.log" 2>&1 ||
			die "$codename: apt-get update failed: $(tail -n 1 "$root/update.log")"
		touch "$root/updated"
	fi
}
# The modules that mount the root and the scratch disk, loaded by the initramfs in this order with
# what they depend on (a module built into the kernel needs nothing).
INITRAMFS_MODULES="virtio_pci virtio_blk 9pnet_virtio 9p ext4"

# release_of KERNEL: the release (uname -r) of the newest package of that series, or KERNEL itself.
release_of() {
	local kernel=$1 pattern
	case $kernel in
	*-"$arch") echo "$kernel"; return ;;
	[0-9]*.[0-9]*) ;;
	*) die "$kernel: not a kernel series (6.1) nor a release (6.1.0-57-$arch)" ;;
	esac
	# 6.1.0-57-amd64 (Debian's ABI numbers), 6.12.118+deb12-amd64 (a backported series).
	pattern="^linux-image-${kernel//./\\.}(\\.0-[0-9]+|\\.[0-9]+\\+deb[0-9]+)-$arch\$"
	apt-cache "${apt_options[@]}" search --names-only "$pattern" 2>/dev/null | awk '{ print $1 }' | grep -E "$pattern" |
		sed 's/^linux-image-//' | sort -V | tail -n 1 || true
}

# payload VMLINUZ OUT: the kernel ELF out of a bzImage. The boot header says where the compressed
# kernel is (setup_sects at 0x1f1, payload_offset and payload_length at 0x248); the kernel's build
# appends the uncompressed size (little endian) to every format but gzip, whose own trailer ends
# with it: the size the result is held to.
payload() {
	local image=$1 out=$2 setup offset length magic decode strip=4 want got
	[ "$(od -An -c -j $((0x202)) -N 4 "$image" | tr -d ' ')" = HdrS ] || die "$image: not a bzImage"
	setup=$(od -An -t u1 -j $((0x1f1)) -N 1 "$image")
	[ "$setup" -eq 0 ] && setup=4
	read -r offset length < <(od -An -t u4 -j $((0x248)) -N 8 "$image")
	offset=$(((setup + 1) * 512 + offset))
	magic=$(od -An -t x1 -j "$offset" -N 6 "$image" | tr -d ' \n')
	case $magic in
	1f8b*) decode="gzip -dc"; strip=0 ;;
	fd377a585a00) decode="xz -dc" ;;
	28b52ffd*) need zstd zstd; decode="zstd -dcq" ;;
	5d0000*) decode="xz -dc --format=lzma" ;;
	425a68*) decode="bzip2 -dc" ;;
	02214c18*) need lz4 lz4; decode="lz4 -dc" ;;
	*) die "$image: a kernel compressed with an unknown format (magic $magic)" ;;
	esac
	dd if="$image" bs=1M iflag=skip_bytes,count_bytes skip="$offset" count=$((length - strip)) status=none |
		$decode >"$out.tmp" ||
		die "$image: $decode failed"
	want=$(od -An -t u4 -j $((offset + length - 4)) -N 4 "$image" | tr -d ' ')
	got=$(($(stat -c %s "$out.tmp") % 4294967296))
	[ "$got" = "$want" ] || die "$image: the kernel inside is $got bytes, its header says $want"
	[ "$(od -An -c -N 4 "$out.tmp" | tr -d ' ')" = '177ELF' ] || die "$image: no ELF inside"
	mv "$out.tmp" "$out"
}

# initramfs DIR RELEASE: busybox, tests/kernels/init and the modules, as DIR/initramfs.cpio.
initramfs() {
	local dir=$1 release=$2 staging=$1/initramfs line module
	rm -rf "$staging"
	mkdir -p "$staging"/{bin,dev,proc,sys,newroot,modules}
	cp /bin/busybox "$staging/bin/busybox"
	cp "$here/init" "$staging/init"
	# modprobe prints "insmod PATH" for each module to load, in order (dependencies first), and
	# "builtin NAME" for one built in.
	modprobe -d "$dir/root" -S "$release" -a --show-depends $INITRAMFS_MODULES >"$dir/initramfs.order" ||
		die "$release: modprobe found no $INITRAMFS_MODULES"
	: >"$staging/modules/order"
	while read -r line; do
		set -- $line
		[ "$1" = insmod ] || continue
		module=$(basename "$2"); module=${module%%.ko*}.ko
		grep -qx "$module" "$staging/modules/order" && continue
		case $2 in
		*.ko.xz) xz -dc "$2" >"$staging/modules/$module" ;;
		*.ko.zst) zstd -dcq "$2" >"$staging/modules/$module" ;;
		*.ko.gz) gzip -dc "$2" >"$staging/modules/$module" ;;
		*) cp "$2" "$staging/modules/$module" ;;
		esac
		echo "$module" >>"$staging/modules/order"
	done <"$dir/initramfs.order"
	(cd "$staging" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$dir/initramfs.cpio.tmp"
	mv "$dir/initramfs.cpio.tmp" "$dir/initramfs.cpio"
	rm -rf "$staging"
}

# fetch RELEASE: build/kernels/RELEASE, made once; "ready" says it is whole.
fetch() {
	local release=$1 dir=$KERNELS_DIR/$1 package=linux-image-$1 deb
	[ -e "$dir/ready" ] && [ "$dir/ready" -nt "$here/init" ] && [ "$dir/ready" -nt "$0" ] && return 0
	rm -rf "$dir"
	mkdir -p "$dir/download"
	say "$package: downloading"
	# A list that names a point release the archive has dropped since: update it once, try again.
	if ! (cd "$dir/download" && apt-get "${apt_options[@]}" download -q "$package" >/dev/null 2>"$dir/download/err"); then
		say "$package: apt-get download failed ($(tail -n 1 "$dir/download/err")); apt-get update"
		apt-get "${apt_options[@]}" update -qq >/dev/null 2>&1 || true
		(cd "$dir/download" && apt-get "${apt_options[@]}" download -q "$package" >/dev/null 2>"$dir/download/err") ||
			die "$package: apt-get download: $(tail -n 1 "$dir/download/err")"
	fi
	deb=$(ls "$dir"/download/"$package"_*.deb)
	echo "$package $(dpkg-deb -f "$deb" Version)" >"$dir/package"
	dpkg-deb -x "$deb" "$dir/root"
	rm -rf "$dir/download"
	[ -d "$dir/root/lib/modules/$release" ] || die "$package: no lib/modules/$release inside"
	depmod -b "$dir/root" "$release"
	payload "$dir/root/boot/vmlinuz-$release" "$dir/vmlinux"
	initramfs "$dir" "$release"
	printf '#!/bin/sh\n# modprobe with %s modules, for the guest (the kernel runs it to load a module).\nexec /sbin/modprobe -d %s "$@"\n' \
		"$package" "$dir/root" >"$dir/modprobe"
	chmod +x "$dir/modprobe"
	touch "$dir/ready"
	say "$package: $(cut -d' ' -f2 "$dir/package") in $dir"
}

mkdir -p "$KERNELS_DIR"
if [ -n "$download" ]; then
	apt_for "$1"
	shift
	cd "$download" && exec apt-get "${apt_options[@]}" download -q "$@"
fi
for kernel in "$@"; do
	apt_for "$kernel"
	release=$(release_of "$kernel")
	[ -n "$release" ] || die "$kernel: no linux-image-$kernel*-$arch package in apt's lists (apt-get update; Debian 12 has 6.1, and 6.12 in bookworm-security; 5.10 is Debian 11's)"
	fetch "$release"
	if [ "$kernel" != "$release" ]; then
		# The release the series meant before, if another: its room given back.
		old=$(readlink "$KERNELS_DIR/$kernel" 2>/dev/null || true)
		ln -sfn "$release" "$KERNELS_DIR/$kernel"
		[ -n "$old" ] && [ "$old" != "$release" ] && [ "${old#*/}" = "$old" ] && rm -rf "${KERNELS_DIR:?}/$old"
	fi
	echo "$release"
done
