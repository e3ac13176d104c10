#!/usr/bin/env bash
# startup.sh: iolens does not link the libraries only some subcommands need (libmicrohttpd and gnutls, libyaml, libcrypt for export; ncurses for cachetop's full screen; liburing and libblkid for bench; libbpf and libelf for the eBPF collectors): it opens them with dlopen when they run, says so when one cannot be loaded, and every other subcommand runs without them.
. "$(dirname "$0")/lib.sh"

command -v ldd >/dev/null || skip_all "no ldd"

deps=$(ldd "$IOLENS" 2>&1)
# (Under SANITIZE=1 the sanitizers' runtime, libasan and libstdc++, needs libm itself: there libm
# is neither checked nor broken below.)
libm=libm
[ "${SANITIZE:-}" = 1 ] && libm=
for lib in libmicrohttpd libgnutls libyaml libcrypt libncursesw libtinfo liburing libblkid libbpf libelf \
	libjson-c libz $libm; do
	check_no_match "ldd iolens: no $lib" "(^|[[:space:]])$lib[.-]" "$deps"
done

run "$IOLENS" export --once
check_eq "export --once: exit 0" 0 "$RC"
check_match "… the exposition" "# TYPE iolens_disk_io_time_seconds_total counter" "$OUT"

# A directory of broken libraries (empty files) that dlopen finds before the real ones.
broken=$T/broken
mkdir -p "$broken"
# The sonames the build wrote into iolens (the Makefile's MHD_SONAME...).
sonames=$(grep -aoE 'lib(microhttpd|yaml[^.]*|crypt|ncursesw|uring|blkid|bpf)\.so\.[0-9]+' "$IOLENS" | sort -u)
check_eq "iolens names the 7 sonames it opens" 7 "$(wc -l <<<"$sonames")"
for so in $sonames; do : >"$broken/$so"; done
port=$(free_port)

LD_LIBRARY_PATH=$broken run "$IOLENS" export --listen "127.0.0.1:$port"
check_eq "export with a broken libmicrohttpd: exit 1" 1 "$RC"
check_match "… said: iolens export needs libmicrohttpd" "^iolens export needs libmicrohttpd\.so\.[0-9]+: .+" "$ERR"
LD_LIBRARY_PATH=$broken run "$IOLENS" export --once
check_eq "… export --once does not need it: exit 0" 0 "$RC"
printf 'basic_auth_users:\n' >"$T/web.yml"
LD_LIBRARY_PATH=$broken run "$IOLENS" export --once --web.config.file "$T/web.yml"
check_eq "export --web.config.file with a broken libyaml: exit 1" 1 "$RC"
check_match "… said: iolens export needs libyaml" "^iolens export needs libyaml[^:]*\.so\.[0-9]+: .+" "$ERR"
run "$IOLENS" export --once --web.config.file "$T/web.yml"
check_eq "… with the real one: exit 0" 0 "$RC"

LD_LIBRARY_PATH=$broken run "$IOLENS" pcstat /bin/ls
check_eq "pcstat runs without them: exit 0" 0 "$RC"
check_match "… and prints /bin/ls" "/bin/ls" "$OUT"
LD_LIBRARY_PATH=$broken run "$IOLENS" stat -d 1 1
check_eq "stat -d 1 1 too: exit 0" 0 "$RC"

# json-c, zlib and libm: opened at the first JSON value, gzip answer or logarithm (json_dl.c, libm.c).
broken_json=$T/broken-json
mkdir -p "$broken_json"
for so in libjson-c.so.5 libz.so.1 ${libm:+libm.so.6}; do : >"$broken_json/$so"; done
LD_LIBRARY_PATH=$broken_json run "$IOLENS" pcstat /bin/ls
check_eq "pcstat's table with a broken json-c, zlib and libm: exit 0" 0 "$RC"
check_match "… and prints /bin/ls" "/bin/ls" "$OUT"
LD_LIBRARY_PATH=$broken_json run "$IOLENS" pcstat --csv /bin/ls
check_eq "… its CSV too: exit 0" 0 "$RC"
LD_LIBRARY_PATH=$broken_json run "$IOLENS" pcstat --json /bin/ls
check_eq "pcstat --json with a broken json-c: exit 1" 1 "$RC"
check_match "… said: iolens pcstat needs libjson-c" "^iolens pcstat needs libjson-c\.so\.[0-9]+: .+" "$ERR"
run "$IOLENS" pcstat --json /bin/ls
check_eq "… with the real one: exit 0" 0 "$RC"
check_match "… and the document" '"name": "/bin/ls"' "$OUT"


