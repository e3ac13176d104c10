#!/usr/bin/env bash
# man.sh: the man pages stay in step with --help and vtrace.h: every command, long option, column id and libvtrace call is documented, and each page renders cleanly.
: "${IOLENS:=$(cd "$(dirname "$0")/../.." && pwd)/iolens}"
. "$(dirname "$0")/lib.sh"
: "${DOCS:=$TOP/docs}"

# roff source as plain text: \- and \(hy are hyphens; font changes, \& and \% vanish.
roff_text() {
	sed -e 's/\\f\[[^]]*\]//g' -e 's/\\f(..//g' -e 's/\\f.//g' \
	    -e 's/\\-/-/g' -e 's/\\(hy/-/g' -e 's/\\\[hy\]/-/g' -e 's/\\[&%]//g' "$1"
}

# section NAME: the lines of one .SH section of normalised roff on stdin.
section() {
	awk -v name="$1" '/^\.SH/ { s = $0; sub(/^\.SH +/, "", s); gsub(/"/, "", s); inside = (s == name); next } inside'
}

# The tags of the tagged paragraphs (.TP) on stdin, one per line, macro left out.
tp_tags() {
	awk 'tag { sub(/^\.[A-Z]+ +/, ""); gsub(/"/, ""); print; tag = 0; next } /^\.TP/ { tag = 1 }'
}

