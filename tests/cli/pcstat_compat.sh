#!/bin/bash
# pcstat_compat.sh: the pcstat link takes classic pcstat's flags (github.com/tobert/pcstat) with their meanings and outputs.
. "$(dirname "$0")/lib.sh"

can_evict || skip_all "the scratch directory is on $(fs_type "$T"): its pages cannot be dropped"
pause_damon
ln -s "$IOLENS" "$T/pcstat"
P=$T/pcstat
make_file "$T/hot" 100000        # 25 pages, all cached
make_file "$T/cold" 10000        # 3 pages, none cached
make_file "$T/a-much-longer-name" 5000
: > "$T/empty"
warm() { cat "$@" > /dev/null; }
cold() { "$IOLENS" evict "$T/cold" > /dev/null; }
warm "$T/hot" "$T/a-much-longer-name"; cold

# The flags that iolens pcstat misread: none is an error now.
for flag in -json -terse -nohdr -bname -sort -histo -plain -unicode -pps; do
	run "$P" $flag "$T/hot"
	check_eq "$flag is pcstat's flag (exit 0, no message)" "0:" "$RC:$ERR"
done
run "$P" -pid $$
check_eq "-pid PID (pcstat's single dash)" 0 "$RC"
run "$P" -pid=$$
check_eq "-pid=PID" 0 "$RC"
run "$P" -pid nope
check_eq "-pid with no number: usage error" 2 "$RC"
check_match "... said" "^pcstat: -pid: not a process id: nope" "$ERR"
run "$P" -json -bogus "$T/hot"
check_eq "a flag pcstat does not have: usage error" 2 "$RC"
check_match "... named as Go's flag package names it" "flag provided but not defined: -bogus" "$ERR"
run "$P" -json -help
check_eq "-help: pcstat's flags, exit 0" 0 "$RC"
check_match "... listed" "-histo +print a simple histogram" "$OUT"

# Go's flag package (flag.go, parseOne) takes every flag with one dash or two, -flag=value and
# -flag value for -pid, and a bool flag's value only after '=' (strconv.ParseBool's words); the
# link takes them so. The truth: pcstat's own output for the single-dash spelling.
warm "$T/hot"
terse_of() { "$P" "$@" | cut -d, -f1,2,5-; }
want=$(terse_of -terse -nohdr "$T/hot")
check_eq "-terse -nohdr: one row" "$T/hot,100000,25,25,100" "$want"
for args in "--terse --nohdr" "--terse -nohdr" "-terse=true --nohdr=1" "--terse=T -nohdr=TRUE" \
	"-terse=True --nohdr=t" "-terse=1 -json=false -nohdr" "--json=F --terse --nohdr=True" \
	"-json=0 -json=FALSE -json=False -json=f -terse -nohdr"; do
	check_eq "$args is as -terse -nohdr" "$want" "$(terse_of $args "$T/hot")"
done
check_eq "--terse=false --nohdr: the table (a bool flag turned off)" \
	"$("$P" -nohdr -bname "$T/hot")" "$("$P" --terse=false --nohdr --bname "$T/hot")"
