#!/usr/bin/env bash
# startup.sh: iolens does not link the libraries only some subcommands need (libmicrohttpd and gnutls, libyaml, libcrypt for export; ncurses for cachetop's full screen): it opens them with dlopen when they run, says so when one cannot be loaded, and every other subcommand runs without them.
. "$(dirname "$0")/lib.sh"

command -v ldd >/dev/null || skip_all "no ldd"

deps=$(ldd "$IOLENS" 2>&1)
for lib in libmicrohttpd libgnutls libyaml libcrypt libncursesw libtinfo; do
	check_no_match "ldd iolens: no $lib" "(^|[[:space:]])$lib[.-]" "$deps"
done

run "$IOLENS" export --once
check_eq "export --once: exit 0" 0 "$RC"
check_match "… the exposition" "# TYPE iolens_disk_io_time_seconds_total counter" "$OUT"

# A directory of broken libraries (empty files) that dlopen finds before the real ones.
broken=$T/broken
mkdir -p "$broken"
# The sonames the build wrote into iolens (the Makefile's MHD_SONAME...).
sonames=$(grep -aoE 'lib(microhttpd|yaml[^.]*|crypt|ncursesw)\.so\.[0-9]+' "$IOLENS" | sort -u)
check_eq "iolens names the 4 sonames it opens" 4 "$(wc -l <<<"$sonames")"
for so in $sonames; do : >"$broken/$so"; done
port=$((20000 + $$ % 20000))

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


# cachetop: ncurses for the full screen only.
is_root || { echo "1..$t_count"; exit 0; } # cachetop needs root (eBPF or /proc of every process)
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
