#!/usr/bin/env bash
# bench_options.sh: bench's option table (bench_options[] in src/cmd/bench.c, dumped by the hidden --option-table) and the OPTIONS of iolens-bench(1) name the same options.
: "${IOLENS:=$(cd "$(dirname "$0")/../.." && pwd)/iolens}"
. "$(dirname "$0")/lib.sh"
: "${DOCS:=$TOP/docs}"

# The options named in the tags (.TP) of a man page's OPTIONS section, one a line: "-o", "--output".
man_options() {
	sed -e 's/\\f\[[^]]*\]//g' -e 's/\\f(..//g' -e 's/\\f.//g' -e 's/\\-/-/g' -e 's/\\[&%]//g' "$1" |
		awk '/^\.SH/ { inside = ($0 ~ /^\.SH +"?OPTIONS"?$/); next }
		     inside && tag { print; tag = 0; next } inside && /^\.TP/ { tag = 1 }' |
		grep -oE -- '(^|[ ,"])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ ,"]//' | sort -u
}

# differ A B: the lines of A not in B, space-separated (both sorted).
differ() { comm -23 <(sort -u <<<"$1") <(sort -u <<<"$2") | tr '\n' ' ' | sed 's/ $//'; }

run "$IOLENS" bench --option-table
check_eq "bench --option-table exits 0" 0 "$RC"
table=$(sort -u <<<"$OUT")
check "bench --option-table lists --rw, --iodepth, --help-all, -o and --json" \
	bash -c 'for o in --rw --iodepth --help-all -o --json; do grep -qx -- "$o" <<<"$1" || exit 1; done' _ "$table"
check_eq "bench --option-table: every line is one option" "" "$(grep -vxE -- '-[A-Za-z]|--[a-z][a-z0-9-]+' <<<"$table")"

documented=$(man_options "$DOCS/iolens-bench.1")
check "iolens-bench.1 OPTIONS names at least 30 options (found $(wc -l <<<"$documented"))" \
	test "$(wc -l <<<"$documented")" -ge 30
check_eq "every option in bench's table is in iolens-bench.1 OPTIONS" "" "$(differ "$table" "$documented")"
check_eq "every option iolens-bench.1 OPTIONS lists is in bench's table" "" "$(differ "$documented" "$table")"

# Each option line of --help-all (an option at the start of the line) is in the table.
run "$IOLENS" bench --help-all
heads=$(grep -E '^  (-[A-Za-z],? |    --)' <<<"$OUT" | grep -oE -- '(^| )--?[A-Za-z][a-z0-9-]*' | sed 's/^ //' | sort -u)
check "bench --help-all lists options (found $(wc -l <<<"$heads"))" test "$(wc -l <<<"$heads")" -ge 30
check_eq "every option bench --help-all lists is in bench's table" "" "$(differ "$heads" "$table")"

# The comparison sees a difference: the page with --margin's paragraph taken out lacks it.
sed '/^\.BI \\-\\-margin /,/^\.TP/{/^\.BI/d}' "$DOCS/iolens-bench.1" > "$T/no-margin.1"
check_eq "a page without --margin's tag is found to lack it" "--margin" \
	"$(differ "$table" "$(man_options "$T/no-margin.1")")"
echo "1..$t_count"
