#!/usr/bin/env bash
# hostile_names.sh: names with terminal escapes, control characters, line breaks, bytes that are not UTF-8, C1 controls (U+009B CSI, U+009D OSC) and bidirectional overrides (U+202E), in files, a process, a cgroup, a vtrace service and a mount another user chose, through every command and format that prints a name: nothing reaches a terminal raw, JSON stays strict UTF-8, CSV one record a row, and every name reads back exactly (the escape iolens(1) documents).
. "$(dirname "$0")/lib.sh"

VTFORGE=${BUILD:-$TOP/build}/tests/helpers/vtforge
READER=${BUILD:-$TOP/build}/tests/helpers/odirect_reader
H="$TOP/tests/cli/hostile_names.py"
hn() { python3 "$H" "$@"; }
# hn_check DESCRIPTION MODE ARGS...: a check by one run of the checker, its complaint (if any) in
# the line (a python3 start each, which a busy machine makes slow: once, not twice).
hn_check() {
	local d=$1 said rc
	shift
	said=$(hn "$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then ok "$d"; else not_ok "$d${said:+: $said}"; fi
}
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
		hn_check "$what ${fmt:---table} (exit $?): output and messages valid UTF-8, no control, C1, bidi or invisible character" clean "$T/out" "$T/err"
		case $fmt in
		--json) hn_check "… JSON: strict UTF-8, each name unescapes to its bytes" json "$T/out" "${HEXES[@]}" ;;
		--csv) hn_check "… CSV: one record a row, each name unescapes to its bytes" csv "$T/out" "${HEXES[@]}" ;;
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
hn_check "pcstat of a missing hostile name: its message clean" clean "$T/err"
check_match "… and says which, escaped" 'missing\\x1b\[31m\\xff' "$(cat "$T/err")"

# ---- cachetop --files: a hostile file read while it watches ---------------------------------------
if why=$(ebpf_expected); then
	for fmt in --json --csv ""; do
		rm -f "$T/top.out" # (not the last round's output waited for: the redirection is the child's)
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
		hn_check "cachetop --files ${fmt:---table}: clean" clean "$T/top.out" "$T/top.err"
		case $fmt in
		--json) [ -n "$named" ] && hn_check "… JSON: strict UTF-8, the ESC file's name unescapes to its bytes" json "$T/top.out" "${HEXES[0]}" ;;
		--csv) [ -n "$named" ] && hn_check "… CSV: one record a row, the ESC file's name recoverable" csv "$T/top.out" "${HEXES[0]}" ;;
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
	hn_check "vstat ${fmt:---table}: clean" clean "$T/out" "$T/err"
done
"$IOLENS" vstat --json >"$T/out" 2>/dev/null
hn_check "vstat --json: the untrusted segment listed, its name unescapes to its bytes" json "$T/out" "$SEGHEX"
"$IOLENS" vstat --csv >"$T/out" 2>/dev/null
hn_check "vstat --csv: one record a row" csv "$T/out"

