#!/usr/bin/env bash
# hostile_names.sh: names with terminal escapes, control characters, line breaks and bytes that are not UTF-8, through every command and format that prints a name: nothing reaches a terminal raw, JSON stays strict UTF-8, CSV one record a row, and every name reads back exactly (the escape iolens(1) documents).
. "$(dirname "$0")/lib.sh"

VTFORGE=${BUILD:-$TOP/build}/tests/helpers/vtforge
READER=${BUILD:-$TOP/build}/tests/helpers/odirect_reader
H="$TOP/tests/cli/hostile_names.py"
hn() { python3 "$H" "$@"; }
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }

# The truth: these exact bytes, one name each.
NAMES=($'esc\e[31mRED' $'bel\a' $'new\nline' $'tab\tx' $'cr\rx' $'ff\xff' $'cont\x80' 'back\xff' 'quote"comma,')
HEXES=()
for n in "${NAMES[@]}"; do HEXES+=("$(hex "$n")"); done
D=$T/dir
mkdir "$D"
for n in "${NAMES[@]}"; do make_file "$D/$n" 8192; done
FILES=()
for n in "${NAMES[@]}"; do FILES+=("$D/$n"); done

# formats CMD ARGS...: the command as a table, --json and --csv; every output clean, JSON and CSV hold every name.
formats() {
	local what=$1 fmt; [ "$2" = -R ] && what="$1 -R DIR"
	for fmt in "" --json --csv; do
		timeout -k 5 120 "$IOLENS" "$@" $fmt >"$T/out" 2>"$T/err"
		check "$what ${fmt:---table} (exit $?): output and messages valid UTF-8, no ESC, BEL or CR$(hn clean "$T/out" "$T/err" | sed 's/^/: /')" \
			hn clean "$T/out" "$T/err"
		case $fmt in
		--json) check "… JSON: strict UTF-8, each name unescapes to its bytes$(hn json "$T/out" "${HEXES[@]}" | sed 's/^/: /')" \
			hn json "$T/out" "${HEXES[@]}" ;;
		--csv) check "… CSV: one record a row, each name unescapes to its bytes$(hn csv "$T/out" "${HEXES[@]}" | sed 's/^/: /')" \
			hn csv "$T/out" "${HEXES[@]}" ;;
		esac
	done
}

formats pcstat "${FILES[@]}"
formats pcstat -R "$D"
formats evict "${FILES[@]}"
formats warm "${FILES[@]}"
"$IOLENS" pcstat "${FILES[@]}" >"$T/out" 2>&1
check_match "pcstat table: the escape sequence shown as text" 'esc\\x1b\[31mRED' "$(cat "$T/out")"
# An error message naming the file: a hostile name that does not exist.
"$IOLENS" pcstat "$D/missing"$'\e[31m\xff' >"$T/out" 2>"$T/err"
check "pcstat of a missing hostile name: its message clean$(hn clean "$T/err" | sed 's/^/: /')" hn clean "$T/err"
check_match "… and says which, escaped" 'missing\\x1b\[31m\\xff' "$(cat "$T/err")"

# ---- cachetop --files: a hostile file read while it watches ---------------------------------------
if why=$(ebpf_expected); then
	for fmt in --json --csv ""; do
		"$IOLENS" cachetop --files -n 1000 $fmt 0.3 >"$T/top.out" 2>"$T/top.err" &
		top=$!
		wait_until 30 grep -q . "$T/top.out"
		# Read the file until an interval names it (names come from a lookup with a budget: dev/inode until then).
		# (the last lines only: other tests' files can make the whole output large)
		case $fmt in
		--json) seen='esc\u001b[31mRED' ;;
		*) seen='esc\x1b[31mRED' ;;
		esac
		# A reader that keeps it open (files are named from the descriptors open on them) and reads it again and again.
		python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
while True:
    os.pread(fd, 8192, 0); time.sleep(0.05)' "$D/${NAMES[0]}" &
		reader=$!
		named=yes
		wait_until 60 sh -c 'tail -n 200 "$1" | grep -qF "$2"' sh "$T/top.out" "$seen" || named=
		kill "$reader"; wait "$reader" 2>/dev/null
		check "cachetop --files ${fmt:---table}: an interval names the ESC file, escaped" test -n "$named"
		kill -INT "$top"; wait "$top"
		check "cachetop --files ${fmt:---table}: clean$(hn clean "$T/top.out" "$T/top.err" | sed 's/^/: /')" hn clean "$T/top.out" "$T/top.err"
		case $fmt in
		--json) [ -n "$named" ] && check "… JSON: strict UTF-8, the ESC file's name unescapes to its bytes$(hn json "$T/top.out" "${HEXES[0]}" | sed 's/^/: /')" \
			hn json "$T/top.out" "${HEXES[0]}" ;;
		--csv) [ -n "$named" ] && check "… CSV: one record a row, the ESC file's name recoverable$(hn csv "$T/top.out" "${HEXES[0]}" | sed 's/^/: /')" \
			hn csv "$T/top.out" "${HEXES[0]}" ;;
		esac
	done
