#!/usr/bin/env bash
# export_collectors.sh: export's collectors are the files of src/cmd/export/ (the hidden --collector-table lists them), each a switch, written by rank, named in iolens-export(1).
: "${IOLENS:=$(cd "$(dirname "$0")/../.." && pwd)/iolens}"
. "$(dirname "$0")/lib.sh"
: "${DOCS:=$TOP/docs}"

# differ A B: the lines of A not in B, space-separated.
differ() { comm -23 <(sort -u <<<"$1") <(sort -u <<<"$2") | tr '\n' ' ' | sed 's/ $//'; }

# The collectors the page names: the bold words of the paragraph of --collector.NAME.
man_collectors() {
	sed -n '/^The collectors, named as/,/^Another name is refused/p' "$1" | sed -n 's/^\.B \([a-z_0-9]*\)$/\1/p'
}

run "$IOLENS" export --collector-table
check_eq "export --collector-table exits 0" 0 "$RC"
table=$OUT
check_eq "every line is name, rank, on or off, help (tab-separated)" "" \
	"$(grep -vE $'^[a-z][a-z0-9_]*\t-?[0-9]+\t(on|off)\t[^\t]+$' <<<"$table")"
names=$(cut -f1 <<<"$table")
files=$(cd "$TOP/src/cmd/export" && ls -- *.c | sed 's/\.c$//')
check "the table lists at least 8 collectors (found $(wc -l <<<"$names"))" test "$(wc -l <<<"$names")" -ge 8
check_eq "every file of src/cmd/export/ is a collector of that name" "" "$(differ "$files" "$names")"
check_eq "every collector is a file of src/cmd/export/" "" "$(differ "$names" "$files")"
ranks=$(cut -f2 <<<"$table")
check_eq "the table is in rank order, no two collectors of one rank" "$(sort -nu <<<"$ranks")" "$ranks"

# Each name is a switch both ways; --collector.disable-defaults with nothing on reads nothing.
bad=""
for n in $names; do
	"$IOLENS" export --once --collector.disable-defaults --collector."$n" --no-collector."$n" >/dev/null 2>&1 ||
		bad="$bad $n"
done
check_eq "--collector.NAME and --no-collector.NAME are accepted for every collector" "" "${bad# }"
run "$IOLENS" export --once --collector.nosuch
check_eq "an unknown collector: exit 2" 2 "$RC"
check "an unknown collector: the error lists them all" \
	grep -qF "the collectors are $(tr '\n' ',' <<<"$files" | sed 's/,$//; s/,/, /g')" <<<"$ERR"

# Written by rank, whatever the order of the switches: process (80) after filesystem (30).
run "$IOLENS" export --once --collector.disable-defaults --collector.process --collector.filesystem
check_eq "export --once with process and filesystem exits 0" 0 "$RC"
order=$(grep '^# TYPE' <<<"$OUT" | awk '{print $3}' | sed -E 's/^(iolens_filesystem|process)_.*/\1/' | uniq |
	tr '\n' ' ')
check_eq "filesystem's families, then process's" "iolens_build_info iolens_filesystem process iolens_export_scrapes_total " \
	"$order"

documented=$(man_collectors "$DOCS/iolens-export.1")
check_eq "every collector is named in iolens-export(1)" "" "$(differ "$names" "$documented")"
check_eq "every collector iolens-export(1) names is one" "" "$(differ "$documented" "$names")"
# The comparison sees a difference: the page without vmstat's line lacks it.
sed '/^\.B vmstat$/d' "$DOCS/iolens-export.1" > "$T/no-vmstat.1"
check_eq "a page without vmstat is found to lack it" "vmstat" "$(differ "$documented" "$(man_collectors "$T/no-vmstat.1")")"
echo "1..$t_count"
