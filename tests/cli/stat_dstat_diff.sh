#!/usr/bin/env bash
# stat_dstat_diff.sh: iolens-stat.1's DIFFERENCES FROM DSTAT lists exactly what differs: each option it names is run through the dstat link and through dstat, and must differ as it says (or not at all where it says so).
. "$(dirname "$0")/lib.sh"

command -v dstat >/dev/null && dstat --version >/dev/null 2>&1 || skip_all "dstat is not installed (make test-deps installs it)"
: "${STAT_PAGE:=$TOP/docs/iolens-stat.1}"
ln -s "$IOLENS" "$T/dstat"
mkdir -p "$T/ours" "$T/theirs"

# subsection NAME: the roff lines of one .SS of DIFFERENCES FROM DSTAT.
subsection() {
	awk -v name="$1" '/^\.SH/ { in_diff = ($0 ~ /DIFFERENCES FROM DSTAT/); inside = 0; next }
		in_diff && /^\.SS/ { s = $0; sub(/^\.SS +/, "", s); gsub(/"/, "", s); inside = (s == name); next }
		inside' "$STAT_PAGE"
}
# tags NAME: the tag of each .TP of a subsection, as typed ("-C 0,total"), one option set a line
# (a tag lists several, separated by ", ").
tags() {
	subsection "$1" | awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }' |
		sed -e 's/^\.B //' -e 's/^"//' -e 's/"$//' -e 's/\\-/-/g' | sed 's/, /\n/g'
}
# heads OUTPUT: dstat's default message (when printed), then the two header rows.
heads() { awk '{ print } /^-/ && !t { t = 1; next } t { exit }' <<<"$1"; }
# both ARGS...: run the link and dstat with these options (one sample) in a directory each;
# OURS, THEIRS, RC_OURS, RC_THEIRS.
both() {
	OURS=$(cd "$T/ours" && timeout -k 5 60 "$T/dstat" "$@" --nocolor 1 1 2>&1)
	RC_OURS=$?
	THEIRS=$(cd "$T/theirs" && timeout -k 5 60 dstat "$@" --nocolor 1 1 2>&1 | grep -v 'DeprecationWarning\|^  import imp')
	RC_THEIRS=${PIPESTATUS[0]}
}
# iolens_stat ARGS...: the same under the name iolens stat; OURS and RC_OURS.
iolens_stat() {
	OURS=$(cd "$T/ours" && timeout -k 5 60 "$IOLENS" stat "$@" --nocolor 1 1 2>&1)
	RC_OURS=$?
}
# the preamble and headers of an --output file, the date masked.
csv_head() { head -6 "$1" | sed 's/"Date:","[^"]*"/"Date:","DATE"/'; }

# ---- Under the name iolens stat only: through the link as dstat, under iolens stat not ------------
n=0
while read -r tag; do
	n=$((n + 1))
	read -ra args <<<"$tag"
	if [ "$tag" = --output ]; then
		rm -f "$T/ours/out.csv" "$T/theirs/out.csv"
		both -c --output out.csv
		check_eq "$tag: the link writes dstat's preamble and headers (but the date)" \
			"$(csv_head "$T/theirs/out.csv")" "$(csv_head "$T/ours/out.csv")"
		rm -f "$T/ours/out.csv"
		iolens_stat -c --output out.csv
		check "$tag: iolens stat writes otherwise, as listed" test "$(csv_head "$T/theirs/out.csv")" != "$(csv_head "$T/ours/out.csv")"
		continue
	fi
	both "${args[@]}"
	check_eq "$tag: through the link, dstat's headers" "$(heads "$THEIRS")" "$(heads "$OURS")"
	theirs_first=$(heads "$THEIRS"; sed -n "$(($(heads "$THEIRS" | wc -l) + 1))p" <<<"$THEIRS")
	ours_first=$(heads "$OURS"; sed -n "$(($(heads "$OURS" | wc -l) + 1))p" <<<"$OURS")
	if [ "$tag" = -n ]; then
		check_eq "$tag: through the link, dstat's first line" "$theirs_first" "$ours_first"
	fi
	iolens_stat "${args[@]}"
	ours_first=$(heads "$OURS"; sed -n "$(($(heads "$OURS" | wc -l) + 1))p" <<<"$OURS")
	if [ "$tag" = -n ] && [ "$(sed -n 3p <<<"$OURS" | tr -d ' 0|')" = "" ]; then
		skip "$tag: iolens stat's first line (no network traffic since boot here: nothing tells it from dstat's 0)"
		continue
	fi
	check "$tag: under iolens stat, its headers or first line differ, as listed" test "$theirs_first" != "$ours_first"
done < <(tags "Under the name iolens stat only")
check "the section lists differences under the name iolens stat only ($n)" test "$n" -ge 5

# ---- Under either name: the link differs from dstat in its headers or its exit status ----------------
n=0
while read -r tag; do
	n=$((n + 1))
	read -ra args <<<"$tag"
	both "${args[@]}"
	if [ "$(heads "$THEIRS")" != "$(heads "$OURS")" ] || [ "$RC_THEIRS" != "$RC_OURS" ]; then
		ok "$tag: the link differs from dstat, as listed (exit $RC_OURS, dstat $RC_THEIRS)"
	else
		not_ok "$tag: listed as a difference, but the link prints dstat's headers and exit status ($RC_OURS)"
	fi
done < <(tags "Under either name")
check "the section lists differences under either name ($n)" test "$n" -ge 5

# ---- Values: the headers are dstat's through the link, and both run ---------------------------------
n=0
while read -r tag; do
	n=$((n + 1))
	read -ra args <<<"$tag"
	both "${args[@]}"
	check_eq "$tag (values differ): through the link, dstat's headers" "$(heads "$THEIRS")" "$(heads "$OURS")"
	check_eq "$tag (values differ): exit statuses alike" "$RC_THEIRS" "$RC_OURS"
done < <(tags "Values")
check "the section lists differences of values ($n)" test "$n" -ge 3

# ---- dstat plugins iolens stat has not: dstat knows each; the link says it as dstat says one
# that fails to load, and alone ends as dstat does (exit 8) --------------------------------------
section="dstat plugins iolens stat has not"
dstat_plugins=" $(dstat --list 2>/dev/null | grep -v ':$' | tr -d '\t' | tr ',\n' '  ') "
n=0
for opt in $(subsection "$section" | sed 's/\\-/-/g' | grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u); do
	n=$((n + 1))
	run "$T/dstat" "$opt" --nocolor 0.1 1
	name=${opt#--}
	check_eq "$opt: listed as not had, and alone the link ends as dstat with none loaded (exit 8)" 8 "$RC"
	check_match "… said as dstat says a plugin that fails to load" "^Module dstat_${name//-/_} failed to load" "$ERR"
	if [[ "$dstat_plugins" == *" $name "* ]]; then
		ok "$opt: one of dstat's plugins (dstat --list)"
	else
		theirs=$(cd "$T/theirs" && timeout -k 5 60 dstat "$opt" -c --nocolor 1 1 2>&1)
		check_no_match "$opt: an option of dstat's (it does not say 'not recognized')" "not recognized" "$theirs"
	fi
done
check "the section lists dstat plugins iolens stat has not ($n)" test "$n" -ge 20
# An option dstat does not know, one it knows given an argument, an ambiguous prefix: dstat's line
# (Python getopt's words, the pointer to -h) and its status 1, not GNU getopt's and 2.
for bad in --x -Q --x=3 --nocolor=x --no; do
	ours=$(timeout -k 5 60 "$T/dstat" "$bad" 1 1 2>"$T/bad.err"); rc_ours=$?
	theirs=$(timeout -k 5 60 dstat "$bad" 1 1 2>/dev/null); rc_theirs=$?
	check_eq "$bad: dstat's line on standard output, its exit status, nothing on stderr" \
		"$theirs (exit $rc_theirs)" "$ours (exit $rc_ours)$(cat "$T/bad.err")"
done
# The same under the name iolens stat: GNU's words, and usage's status 2.
run "$IOLENS" stat --x 1 1
check_eq "iolens stat --x: GNU getopt's message on stderr, exit 2" "2 iolens stat: unrecognized option '--x'" "$RC $(head -1 <<<"$ERR")"

# And the other way: every plugin of dstat --list that the link does not have is listed, and the
# others run (exit 0).
listed=" $(subsection "$section" | sed 's/\\-/-/g' | grep -oE -- '--[a-z0-9][a-z0-9-]*' | tr '\n' ' ') "
unlisted= failed=
for plugin in $dstat_plugins; do
	timeout -k 5 60 "$T/dstat" "--$plugin" --nocolor 0.1 1 >/dev/null 2>&1
	rc=$?
	[ $rc = 8 ] && [[ "$listed" != *" --$plugin "* ]] && unlisted="$unlisted --$plugin"
	[ $rc != 8 ] && [ $rc != 0 ] && failed="$failed --$plugin:$rc"
done
check_eq "every plugin of dstat --list that the link has not is listed" "" "$unlisted"
check_eq "… and every other one runs through the link (exit 0)" "" "$failed"

echo "1..$t_count"