"$IOLENS" export --once >"$T/out" 2>"$T/err"
hn_check "export --once: clean" clean "$T/out" "$T/err"
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
hn_check "doctor (text): every line clean, numbers and more too" clean "$T/out" "$T/err"
check_match "… the O_DIRECT finding names the file, escaped" 'direct\\x1b\[31m\\x07\\x0d\\x0a\\xff\\x80' "$(cat "$T/out")"
"$IOLENS" doctor --json 1 >"$T/out" 2>"$T/err"
hn_check "doctor --json: strict UTF-8, the O_DIRECT file's name unescapes to its bytes" json "$T/out" "$(hex "${DIRECT##*/}")"
kill "$reader"; wait "$reader" 2>/dev/null
exec {forge_in}>&- {forge_out}<&-

# ---- C1 controls and bidirectional overrides, from another user ------------------------------------
# U+009B (CSI) and U+009D (OSC) in UTF-8, which a terminal obeys as ESC [ and ESC ], and U+202E (RIGHT-
# TO-LEFT OVERRIDE, "Trojan Source"): another user names files, a process and a vtrace service with
# them. Nothing any command prints, on stdout or stderr, holds one raw (hn clean), and each is shown
# escaped, byte by byte (\xc2\x9b, \xe2\x80\xae), or in JSON as \u009b and \u202e.
C1=$'\xc2\x9b' OSC=$'\xc2\x9d' RLO=$'\xe2\x80\xae'
A=$T/attacker
mkdir "$A"
chmod 1777 "$A"
chmod o+x "$T"
if is_root && command -v setpriv >/dev/null && "${AS_NOBODY[@]}" test -w "$A"; then
	AS_ATTACKER=("${AS_NOBODY[@]}") attacker=nobody
else
	AS_ATTACKER=() attacker="this user" # the names are as hostile; only the owner differs
fi
# shows DESCRIPTION TEXT FILE: FILE holds TEXT, as it is (no pattern).
shows() { if grep -qF -- "$2" "$3"; then ok "$1"; else not_ok "$1: '$2' not in: $(head -c 400 "$3" | od -An -c | head -8)"; fi; }
# clean DESCRIPTION FILE...: hn clean, said.
clean() { local d=$1; shift; hn_check "$d" clean "$@"; }
# escaped NAME: NAME as a table shows it, every byte beyond ASCII as \xNN (these names have no other).
escaped() { python3 -c 'import sys
print("".join("\\x%02x" % b if b >= 0x80 else chr(b) for b in bytes.fromhex(sys.argv[1])), end="")' "$(hex "$1")"; }
# The attacker's Python: the system's, which another user may run (not one in root's home).
PY=$(command -v /usr/bin/python3 || command -v python3)

AFILES=("$A/c1${C1}31mX" "$A/osc${OSC}0;t" "$A/rlo${RLO}txt.exe")
"${AS_ATTACKER[@]}" sh -c 'for f; do head -c 16384 /dev/urandom >"$f"; done' _ "${AFILES[@]}"
check "$attacker made the three files" test -s "${AFILES[2]}"
HEXES=()
for f in "${AFILES[@]}"; do HEXES+=("$(hex "${f##*/}")"); done
formats pcstat "${AFILES[@]}"
formats evict "${AFILES[@]}"
"$IOLENS" pcstat "${AFILES[@]}" >"$T/out" 2>&1
for f in "${AFILES[@]}"; do
	shows "pcstat table: $(escaped "${f##*/}"), each byte of C1 or the override as \\xNN" "$(escaped "${f##*/}")" "$T/out"
done
"$IOLENS" evict "${AFILES[@]}" >"$T/out" 2>&1
shows "evict table: the override as \\xe2\\x80\\xae" 'rlo\xe2\x80\xaetxt.exe' "$T/out"
"$IOLENS" pcstat --json "${AFILES[@]}" >"$T/out"
shows "pcstat --json: U+009B as JSON's \\u009b" 'c1\u009b31mX' "$T/out"
shows "pcstat --json: U+202E as \\u202e" 'rlo\u202etxt.exe' "$T/out"

# The links that print as their peers do: classic pcstat, vmtouch and fincore, in each of their formats.
mkdir "$T/links"
for peer in pcstat vmtouch fincore; do ln -s "$IOLENS" "$T/links/$peer"; done
for args in "pcstat -plain" "pcstat -unicode" "pcstat -terse" "pcstat -json" "pcstat -histo" "vmtouch -v" \
	"fincore" "fincore -J" "fincore -r"; do
	set -- $args
	"$T/links/$1" "${@:2}" "${AFILES[@]}" >"$T/out" 2>"$T/err"
	# vmtouch -v redraws its bar after a carriage return, as vmtouch does: that one is its own.
	[ "$1" = vmtouch ] && sed -i 's/\r\[/[/g' "$T/out"
	clean "$args (the link): clean" "$T/out" "$T/err"
done
shows "… fincore -r: the override escaped" 'rlo\xe2\x80\xaetxt.exe' "$T/out"

# Messages on stderr: a name that does not exist, an unknown service, an unknown disk (echoed back by
# a usage error), files named as options (which "pcstat *" in the attacker's directory passes to
# getopt, which would print them raw), a word that is no command.
# message DESCRIPTION ESCAPED CMD...: CMD's output and messages clean, and its messages hold ESCAPED.
message() {
	local d=$1 text=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"
	clean "$d: output and message clean" "$T/out" "$T/err"
	shows "… the name in it escaped" "$text" "$T/err"
}
message "pcstat, a missing file" 'gone\xc2\x9b\xc2\x9d\xe2\x80\xae: No such file or directory' \
	"$IOLENS" pcstat "$A/gone$C1$OSC$RLO"
message "evict, a missing file" 'gone\xe2\x80\xae: No such file or directory' "$IOLENS" evict "$A/gone$RLO"
message "vstat SERVICE, not found" 'svc\xc2\x9d\xe2\x80\xae' env VTRACE_DIR="$A" "$IOLENS" vstat "svc$OSC$RLO"
message "stat -D, not found" 'sd\xc2\x9b\xe2\x80\xae' "$IOLENS" stat -D "sd$C1$RLO" 1 1
message "pcstat --x<U+202E>, a file named as an option" "unrecognized option '--x\\xe2\\x80\\xae'" \
	"$IOLENS" pcstat "--x$RLO"
message "pcstat -<U+009B>" "invalid option -- '\\xc2'" "$IOLENS" pcstat "-$C1"
message "iolens cmd<U+009B><U+202E>, no such command" "'cmd\\xc2\\x9b\\xe2\\x80\\xae' is not a command" \
	"$IOLENS" "cmd$C1$RLO"

# A process whose name (comm, set with prctl) holds all three: it reads one of the files from the
# page cache and /dev/zero flat out, for cachetop's rows and stat's --top-io.
COMM=io$C1$OSC${RLO}rd
"${AS_ATTACKER[@]}" "$PY" -c 'import ctypes, os, sys
ctypes.CDLL(None).prctl(15, bytes.fromhex(sys.argv[1]), 0, 0, 0)
fd, zero = os.open(sys.argv[2], os.O_RDONLY), os.open("/dev/zero", os.O_RDONLY)
open(sys.argv[3], "w").close()
while True:
    os.pread(fd, 16384, 0)
    os.read(zero, 1 << 20)' "$(hex "$COMM")" "${AFILES[0]}" "$A/comm.ready" &
hostile=$!
on_exit "kill $hostile 2>/dev/null"
wait_until 30 test -e "$A/comm.ready"
check_eq "the process's name is the three of them" "$(hex "$COMM")" "$(hex "$(tr -d '\n' </proc/$hostile/comm)")"
# until_shown FILE TEXT CMD...: runs CMD (output in FILE) until FILE holds TEXT, 30 runs at most (a
# busier process may top the list a while); the last run's output stays.
until_shown() {
	local file=$1 text=$2 i; shift 2
	for ((i = 0; i < 30; i++)); do
		"$@" >"$file" 2>"$file.err" && grep -qF -- "$text" "$file" && return 0
	done
	return 1
}
# rows DESCRIPTION TABLE_TEXT NAME CMD...: CMD (a monitor, in each format) until its rows name NAME:
# as TABLE_TEXT in the table, with \uXXXX in JSON, \xNN in CSV. Each output clean; in JSON and CSV
# NAME reads back to its bytes.
rows() {
	local d=$1 table=$2 name=$3 fmt seen shown; shift 3
	for fmt in "" --json --csv; do
		case $fmt in
		--json) seen=$(python3 -c 'import json, sys; print(json.dumps(bytes.fromhex(sys.argv[1]).decode())[1:-1])' "$(hex "$name")") ;;
		--csv) seen=$(escaped "$name") ;;
		*) seen=$table ;;
		esac
		shown=yes
		until_shown "$T/top.out" "$seen" "$@" $fmt || shown=
		check "$d ${fmt:---table}: the row, its name escaped" test -n "$shown"
		clean "… clean" "$T/top.out" "$T/top.out.err"
		case $fmt in
		--json) hn_check "… JSON: its name unescapes to its bytes" json "$T/top.out" "$(hex "$name")" ;;
		--csv) hn_check "… CSV: one record a row, its name recoverable" csv "$T/top.out" "$(hex "$name")" ;;
		esac
	done
}
# "i/o proc" is 10 columns, CMD 16: a name is cut there, never inside an escape (cachetop's cut
# one column earlier, ending in '+' as top marks a field it cut).
rows "stat --top-io" 'io\xc2\x9b' "$COMM" "$IOLENS" stat --top-io --no-boot-sample 0.3 3
rows "cachetop -p (plain rows)" 'io\xc2\x9b\xc2+ ' "$COMM" "$IOLENS" cachetop -p "$hostile" 0.3 2