# has_word WORD TEXT: WORD appears, not as part of a longer option or id.
has_word() {
	local word=${1//./\\.}
	grep -qE -- "(^|[^-[:alnum:]_])$word([^-[:alnum:]_]|$)" <<<"$2"
}

# Every long option in --help, wherever it is mentioned (options, columns, examples), however
# many one line names ("      --tcp --udp --unix --socket --raw   sockets").
help_long_options() { grep -oE -- '--[a-z][a-z0-9-]*' <<<"$1" | sort -u; }
# The short options of --help: those that start an option line ("  -c, --cpu", "  -C LIST").
help_short_options() { sed -n 's/^  \(-[A-Za-z]\)[, ].*/\1/p; s/^  \(-[A-Za-z]\)$/\1/p' <<<"$1" | sort -u; }
# The column ids in --help, with a * before those shown by default.
help_columns() {
	awk '/^Columns/ { c = 1; next } c && /^$/ { exit } c' <<<"$1" |
		sed -n 's/^ \([* ]\)\([a-z_][a-z0-9_]*\) .*/\1\2/p' | tr ' ' '-'
}

# Each page renders without a warning.
for page in iolens.1 iolens-bench.1 iolens-cachestat.1 iolens-cachetop.1 iolens-biotop.1 iolens-doctor.1 iolens-export.1 iolens-pcstat.1 iolens-evict.1 iolens-warm.1 iolens-vstat.1 iolens-stat.1 iolens-version.1 iolens-iostat.1 vtrace.3; do
	f=$DOCS/$page
	if [ ! -f "$f" ]; then
		not_ok "docs/$page exists"
		continue
	fi
	if command -v groff >/dev/null; then
		warnings=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
		check_eq "docs/$page: groff -ww renders it without warnings" "" "$warnings"
	else
		skip "docs/$page: groff is not installed"
	fi
	if command -v man >/dev/null; then
		warnings=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
		check_eq "docs/$page: man --warnings renders it without warnings" "" "$warnings"
	else
		skip "docs/$page: man is not installed"
	fi
done

# iolens.1 lists every command that iolens --help lists, and no other.
run "$IOLENS" --help
commands=$(awk '/^Commands:/ { c = 1; next } c && /^$/ { exit } c { print $1 }' <<<"$OUT")
if [ -z "$commands" ]; then
	not_ok "iolens --help lists commands (none found: has its format changed?)"
fi
overview=$(roff_text "$DOCS/iolens.1")
documented=$(section COMMANDS <<<"$overview" | tp_tags | awk '{ print $1 }')
see_also=$(section "SEE ALSO" <<<"$overview")
for cmd in $commands; do
	check "iolens.1 describes command $cmd under COMMANDS" has_word "$cmd" "$documented"
	check "iolens.1 refers to iolens-$cmd(1) under SEE ALSO" has_word "iolens-$cmd" "$see_also"
done
extra=$(for cmd in $documented; do has_word "$cmd" "$commands" || echo "$cmd"; done)
check_eq "iolens.1 describes only commands that iolens --help lists" "" "$(echo $extra)"

for cmd in $commands; do
	f=$DOCS/iolens-$cmd.1
	if [ ! -f "$f" ]; then
		not_ok "docs/iolens-$cmd.1 exists for iolens $cmd"
		continue
	fi
	run "$IOLENS" "$cmd" --help-all
	help=$OUT
	page=$(roff_text "$f")
	options_section=$(section OPTIONS <<<"$page")
	columns_section=$(section "OUTPUT COLUMNS" <<<"$page")

	# Every long option of --help, under OPTIONS; every option documented there, in --help.
	options=$(help_long_options "$help")
	[ -n "$options" ] || not_ok "iolens $cmd --help shows long options (none found)"
	for opt in $options; do
		check "iolens-$cmd.1 documents $opt under OPTIONS" has_word "$opt" "$options_section"
	done
	extra=$(for opt in $(tp_tags <<<"$options_section" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
		has_word "$opt" "$options" || echo "$opt"
	done)
	check_eq "iolens-$cmd.1 documents no option that iolens $cmd --help lacks" "" "$(echo $extra)"
	# And every short option, under OPTIONS too.
	for opt in $(help_short_options "$help"); do
		check "iolens-$cmd.1 documents $opt under OPTIONS" has_word "$opt" "$options_section"
	done

	# Every column id of --help, under OUTPUT COLUMNS, marked (default) as --help marks it; and no other.
	# A command without -o (stat: dstat's groups, chosen by options; cachestat and cachetop:
	# fixed columns explained in prose) documents its columns in its own sections.
	if ! grep -qE '^ +-o, --output' <<<"$help"; then
		continue
	fi
	columns=$(help_columns "$help")
	[ -n "$columns" ] || not_ok "iolens $cmd --help lists columns (none found)"
	tags=$(tp_tags <<<"$columns_section")
	for entry in $columns; do
		id=${entry#?}
		tag=$(awk -v id="$id" '$1 == id' <<<"$tags")
		if [ -z "$tag" ]; then
			not_ok "iolens-$cmd.1 documents column $id under OUTPUT COLUMNS"
			continue
		fi
		ok "iolens-$cmd.1 documents column $id under OUTPUT COLUMNS"
		want=no; [ "${entry:0:1}" = "*" ] && want=yes
		got=no; grep -q '(default)' <<<"$tag" && got=yes
		check_eq "iolens-$cmd.1: column $id shown by default: as in --help" "$want" "$got"
	done
	extra=$(for id in $(awk '{ print $1 }' <<<"$tags"); do
		has_word "$id" "${columns//[*-]/}" || echo "$id"
	done)
	check_eq "iolens-$cmd.1 documents no column that iolens $cmd --help lacks" "" "$(echo $extra)"
done

# vtrace.3 documents libvtrace's whole public API: every function of vtrace.h in its SYNOPSIS
# and described below it, every struct and constant; and its SYNOPSIS declares nothing else.
# The *_inline helpers are how vtrace_begin and vtrace_end read the clock in the caller, not API.
header=$TOP/include/vtrace.h
manual=$DOCS/vtrace.3
if [ -f "$header" ] && [ -f "$manual" ]; then
	functions=$(grep -oE '^[a-z][^(]*[ *]vtrace_[a-z_]+\(' "$header" | grep -oE 'vtrace_[a-z_]+\($' | tr -d '(' |
		grep -v '_inline$' | sort -u)
	structs=$(sed -n 's/^struct \(vtrace_[a-z_]*\) {.*/\1/p' "$header" | sort -u)
	constants=$(sed -n 's/^#define \(VTRACE_[A-Z_]*\)[[:space:]][[:space:]]*[^[:space:]].*/\1/p' "$header" | sort -u)
	[ -n "$functions" ] || not_ok "include/vtrace.h declares functions (none found: has its format changed?)"
	[ -n "$structs" ] || not_ok "include/vtrace.h declares structs (none found: has its format changed?)"
	page=$(roff_text "$manual")
	synopsis=$(section SYNOPSIS <<<"$page")
	described=$(awk '/^\.SH/ { s = $0; sub(/^\.SH +/, "", s); gsub(/"/, "", s); skip = (s == "SYNOPSIS" || s == "NAME") } !skip' <<<"$page")
	for fn in $functions; do
		check "vtrace.3 declares $fn() in SYNOPSIS" has_word "$fn" "$synopsis"
		check "vtrace.3 describes $fn()" has_word "$fn" "$described"
	done
	for name in $structs; do
		check "vtrace.3 describes struct $name" has_word "$name" "$described"
	done
	for name in $constants; do
		check "vtrace.3 describes $name" has_word "$name" "$described"
	done
	extra=$(for fn in $(grep -oE 'vtrace_[a-z_]+\(' <<<"$synopsis" | tr -d '(' | sort -u); do
		has_word "$fn" "$functions" || echo "$fn"
	done)
	check_eq "vtrace.3 declares no function that vtrace.h lacks" "" "$(echo $extra)"

	# Its EXAMPLES program compiles against the header and the library, and does what the page shows.
	: "${BUILD:=$TOP/build}"
	library=$BUILD/libvtrace.a
	compiler=${CC:-cc}
	if ! command -v "$compiler" >/dev/null || [ ! -f "$library" ]; then
		skip "vtrace.3's example: needs $compiler and $library (make builds it)"
	else
		awk '/^\.SH/ { s = ($0 ~ /^\.SH +"?EXAMPLES?"?$/) } s && /^\.EX/ { e = 1; next } e && /^\.EE/ { exit } e' "$manual" |
			sed -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\&//g' > "$T/example.c"
		sanitize=
		[ "${SANITIZE:-}" = 1 ] && sanitize="-fsanitize=address,undefined"
		if "$compiler" -std=c11 -Wall -Wextra -Werror $sanitize -I"$TOP/include" -o "$T/example" "$T/example.c" \
			"$library" -pthread 2>"$T/example.err"; then
			ok "vtrace.3's example compiles with -std=c11 -Wall -Wextra -Werror"
			mkdir -p "$T/shm"
			run env VTRACE_DIR="$T/shm" "$T/example"
			check_eq "vtrace.3's example runs" 0 "$RC"
			check_match "… and counts what the page shows" "^TOTAL +4000 done 40 errors" "$OUT"
			check_eq "… and removes its segment" "" "$(ls "$T/shm")"
		else
			not_ok "vtrace.3's example compiles: $(head -c 400 "$T/example.err")"
		fi
	fi
else
	not_ok "include/vtrace.h and docs/vtrace.3 exist"
fi
# doctor's rules: --help lists them from the table the configuration checks names against; the
# man page's RULES has each, and no other.
help_rules=$("$IOLENS" doctor --help-all | awk '/^Rules/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }' | sort)
page_rules=$(roff_text "$TOP/docs/iolens-doctor.1" | section RULES | tp_tags | tr -d ',' | tr ' ' '\n' | grep -E '^[a-z][a-z-]+$' | sort)
check "iolens doctor --help lists its rules ($(echo $help_rules))" test -n "$help_rules"
check_eq "iolens-doctor.1's RULES are --help's rules" "$(echo $help_rules)" "$(echo $page_rules)"
for rule in $help_rules; do
	run "$IOLENS" doctor --no-config --disable "$rule" 0
	if [ "$RC" = 2 ]; then not_ok "doctor --disable $rule: a rule the configuration knows ($ERR)"; else ok "doctor --disable $rule: a rule the configuration knows"; fi
done
exit 0