check_eq "--json: pcstat's JSON, as -json" "$("$P" -json "$T/hot" | sed 's/"timestamp":"[^"]*"//')" \
	"$("$P" --json "$T/hot" | sed 's/"timestamp":"[^"]*"//')"
check_eq "--sort --terse --nohdr --bname: pcstat's -sort" "hot cold" \
	"$("$P" --sort --terse --nohdr --bname "$T/cold" "$T/hot" | cut -d, -f1 | tr '\n' ' ' | sed 's/ $//')"
run "$P" --terse -nohdr -- -hot "$T/hot"
check_eq "-- ends the flags" "1:$T/hot,100000,25,25,100" "$RC:$(cut -d, -f1,2,5- <<<"$OUT")"
check_match "... and the next argument is a file" "^pcstat: -hot: No such file or directory" "$ERR"
run "$P" --terse -nohdr "$T/hot" --json
check_eq "flags end at the first file: --json after it is a file" "1:$T/hot,100000,25,25,100" \
	"$RC:$(cut -d, -f1,2,5- <<<"$OUT")"
run "$P" -terse -nohdr true "$T/hot"
check_match "a bool flag takes no value after a space: 'true' is a file" "^pcstat: true: No such file" "$ERR"
run "$P" --terse=yes "$T/hot"
check_eq "--terse=yes: usage error, as Go's" "2:" "$RC:$OUT"
check_match "... in Go's words" '^pcstat: invalid boolean value "yes" for -terse: parse error$' "$(head -1 <<<"$ERR")"
for bad in -=terse --=terse; do
	run "$P" -json "$bad" "$T/hot"
	check_eq "$bad: bad flag syntax, exit 2" "2:pcstat: bad flag syntax: $bad" "$RC:$(head -1 <<<"$ERR")"
done
run "$P" --pid $$ --terse
check_eq "--pid PID (two dashes)" 0 "$RC"
run "$P" --pid=$$ --terse --nohdr
check_eq "--pid=PID" 0 "$RC"
run "$P" --bogus -terse "$T/hot"
check_eq "--bogus -terse: usage error" 2 "$RC"
check_match "... named as Go's flag package names it" "flag provided but not defined: -bogus" "$ERR"
run "$P" -terse --bogus "$T/hot"
check_match "-terse --bogus: named as Go's flag package names it" "flag provided but not defined: -bogus" "$ERR"

# iolens pcstat itself keeps its own options, and the link without pcstat's flags is iolens pcstat.
check_eq "the link without classic flags is iolens pcstat" "$("$IOLENS" pcstat "$T/hot")" "$("$P" "$T/hot")"
run "$IOLENS" pcstat -json "$T/hot"
check_eq "iolens pcstat -json is still -j -s -o n" 2 "$RC"
check_eq "iolens pcstat --json is iolens's JSON" "$("$IOLENS" pcstat --json "$T/hot" | head -c 1)" "{"

# -json: pcstat's array, its keys in its order, its time format (Go's RFC 3339 in local time).
warm "$T/hot"; cold
run "$P" -json "$T/hot" "$T/cold" "$T/empty"
check_match "-json: keys in pcstat's order" \
	'^\[\{"filename":"[^"]*/hot","size":100000,"timestamp":"[0-9T:.-]+(Z|[+-][0-9]{2}:[0-9]{2})","mtime":"[^"]+","pages":25,"cached":25,"uncached":0,"percent":100,"status":null\},' "$OUT"
check_match "-json: an uncached file" '"filename":"[^"]*/cold","size":10000,[^}]*"pages":3,"cached":0,"uncached":3,"percent":0,"status":null\}' "$OUT"
check_match "-json: an empty file's percent is null (pcstat fails on its NaN)" '"pages":0,"cached":0,"uncached":0,"percent":null' "$OUT"
check "-json: one line of valid JSON" python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); assert len(d)==3' <<<"$OUT"
mtime=$(python3 -c 'import json,sys,datetime; d=json.loads(sys.stdin.read()); print(int(datetime.datetime.fromisoformat(d[0]["mtime"].replace("Z","+00:00")).timestamp()))' <<<"$OUT")
check_eq "-json: mtime is the file's" "$(stat -c %Y "$T/hot")" "$mtime"
TZ=Asia/Kolkata run "$P" -json "$T/hot"
check_match "-json: a zone east of UTC as +05:30" '"timestamp":"[^"]+\+05:30"' "$OUT"
run "$P" -json -pps "$T/cold"
check_match "-pps: the per-page status" '"status":\[false,false,false\]\}\]$' "$OUT"
printf 'x' > "$T/a<b&c>"
run "$P" -json "$T/a<b&c>"
check_match "-json: < > & as Go escapes them" '"filename":"[^"]*/a\\u003cb\\u0026c\\u003e"' "$OUT"

# -terse: pcstat's CSV, percent as Go's %g.
warm "$T/hot"; cold
run "$P" -terse "$T/hot" "$T/cold"
mt=$(stat -c %Y "$T/hot"); mc=$(stat -c %Y "$T/cold")
check_eq "-terse: header" "name,size,timestamp,mtime,pages,cached,percent" "$(head -1 <<<"$OUT")"
check_match "-terse: a row" "^$T/hot,100000,[0-9]+,$mt,25,25,100\$" "$OUT"
check_match "-terse: a cold row" "^$T/cold,10000,[0-9]+,$mc,3,0,0\$" "$OUT"
run "$P" -terse -nohdr "$T/hot"
check_eq "-terse -nohdr: no header" 1 "$(wc -l <<<"$OUT")"
warm "$T/cold"
python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 8192, 4096, os.POSIX_FADV_DONTNEED)' "$T/cold"
run "$P" -terse -nohdr "$T/cold"
check_eq "-terse: 2 of 3 pages as Go's %g writes them (shortest digits)" "3,2,66.66666666666666" "$(cut -d, -f5- <<<"$OUT")"
cold

