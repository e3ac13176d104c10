#!/usr/bin/env bash
# cli.sh: the iolens command line: help, version, dispatch by command and by link name, installation.
. "$(dirname "$0")/lib.sh"

run "$IOLENS" --help
check_eq "iolens --help: exit 0" 0 "$RC"
help=$OUT
for cmd in pcstat evict warm vstat; do
	check_match "iolens --help lists $cmd" "^  $cmd " "$help"
	run "$IOLENS" "$cmd" --help
	check_eq "iolens $cmd --help: exit 0" 0 "$RC"
	check_match "iolens $cmd --help: a usage line" "^ iolens $cmd \[options\]" "$OUT"
	check_match "iolens $cmd --help: options" "^  -h, --help" "$OUT"
	check_match "iolens $cmd --help: examples" "^Examples:" "$OUT"
	check_match "iolens $cmd --help: where the rest is" "iolens $cmd --help-all" "$OUT"
	run "$IOLENS" "$cmd" --help-all
	check_match "iolens $cmd --help-all: columns" "^Columns" "$OUT"
	run "$IOLENS" "$cmd" --version
	check_match "iolens $cmd --version" "^iolens $cmd [0-9]+\.[0-9]+" "$OUT"
	run "$IOLENS" "$cmd" --no-such-option
	check_eq "iolens $cmd with an unknown option: exit 2" 2 "$RC"
	check_match "… and a pointer to --help" "Try 'iolens $cmd --help'" "$ERR"
done
run "$IOLENS" --version
check_match "iolens --version" "^iolens [0-9]+\.[0-9]+\.[0-9]+$" "$OUT"
run "$IOLENS"
check_eq "iolens alone: usage on stderr, exit 2" "2 yes" "$RC $(grep -q Usage <<<"$ERR" && echo yes)"
run "$IOLENS" frobnicate
check_eq "an unknown command: exit 2" 2 "$RC"
check_match "… said" "'frobnicate' is not a command" "$ERR"

# Installed: the binary, the man pages, and the links only when asked for.
dest=$T/dest
make -s -C "$TOP" install DESTDIR="$dest" PREFIX=/usr SANITIZE="${SANITIZE:-}" >/dev/null 2>&1
check "make install: the binary" test -x "$dest/usr/bin/iolens"
for page in iolens iolens-pcstat iolens-evict iolens-warm; do
	check "make install: man page $page.1" test -f "$dest/usr/share/man/man1/$page.1"
done
check "make install: man page iolens-vstat.1" test -f "$dest/usr/share/man/man1/iolens-vstat.1"
check "make install: man page vtrace.3, in man3" test -f "$dest/usr/share/man/man3/vtrace.3"
check "make install: no links unless asked" test ! -e "$dest/usr/bin/pcstat"
make -s -C "$TOP" install-links DESTDIR="$dest" PREFIX=/usr SANITIZE="${SANITIZE:-}" >/dev/null 2>&1
check "make install-links: pcstat" test -L "$dest/usr/bin/pcstat"
run "$dest/usr/bin/pcstat" --version
check_match "the installed link runs pcstat" "^pcstat [0-9]" "$OUT"

# README's main job is the diagnosis.
readme_main=$(awk '/^Build and run iolens.s main job/ { found = 1 } found && fence { print; exit } found && /^```sh/ { fence = 1 }' "$TOP/README.md")
check_match "README's main-job command builds and runs iolens doctor" "^make deps && make && \./iolens doctor" "$readme_main"

# README's test command is the one CI runs.
readme_test=$(awk '/^Build and pass every test/ { found = 1 } found && fence { print; exit } found && /^```sh/ { fence = 1 }' "$TOP/README.md")
check_eq "README's test command is what .ci/run runs" "$readme_test" "$(grep -m1 '^make ' "$TOP/.ci/run")"
