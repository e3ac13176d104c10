#!/bin/bash
# pcstat_stream.sh: pcstat, evict and warm print their rows as the files are looked at, in memory that does not grow with the number of files; a table's first 256 rows size its columns and later rows keep those widths.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is missing (make test-deps)"

# make_tree DIR DIRS: DIRS directories of 500 empty files each, with names of 40 characters.
make_tree() {
	python3 - "$1" "$2" <<'EOF'
import os, sys
top, dirs = sys.argv[1], int(sys.argv[2])
for d in range(dirs):
    path = os.path.join(top, "directory-%03d" % d)
    os.makedirs(path)
    for f in range(500):
        name = os.path.join(path, "file-with-a-name-forty-characters-%05d" % f)
        os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o644))
EOF
}
make_tree "$T/small" 10  # 5,000 files
make_tree "$T/big" 100   # 50,000 files, in directories as deep and as full

# max_rss_kib CMD...: the largest resident set CMD had, in KiB, as /usr/bin/time tells it
# (wait4's rusage: a small program's fork, so the figure is CMD's); output thrown away; fails
# when CMD fails. AddressSanitizer keeps freed memory in quarantine, which would grow with the
# number of rows made and freed: off for this measure.
max_rss_kib() {
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0 \
		/usr/bin/time -f %M -o "$T/rss" "$@" >/dev/null 2>&1 || { echo "$* failed"; return 1; }
	tail -n 1 "$T/rss"
}

# Memory: 45,000 rows more must not cost memory. Held until the end, as tables once were, they
# took 25 MB more (about half a kilobyte a row); 4 MiB allows for the allocator and page rounding.
[ -x /usr/bin/time ] || skip "memory: needs /usr/bin/time (make test-deps)"
[ -x /usr/bin/time ] && for args in "pcstat" "pcstat -H --total" "pcstat --csv" "pcstat --json --total" "pcstat -o +map,method" \
	"evict" "warm --csv"; do
	small=$(max_rss_kib "$IOLENS" $args -R "$T/small") || { not_ok "$args -R: $small"; continue; }
	big=$(max_rss_kib "$IOLENS" $args -R "$T/big") || { not_ok "$args -R: $big"; continue; }
	if [ $((big - small)) -lt 4096 ]; then
		ok "$args -R: max RSS does not grow with the files (5,000: $small KiB, 50,000: $big KiB)"
	else
		not_ok "$args -R: max RSS grows with the files: 5,000 files $small KiB, 50,000 files $big KiB"
	fi
done

# The first rows are out while the walk goes on. Nothing more is read after two lines: iolens
# then blocks on the full pipe long before its 50,000 rows (over 3 MB) are out. Had it waited
# for the walk to end before printing, the walk would be over when the first line comes, and
# the top directory of the tree closed; printing as it goes, iolens still has it open.
mkfifo "$T/fifo"
for format in table --csv --json; do
	args=()
	[ "$format" = table ] || args=("$format")
	"$IOLENS" pcstat -R "${args[@]}" "$T/big" >"$T/fifo" 2>"$T/fifo.err" &
	pid=$!
	exec {reader}<"$T/fifo"
	first=$(read -r -t 120 -u "$reader" a && read -r -t 120 -u "$reader" b && printf '%s\n%s\n' "$a" "$b")
	in_walk=no
	for fd in /proc/"$pid"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "$T/big" ] && in_walk=yes
	done
	check_eq "pcstat -R ($format): the first rows are out before the walk ends (the tree still open)" yes "$in_walk"
	rows=$( { printf '%s\n' "$first"; cat <&"$reader"; } | grep -c "$T/big/directory-")
	exec {reader}<&-
	wait "$pid"
	check_eq "... then every row, and exit 0 ($(head -c 200 "$T/fifo.err"))" "0 50000" "$? $rows"
done