else
	skip "cachetop --files: $why"
fi

# ---- vstat, export, doctor: a vtrace service with a hostile name, in a segment with a hostile file name ----
export VTRACE_DIR=$T/shm
mkdir -p "$VTRACE_DIR"
# The reader refuses a service or op name that is not printable ASCII, and a segment whose file name does not
# agree with its header (vtrace.SERVICE.PID): a hostile file name is shown only as untrusted, and never reaches
# doctor's or export's findings. vstat lists it, escaped.
SERVICE=hostile
SEGNAME=$'vtrace.seg\e[31m\xff.%p'
mkfifo "$T/forge.in" "$T/forge.out"
"$VTFORGE" "$VTRACE_DIR/$SEGNAME" --service "$SERVICE" --hang --hold <"$T/forge.in" >"$T/forge.out" &
forge=$!
on_exit "kill $forge 2>/dev/null"
exec {forge_in}>"$T/forge.in" {forge_out}<"$T/forge.out"
read -r -u "$forge_out" _ forge_path
SEGHEX=$(hex "${forge_path##*/}")
SVCHEX=$(hex "$SERVICE")
for fmt in "" --json --csv; do
	"$IOLENS" vstat $fmt >"$T/out" 2>"$T/err"
	check "vstat ${fmt:---table}: clean$(hn clean "$T/out" "$T/err" | sed 's/^/: /')" hn clean "$T/out" "$T/err"
done
"$IOLENS" vstat --json >"$T/out" 2>/dev/null
check "vstat --json: the untrusted segment listed, its name unescapes to its bytes$(hn json "$T/out" "$SEGHEX" | sed 's/^/: /')" \
	hn json "$T/out" "$SEGHEX"
"$IOLENS" vstat --csv >"$T/out" 2>/dev/null
check "vstat --csv: one record a row$(hn csv "$T/out" | sed 's/^/: /')" hn csv "$T/out"

"$IOLENS" export --once >"$T/out" 2>"$T/err"
check "export --once: clean$(hn clean "$T/out" "$T/err" | sed 's/^/: /')" hn clean "$T/out" "$T/err"
if command -v promtool >/dev/null; then
	check_eq "… promtool check metrics accepts it" "" "$(promtool check metrics <"$T/out" 2>&1)"
else
	skip "promtool is not installed"
fi

# doctor: the hung service, and a process reading a hostile file with O_DIRECT.
DIRECT=$T/$'direct\e[31m\a\r\n\xff\x80'
make_file "$DIRECT" 1048576
"$READER" "$DIRECT" "$T/started" &
reader=$!
on_exit "kill $reader 2>/dev/null"
wait_until 30 test -e "$T/started"
"$IOLENS" doctor 1 >"$T/out" 2>"$T/err"
check "doctor (text): every line clean, numbers and more too$(hn clean "$T/out" "$T/err" | sed 's/^/: /')" hn clean "$T/out" "$T/err"
check_match "… the O_DIRECT finding names the file, escaped" 'direct\\x1b\[31m\\x07\\x0d\\x0a\\xff\\x80' "$(cat "$T/out")"
"$IOLENS" doctor --json 1 >"$T/out" 2>"$T/err"
check "doctor --json: strict UTF-8, the O_DIRECT file's name unescapes to its bytes$(hn json "$T/out" "$(hex "${DIRECT##*/}")" | sed 's/^/: /')" \
	hn json "$T/out" "$(hex "${DIRECT##*/}")"
kill "$reader"; wait "$reader" 2>/dev/null
exec {forge_in}>&- {forge_out}<&-

# ---- bench: a target in a directory with a hostile name --------------------------------------------
B=$T/$'bench\e[31m\a\r\xff\x80'
mkdir "$B"
for fmt in "" --json --csv; do
	"$IOLENS" bench --bs 4k --size 1m $fmt "$B" >"$T/out" 2>"$T/err"
	check "bench ${fmt:---table}: clean$(hn clean "$T/out" "$T/err" | sed 's/^/: /')" hn clean "$T/out" "$T/err"
done
"$IOLENS" bench --bs 4k --size 1m --json "$B" >"$T/out" 2>/dev/null
check "bench --json: the target's directory unescapes to its bytes$(python3 -c 'import json,sys,re
sys.path.insert(0, sys.argv[3]); t=json.loads(open(sys.argv[1],"rb").read().decode("utf-8"))["target"]
raw=re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m[1],16)]), t.encode())
print("" if raw.startswith(bytes.fromhex(sys.argv[2])) else ": target %r" % t)' "$T/out" "$(hex "$B")" "$TOP/tests/cli" 2>&1)" \
	python3 -c 'import json,sys,re
t=json.loads(open(sys.argv[1],"rb").read().decode("utf-8"))["target"]
raw=re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m[1],16)]), t.encode())
sys.exit(not raw.startswith(bytes.fromhex(sys.argv[2])))' "$T/out" "$(hex "$B")"

echo "1..$t_count"
