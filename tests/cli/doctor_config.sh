#!/usr/bin/env bash
# doctor_config.sh: what is normal here: a rule turned off, a process or a path accepted (a reader that uses O_DIRECT by design), a threshold set, from flags and from a file; findings so taken out are listed as accepted and do not count; bad statements and a file others could write are refused.
. "$(dirname "$0")/lib.sh"

READER=${BUILD:-$TOP/build}/tests/helpers/odirect_reader
[ -x "$READER" ] || skip_all "odirect_reader is not built (make check builds it)"
dq() { python3 "$TOP/tests/cli/doctor_query.py" "$@" 2>>"$T/dq.err"; }
# accepted JSON: "RULE|BY" lines of the accepted list.
accepted() { python3 -c 'import json, sys
for a in json.load(sys.stdin)["accepted"]: print(a["rule"] + "|" + a["by"])'; }

# The truth: a reader this test started, its file open with O_DIRECT for as long as it runs.
head -c $((4 << 20)) /dev/urandom >"$T/data.od"
"$READER" "$T/data.od" "$T/ready" 65536 & PID=$!
on_exit "kill $PID 2>/dev/null"
wait_until test -e "$T/ready"

run "$IOLENS" doctor --no-config --json 0.5
check_eq "no configuration: the reader's O_DIRECT is found" "$PID" "$(dq get odirect pid pid "$PID" <<<"$OUT")"
check_eq "… nothing accepted" "" "$(accepted <<<"$OUT")"

run "$IOLENS" doctor --no-config --json --accept 'odirect comm=odirect_reader' 0.5
check_eq "--accept 'odirect comm=odirect_reader': not a finding" absent "$(dq get odirect pid pid "$PID" <<<"$OUT")"
check_match "… but listed as accepted, and by what" "^odirect\|accept odirect comm=odirect_reader \(--accept\)$" "$(accepted <<<"$OUT")"
run "$IOLENS" doctor --no-config --json --accept "odirect path=$T/*.od" 0.5
check_eq "--accept 'odirect path=GLOB' of its file: not a finding" absent "$(dq get odirect pid pid "$PID" <<<"$OUT")"
check_match "… accepted by the path" "^odirect\|accept odirect path=$T/\*\.od \(--accept\)$" "$(accepted <<<"$OUT")"
run "$IOLENS" doctor --no-config --json --accept "odirect path=/elsewhere/*" 0.5
check_eq "… a glob that does not match its file: found" "$PID" "$(dq get odirect pid pid "$PID" <<<"$OUT")"
run "$IOLENS" doctor --no-config --json --accept '* comm=odirect_reader' 0.5
check_eq "--accept '* comm=NAME': every rule" absent "$(dq get odirect pid pid "$PID" <<<"$OUT")"
run "$IOLENS" doctor --no-config --json --disable odirect 0.5
check_eq "--disable odirect: no O_DIRECT finding, none accepted either" "absent|" \
	"$(dq get odirect pid pid "$PID" <<<"$OUT")|$(accepted <<<"$OUT")"
check_eq "… and nothing looked for: odirect_mode off" off "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["odirect_mode"])' <<<"$OUT")"
# (By its path: another test's reader may have the same name.)
run "$IOLENS" doctor --no-config --accept "odirect path=$T/*.od" 0.5
check_match "the text says what was accepted" "1 finding accepted as normal here \(--json lists them\): the first, process $PID \(odirect_reader\) does its I/O with O_DIRECT" "$OUT"

# The same from a file, as /etc/iolens/doctor.conf would say it.
printf '# what is normal here\n\naccept odirect comm=odirect_reader   # reads with O_DIRECT by design\n' >"$T/doctor.conf"
run "$IOLENS" doctor --config "$T/doctor.conf" --json 0.5
check_eq "--config FILE: its accept holds" absent "$(dq get odirect pid pid "$PID" <<<"$OUT")"
check_match "… said with the file and line" "^odirect\|accept odirect comm=odirect_reader \($T/doctor.conf:3\)$" "$(accepted <<<"$OUT")"
chmod 666 "$T/doctor.conf"
run "$IOLENS" doctor --config "$T/doctor.conf" 0
check_eq "a file others can write (it could silence doctor): refused, exit 2" 2 "$RC"
check_match "… said" "doctor.conf: writable by others \(mode 0666, uid [0-9]+\): not read" "$ERR"
chmod 644 "$T/doctor.conf"
printf 'disable odirect\naccept nosuch comm=x\n' >"$T/bad.conf"
run "$IOLENS" doctor --config "$T/bad.conf" 0
check_match "a bad line: exit 2, with the file and line" "^2 .*bad.conf:2: accept: unknown rule 'nosuch'" "$RC $ERR"
for args in "--disable nosuch" "--set full.warning_percent=abc" "--set nosuch=1" "--accept odirect" \
	"--accept 'odirect user=x'" "--set full.warning_percent=95 --set full.critical_percent=90" "--config $T/none"; do
	eval "run \"\$IOLENS\" doctor $args 0"
	check_eq "doctor $args: exit 2" 2 "$RC"
done
kill $PID; wait $PID 2>/dev/null

# Thresholds, held to what df says of a tmpfs the test fills.
if is_root; then
	mkdir -p "$T/fs"
	mount -t tmpfs -o size=1m none "$T/fs" && on_exit "umount '$T/fs'"
	head -c $((600 << 10)) /dev/zero >"$T/fs/fill"
	used=$(df --output=pcent "$T/fs" | tail -1 | tr -dc 0-9)
	run "$IOLENS" doctor --no-config --json 0
	check_eq "a tmpfs $used % used: no finding at the default 90 %" absent "$(dq get full severity mount "$T/fs" <<<"$OUT")"
	run "$IOLENS" doctor --no-config --json --set full.warning_percent=$((used - 5)) 0
	check_eq "--set full.warning_percent=$((used - 5)): a warning" warning "$(dq get full severity mount "$T/fs" <<<"$OUT")"
	run "$IOLENS" doctor --no-config --json --set full.warning_percent=$((used - 10)) --set full.critical_percent=$((used - 5)) 0
	check_eq "… full.critical_percent=$((used - 5)): critical, exit 4" "critical 4" "$(dq get full severity mount "$T/fs" <<<"$OUT") $RC"
	run "$IOLENS" doctor --no-config --json --set full.warning_percent=$((used - 5)) --accept "full path=$T/fs" 0
	check_eq "… and a mount accepted by its path: none" absent "$(dq get full severity mount "$T/fs" <<<"$OUT")"
else
	skip "thresholds on a tmpfs: needs root to mount one"
fi

# --help's --set list is the table the settings are parsed by: each name with its default is taken
# as it is written there, and an unknown name's message lists the same.
run "$IOLENS" doctor --help-all
set_list=$(sed -n '/--set NAME=VALUE/,/^$/p' <<<"$OUT" | tr -s ' \n' ' ' | sed 's/.*a threshold: //; s/ *$//')
replay=$(ls "$TOP"/tests/fixtures/doctor/*/snapshot | head -1)
names=0 taken=0
while read -r name value; do
	names=$((names + 1))
	"$IOLENS" doctor --no-config --set "$name=$value" --replay "$replay" >/dev/null 2>&1
	[ $? -ne 2 ] && taken=$((taken + 1))
done < <(tr ',' '\n' <<<"$set_list" | sed 's/^ *//; s/ (\(.*\))$/ \1/')
check "--help lists thresholds (found $names)" test "$names" -ge 5
check_eq "each --set NAME (DEFAULT) of --help is taken as NAME=DEFAULT" "$names" "$taken"
run "$IOLENS" doctor --no-config --set nosuch=1 --replay "$replay"
check_eq "an unknown setting: exit 2" 2 "$RC"
check_match "… and its message lists the thresholds --help lists" "unknown setting 'nosuch' \\($(sed 's/[().]/\\&/g' <<<"$set_list")\\)" "$ERR"

echo "1..$t_count"