# The rows of a long table are those CSV writes, in the same order (CSV is the truth here:
# its rows are not laid out).
"$IOLENS" pcstat -R --csv --no-header -o name,size,pages,cached "$T/big" >"$T/csv" 2>/dev/null
"$IOLENS" pcstat -R --no-header -o name,size,pages,cached "$T/big" 2>/dev/null |
	awk '{ print $1 "," $2 "," $3 "," $4 }' >"$T/table"
check "a table of 50,000 rows: the rows and values of CSV, one line each, in its order" cmp -s "$T/csv" "$T/table"
csv_total=$("$IOLENS" pcstat -R --csv --no-header --total -o name,size,pages,cached "$T/big" 2>/dev/null | tail -n 1)
table_total=$("$IOLENS" pcstat -R --total --no-header -o name,size,pages,cached "$T/big" 2>/dev/null |
	tail -n 1 | awk '{ print $1 "," $2 "," $3 "," $4 }')
check_eq "... its TOTAL row last, the sums of CSV's" "$csv_total" "$table_total"

# Widths: files named in order on the command line come out in that order. The 257th name is
# the longest: the first 256 rows size the column without it, and it widens only its own line.
mkdir "$T/w"
files=()
for i in $(seq 1 300); do
	name=$T/w/f$i
	[ "$i" = 257 ] && name=$T/w/f257-a-name-longer-than-the-others
	: >"$name"
	files+=("$name")
done
"$IOLENS" pcstat "${files[@]}" >"$T/300" 2>/dev/null
"$IOLENS" pcstat "${files[@]:0:256}" >"$T/256" 2>/dev/null
check_eq "300 files: a header and 300 rows, one line each" 301 "$(wc -l <"$T/300")"
check "... the header and first 256 rows as a table of those 256 alone prints them" \
	cmp -s "$T/256" <(head -n 257 "$T/300")
header_length=$(head -n 1 "$T/300" | awk '{ print length($0) }')
other_lengths=$(sed '258d' "$T/300" | awk '{ print length($0) }' | sort -u)
check_eq "... every line but the 257th as long as the header: later rows keep the widths" "$header_length" "$other_lengths"
longer=$(( ${#files[256]} - ${#files[255]} ))
check_eq "... the 257th longer by what its name is longer: it widens only its own line" \
	$((header_length + longer)) "$(sed -n 258p "$T/300" | awk '{ print length($0) }')"
# 256 rows are a whole table: the longest name last still sizes its column.
"$IOLENS" pcstat "${files[@]:0:255}" "${files[256]}" >"$T/whole" 2>/dev/null
check_eq "256 rows, the longest last: printed whole, every line as long" 1 \
	"$(awk '{ print length($0) }' "$T/whole" | sort -u | wc -l)"

# Names in the rows after the first 256 are escaped as in any table: one line each, the same
# text as a short table of the same files writes (name last, so it is not padded).
mkdir "$T/hostile"
python3 - "$T/hostile" <<'EOF'
import os, sys
for name in [b"esc\x1b[31mred", b"line\nbreak", b"tab\there", b"bad\xff\x80utf8", b"back\\slash",
             "caf\u00e9-\u6f22\u5b57".encode(), b"cr\rreturn", b"with space"]:
    os.close(os.open(os.path.join(sys.argv[1].encode(), name), os.O_CREAT | os.O_WRONLY, 0o644))
EOF
names_of() { sed 's/^ *[0-9][0-9]* //' | grep "$T/hostile/" | sort; }
streamed=$("$IOLENS" pcstat -R -o size,name "$T/w" "$T/hostile" 2>/dev/null | names_of)
alone=$("$IOLENS" pcstat -R -o size,name "$T/hostile" 2>/dev/null | names_of)
check_eq "hostile names after 256 rows: 8 rows, one line each" 8 "$(grep -c . <<<"$streamed")"
check_eq "... escaped as a short table escapes them" "$alone" "$streamed"
check_no_match "... no control character reaches the terminal" $'[\x01-\x1f\x7f]' "$streamed"

echo "1..$t_count"