# bench: liburing for the io_uring engine only, libblkid to write a block device only.
mkdir -p "$T/bench"
LD_LIBRARY_PATH=$broken run "$IOLENS" bench --bs 4k --size 1m --json "$T/bench"
check_eq "bench (psync, a file) without liburing and libblkid: exit 0" 0 "$RC"
LD_LIBRARY_PATH=$broken run "$IOLENS" bench --qd 4 --bs 4k --size 1m --json "$T/bench"
check_eq "bench --qd 4 (io_uring) with a broken liburing: exit 1" 1 "$RC"
check_match "… said: iolens bench needs liburing" "^iolens bench needs liburing\.so\.[0-9]+: .+" "$ERR"
run "$IOLENS" bench --qd 4 --bs 4k --size 1m --json "$T/bench"
check_eq "… with the real one: exit 0" 0 "$RC"
loop=
if is_root && command -v losetup >/dev/null; then
	truncate -s 8m "$T/disk.img"
	loop=$(losetup -f --show "$T/disk.img" 2>/dev/null)
fi
if [ -n "$loop" ]; then
	on_exit "loop_release $loop $T/disk.img"
	LD_LIBRARY_PATH=$broken run "$IOLENS" bench --rw write --bs 64k --size 1m --force "$loop"
	check_eq "bench --force writing a device with a broken libblkid: exit 1" 1 "$RC"
	check_match "… not written, said why" "cannot look for a filesystem signature \(libblkid\.so\.[0-9]+: .+\): not written" "$ERR"
	run "$IOLENS" bench --rw write --bs 64k --size 1m --force --json "$loop"
	check_eq "… with the real one: written" 0 "$RC"
else
	skip "no loop device (root and losetup)"
fi

# cachetop: ncurses for the full screen only.
is_root || { echo "1..$t_count"; exit 0; } # cachetop needs root (eBPF or /proc of every process)

# The eBPF collectors: libbpf when a program is loaded; without it, what each does without eBPF, said.
LD_LIBRARY_PATH=$broken run "$IOLENS" cachestat 0.2 1
check_eq "cachestat with a broken libbpf: its /proc/vmstat estimates, exit 0" 0 "$RC"
check_match "… says libbpf cannot be loaded" "no eBPF \(libbpf cannot be loaded: install it \(Debian: libbpf1\)\)" "$ERR"
LD_LIBRARY_PATH=$broken run "$IOLENS" cachestat -v 0.2 1
check_match "… and with -v, what the loader said" "eBPF: libbpf\.so\.[0-9]+: .+" "$ERR"
check_match "… and prints a line" "HITS" "$OUT"
LD_LIBRARY_PATH=$broken run "$IOLENS" stat --cache 0.2 2
check_eq "stat --cache with a broken libbpf: exit 1, as without eBPF" 1 "$RC"
check_match "… says why pages added are unknown" "pages added and removed are unknown \('-'\): libbpf cannot be loaded" "$ERR"
LD_LIBRARY_PATH=$broken run "$IOLENS" doctor 1
check_match "doctor with a broken libbpf: says it estimates instead, and why" "no eBPF \(libbpf cannot be loaded.*\): estimating from /proc" "$ERR"
run "$IOLENS" cachestat 0.2 1
check_no_match "cachestat with the real libbpf: no such message" "libbpf cannot be loaded" "$ERR"
LD_LIBRARY_PATH=$broken run "$IOLENS" cachetop 0.2 1
check_eq "piped cachetop runs without ncurses: exit 0" 0 "$RC"
check_no_match "… and does not try it" "ncurses" "$ERR"
if command -v script >/dev/null; then
	printf q | LD_LIBRARY_PATH=$broken TERM=xterm script -qfec "$IOLENS cachetop 0.2 1" /dev/null >"$T/screen" 2>&1
	check_eq "cachetop on a terminal with a broken ncurses: exit 0" 0 "$?"
	check_match "… says there is no full screen, and why" "no full screen: libncursesw\.so\.[0-9]+: " "$(cat "$T/screen")"
	check_match "… and prints the lines" "PID|COMM" "$(cat "$T/screen")"
else
	skip "script(1) is not installed"
fi

echo "1..$t_count"