# The text table, -plain, -unicode, byte for byte as pcstat's formats build them.
warm "$T/hot"; cold
run "$P" -bname "$T/hot" "$T/cold"
expect="+-------+----------------+------------+-----------+---------+
| Name  | Size (bytes)   | Pages      | Cached    | Percent |
|-------+----------------+------------+-----------+---------|
| hot   | 100000         | 25         | 25        | 100.000 |
| cold  | 10000          | 3          | 0         |   0.000 |
+-------+----------------+------------+-----------+---------+"
check_eq "the text table, -bname" "$expect" "$OUT"
run "$P" -nohdr -bname "$T/hot"
expect="+-------+----------------+------------+-----------+---------+
| hot   | 100000         | 25         | 25        | 100.000 |
+-------+----------------+------------+-----------+---------+"
check_eq "-nohdr: the table without its header" "$expect" "$OUT"
run "$P" -plain -bname "$T/a-much-longer-name"
expect="Name                Size (bytes)    Pages       Cached     Percent
a-much-longer-name  5000            2           2          100.000"
check_eq "-plain" "$expect" "$OUT"
run "$P" -unicode -bname "$T/hot"
expect="┌───────┬────────────────┬────────────┬───────────┬─────────┐
│ Name  │ Size (bytes)   │ Pages      │ Cached    │ Percent │
├───────┼────────────────┼────────────┼───────────┼─────────┤
│ hot   │ 100000         │ 25         │ 25        │ 100.000 │
└───────┴────────────────┴────────────┴───────────┴─────────┘"
check_eq "-unicode" "$expect" "$OUT"

# -sort: most cached pages first.
warm "$T/hot"; cold
run "$P" -sort -terse -nohdr -bname "$T/cold" "$T/a-much-longer-name" "$T/hot"
check_eq "-sort: by cached pages, largest first" "hot a-much-longer-name cold" "$(cut -d, -f1 <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')"

# -histo: a block a page when they fit.
warm "$T/hot"; cold
COLUMNS=200 run "$P" -histo -bname "$T/cold" "$T/hot"
check_eq "-histo: one bar per page" "cold         3 ▁▁▁
hot         25 █████████████████████████" "$OUT"

# Files pcstat skips: said, exit 1 (pcstat says it and exits 0).
run "$P" -json "$T/hot" "$T/missing"
check_eq "a missing file: exit 1" 1 "$RC"
check_match "... said" "pcstat: $T/missing: No such file or directory" "$ERR"
check_match "... the others shown" '"pages":25' "$OUT"

# -pid: the files a process maps.
sleep 30 < "$T/hot" & holder=$!
sleep 0.2
run "$P" -pid $holder -terse -nohdr
check_match "-pid: the process's files" "^$T/hot,100000," "$OUT"
kill $holder

echo "1..$t_count"