# cgroups: as root, the process moved into a cgroup named with all three; cachetop --cgroup shows it.
mycg=$(sed -n 's/^0:://p' /proc/self/cgroup)
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
CG=${mycg%/}/iolens-names-$$-$C1$OSC$RLO
if ! why=$(ebpf_expected); then
	skip "cachetop --cgroup: $why"
elif [ -z "$cg2" ] || [ -z "$mycg" ] || ! mkdir "$cg2$CG" 2>/dev/null; then
	skip "cachetop --cgroup: cannot make a cgroup here (no cgroup v2, or not ours)"
else
	on_exit "remove_cgroup '$cg2$CG'"
	echo "$hostile" >"$cg2$CG/cgroup.procs"
	shown=yes
	until_shown "$T/top.out" "iolens-names-$$-\\xc2\\x9b\\xc2\\x9d\\xe2\\x80\\xae" \
		"$IOLENS" cachetop --cgroup 0.3 2 || shown=
	check "cachetop --cgroup: the cgroup's path shown, escaped" test -n "$shown"
	clean "… clean" "$T/top.out" "$T/top.out.err"
	until_shown "$T/top.out" "iolens-names-$$-\\u009b\\u009d\\u202e" "$IOLENS" cachetop --cgroup --json 0.3 2
	hn_check "cachetop --cgroup --json: its path unescapes to its bytes" json "$T/top.out" "$(hex "${CG##*/}")"
fi
kill "$hostile"; wait "$hostile" 2>/dev/null

# doctor: the attacker's O_DIRECT reader, run through a link named with all three, on a file named so.
ln -s "$READER" "$A/dr$C1$OSC$RLO"
ADIRECT=$A/direct$RLO$C1
"${AS_ATTACKER[@]}" sh -c 'head -c 1048576 /dev/urandom >"$1"' _ "$ADIRECT"
"${AS_ATTACKER[@]}" "$A/dr$C1$OSC$RLO" "$ADIRECT" "$A/direct.ready" &
reader=$!
on_exit "kill $reader 2>/dev/null"
wait_until 30 test -e "$A/direct.ready"
"$IOLENS" doctor 1 >"$T/out" 2>"$T/err"
clean "doctor (text), the attacker's O_DIRECT reader: clean" "$T/out" "$T/err"
shows "… its finding names the process, escaped" 'dr\xc2\x9b\xc2\x9d\xe2\x80\xae' "$T/out"
shows "… and the file, escaped" 'direct\xe2\x80\xae\xc2\x9b' "$T/out"
"$IOLENS" doctor --json 1 >"$T/out" 2>"$T/err"
clean "doctor --json: clean" "$T/out" "$T/err"
hn_check "… the process's and the file's names unescape to their bytes" json "$T/out" "$(hex "dr$C1$OSC$RLO")" "$(hex "${ADIRECT##*/}")"
# biotop: the same reader's block I/O, its row named.
if why=$(ebpf_expected); then
	rows "biotop (plain rows)" 'dr\xc2\x9b\xc2+ ' "dr$C1$OSC$RLO" "$IOLENS" biotop 0.3 2
else
	skip "biotop: $why"
fi
kill "$reader"; wait "$reader" 2>/dev/null

# A vtrace service named with all three, by the attacker, in a segment named after it: libvtrace's
# reader refuses the name (letters, digits, '.', '_', '-'); vstat, stat --vtrace, doctor and export
# say so, or leave it out, without a raw byte.
mkdir "$A/shm"
chmod 1777 "$A/shm"
SVC=sv$C1$OSC$RLO
mkfifo "$A/forge.in"
chmod 666 "$A/forge.in"
VTRACE_DIR=$A/shm "${AS_ATTACKER[@]}" "$VTFORGE" "$A/shm/vtrace.$SVC.%p" --service "$SVC" --hang --hold \
	<"$A/forge.in" >"$T/forge.out" &
forge=$!
on_exit "kill $forge 2>/dev/null"
exec {forge_in}>"$A/forge.in"
wait_until 30 grep -q ready "$T/forge.out"
for fmt in "" --json --csv; do
	VTRACE_DIR=$A/shm "$IOLENS" vstat $fmt >"$T/out" 2>"$T/err"
	clean "vstat ${fmt:---table}, a service named with C1 and an override: clean" "$T/out" "$T/err"
done
shows "… the segment refused, its name escaped" 'vtrace.sv\xc2\x9b\xc2\x9d\xe2\x80\xae.' "$T/err"
shows "… for its service's name" 'bad service name' "$T/err"
VTRACE_DIR=$A/shm "$IOLENS" stat --vtrace 0.2 2 >"$T/out" 2>"$T/err"
clean "stat --vtrace: clean" "$T/out" "$T/err"
VTRACE_DIR=$A/shm "$IOLENS" doctor 1 >"$T/out" 2>"$T/err"
clean "doctor: clean" "$T/out" "$T/err"
VTRACE_DIR=$A/shm "$IOLENS" export --once >"$T/out" 2>"$T/err"
clean "export --once: clean" "$T/out" "$T/err"
exec {forge_in}>&-
wait "$forge" 2>/dev/null

# A mount point and source named with all three (what a user's FUSE mount can be), in a mount
# namespace of its own: export's filesystem labels escape them, and Prometheus still reads them.
if is_root && command -v unshare >/dev/null; then
	MNT=$A/mnt$OSC$RLO
	mkdir "$MNT"
	unshare -m --propagation private sh -c 'mount -t tmpfs -o size=1m "$1" "$2" && exec "$3" export --once' \
		_ "src$C1$RLO" "$MNT" "$IOLENS" >"$T/out" 2>"$T/err"
	clean "export --once, a mount point and source with C1 and an override: clean" "$T/out" "$T/err"
	shows "… the mount point's label escaped (and its backslashes as the exposition text writes them)" \
		'mnt\\xc2\\x9d\\xe2\\x80\\xae"' "$T/out"
	hn_check "… each label value reads back to its bytes" prom "$T/out" "$(hex "${MNT##*/}")" "$(hex "src$C1$RLO")"
	if command -v promtool >/dev/null; then
		check_eq "… promtool check metrics accepts it" "" "$(promtool check metrics <"$T/out" 2>&1)"
	fi
else
	skip "a mount with a hostile name: needs root for a mount namespace"
fi

# ---- bench: a target in a directory with a hostile name --------------------------------------------
B=$T/$'bench\e[31m\a\r\xff\x80'
mkdir "$B"
for fmt in "" --json --csv; do
	"$IOLENS" bench --bs 4k --size 1m $fmt "$B" >"$T/out" 2>"$T/err"
	hn_check "bench ${fmt:---table}: clean" clean "$T/out" "$T/err"
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
