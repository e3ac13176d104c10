#!/usr/bin/env bash
# libvtrace.sh: libvtrace as a server's developer gets it: installed, found by pkg-config, linked static and shared.
. "$(dirname "$0")/lib.sh"

command -v pkg-config >/dev/null || skip_all "needs pkg-config"
dest=$T/dest
make -s -C "$TOP" install DESTDIR="$dest" PREFIX=/usr SANITIZE="${SANITIZE:-}" >/dev/null 2>&1
check "installed: the header" test -f "$dest/usr/include/vtrace.h"
check "installed: the static library" test -f "$dest/usr/lib/libvtrace.a"
check "installed: the shared library, with its soname" test -f "$dest/usr/lib/libvtrace.so.1" -a -L "$dest/usr/lib/libvtrace.so"
check "installed: the pkg-config file" test -f "$dest/usr/lib/pkgconfig/vtrace.pc"
export PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=$dest/usr/lib/pkgconfig
flags=$(pkg-config --cflags --libs vtrace)
check_match "pkg-config --cflags --libs vtrace" "-I$dest/usr/include .*-L$dest/usr/lib -lvtrace" "$flags"

cat > "$T/server.c" <<'C'
/* A server that counts its requests with libvtrace: the public API and nothing else. */
#include <stdio.h>
#include <vtrace.h>

int main(void)
{
	static const struct vtrace_op ops[] = { { "GET", 1 }, { "PUT", 2 } };
	struct vtrace *vt = vtrace_open("pkgtest", ops, 2, NULL);

	if (!vt)
		return 1;
	for (int i = 0; i < 100; i++) {
		struct vtrace_token t = vtrace_begin(vt, i % 2);
		vtrace_end(vt, t, 10, 0);
	}
	printf("%s\n", vtrace_path(vt));
	fflush(stdout);
	getchar(); /* until told to go */
	return vtrace_close(vt) != 0;
}
C
export VTRACE_DIR=$T/shm
mkdir -p "$VTRACE_DIR"
# The sanitizer build installs an instrumented library: programs linking it need the runtime.
san=
[ "${SANITIZE:-}" = 1 ] && san="-fsanitize=address,undefined"
# uninstalled: the build tree itself, through build/vtrace-uninstalled.pc (PKG_CONFIG_PATH=build).
uninstalled_pc() { env -u PKG_CONFIG_SYSROOT_DIR -u PKG_CONFIG_LIBDIR PKG_CONFIG_PATH="$BUILD" pkg-config "$@" vtrace; }
: "${BUILD:=$TOP/build}"
check_match "uninstalled: pkg-config finds the build tree's library and header" \
	"^-I$TOP/include -L$BUILD -lvtrace *\$" "$(uninstalled_pc --cflags --libs)"
for how in static shared uninstalled; do
	cflags=$(pkg-config --cflags vtrace) libdir=$dest/usr/lib
	case $how in
	static) libs="$dest/usr/lib/libvtrace.a -pthread" ;;
	shared) libs=$(pkg-config --libs vtrace) ;;
	uninstalled) cflags=$(uninstalled_pc --cflags) libs=$(uninstalled_pc --libs) libdir=$BUILD ;;
	esac
	if cc -std=c11 -Wall -Wextra -Werror $san $cflags -o "$T/server-$how" "$T/server.c" $libs; then
		ok "a server builds with the library ($how), -Wall -Wextra -Werror, C11"
	else
		not_ok "a server builds with the library ($how)"
		continue
	fi
	mkfifo "$T/go-$how"
	LD_LIBRARY_PATH=$libdir "$T/server-$how" < "$T/go-$how" > "$T/out-$how" &
	server=$!
	exec {go}>"$T/go-$how"
	for i in $(seq 50); do [ -s "$T/out-$how" ] && break; sleep 0.1; done
	run "$IOLENS" vstat --json pkgtest
	check_eq "vstat reads its counts ($how)" 100 "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["services"][0]["total"]["completions"])' "$OUT")"
	echo >&$go; exec {go}>&-
	wait $server
	check_eq "it closed cleanly, and its segment is gone ($how)" "0 0" "$? $(ls "$VTRACE_DIR" | wc -l)"
done
if [ -e "$dest/usr/lib/libvtrace.so.1" ]; then
	exported=$(nm -D --defined-only "$dest/usr/lib/libvtrace.so.1" | awk '$2 == "T" { print $3 }' | sort | tr '\n' ' ')
	declared=$(grep -oE '\bvtrace_[a-z_]+\(' "$TOP/include/vtrace.h" | tr -d '(' | sort -u | grep -v -e '_inline$' -e '^vtrace_now$' | tr '\n' ' ')
	check_eq "the shared library exports exactly the declared API" "$declared" "$exported"
fi
