#!/usr/bin/env bash
# stat_dstat.sh: iolens stat takes what dstat users type (-T, -o, -M, --list, --color, --pidfile, DSTAT_OPTS, DSTAT_TIMEFMT, TERM), each as dstat does, compared with dstat's own output where it prints the same.
. "$(dirname "$0")/lib.sh"

have_dstat=false
command -v dstat >/dev/null && dstat --version >/dev/null 2>&1 && have_dstat=true
# headers OUTPUT: its two header lines (the values differ from one tool to the other; the headers must not).
headers() { head -2 <<<"$1"; }
# dstat_headers ARGS...: dstat's header lines for those options (one sample; its values are not compared).
dstat_headers() { timeout -k 5 30 dstat "$@" 1 1 2>/dev/null | head -2; }

ln -s "$IOLENS" "$T/dstat"

# ---- -T, --epoch ---------------------------------------------------------------------------------
run "$IOLENS" stat -T -c 0.2 2
check_eq "-T: exit 0" 0 "$RC"
check_eq "-T: dstat's epoch title and column" "--epoch--- --total-cpu-usage--|  epoch   |usr sys idl wai stl" \
	"$(headers "$OUT" | tr '\n' '|' | sed 's/|$//')"
now=$(date +%s)
epoch=$(sed -n 3p <<<"$OUT" | cut -c1-10)
check "-T: the seconds since the epoch ($epoch, date says $now)" test $((now - epoch)) -ge 0 -a $((now - epoch)) -le 3
run "$IOLENS" stat --epoch --json 0.1 1
check_no_match "--epoch: not in JSON (time_ns says it)" '"epoch"' "$OUT"
if $have_dstat; then
	run "$IOLENS" stat -T -t -c 1 1
	check_eq "-T -t -c: dstat's headers" "$(dstat_headers -T -t -c)" "$(headers "$OUT")"
fi

# ---- DSTAT_TIMEFMT ------------------------------------------------------------------------------
OUT=$(DSTAT_TIMEFMT='%H:%M' "$IOLENS" stat -t -c 0.1 1)
check_match "DSTAT_TIMEFMT=%H:%M: the time column is five wide" "^[0-2][0-9]:[0-5][0-9]\|" "$(sed -n 3p <<<"$OUT")"
check_eq "DSTAT_TIMEFMT=%H:%M: the title cut to the column, as dstat" "syste --total-cpu-usage--" "$(head -1 <<<"$OUT")"
OUT=$(DSTAT_TIMEFMT='%s' TZ=UTC "$IOLENS" stat -t 0.1 1)
value=$(sed -n 3p <<<"$OUT" | tr -d ' ')
check "DSTAT_TIMEFMT=%s: the epoch ($value)" test $(( $(date +%s) - value )) -le 3
if $have_dstat; then
	OUT=$(DSTAT_TIMEFMT='%Y-%m-%d %H:%M:%S' "$IOLENS" stat -t -c 1 1)
	check_eq "DSTAT_TIMEFMT='%Y-%m-%d %H:%M:%S': dstat's headers" \
		"$(DSTAT_TIMEFMT='%Y-%m-%d %H:%M:%S' dstat_headers -t -c)" "$(headers "$OUT")"
fi

# ---- DSTAT_OPTS ---------------------------------------------------------------------------------
OUT=$(DSTAT_OPTS="-c  --nocolor" "$IOLENS" stat -d 0.1 1)
check_eq "DSTAT_OPTS=-c, then -d: both groups, DSTAT_OPTS's first" "--total-cpu-usage-- -dsk/total-" "$(head -1 <<<"$OUT")"
OUT=$(DSTAT_OPTS="--bogus" "$IOLENS" stat -c 0.1 1 2>&1)
check_eq "DSTAT_OPTS with an unknown option: exit 2, as on the command line" 2 "$(DSTAT_OPTS="--bogus" "$IOLENS" stat -c 0.1 1 >/dev/null 2>&1; echo $?)"
OUT=$(DSTAT_OPTS="" "$IOLENS" stat -c 0.1 1)
check_eq "DSTAT_OPTS empty: nothing added" "--total-cpu-usage--" "$(head -1 <<<"$OUT")"
if $have_dstat; then
	OUT=$(DSTAT_OPTS="-c" "$IOLENS" stat -d 1 1)
	check_eq "DSTAT_OPTS=-c -d: dstat's headers" "$(DSTAT_OPTS="-c" dstat_headers -d)" "$(headers "$OUT")"
fi

# ---- -M, --list ---------------------------------------------------------------------------------
run "$IOLENS" stat -M cpu,disk,time 0.1 1
check_eq "-M cpu,disk,time: the groups in that order" "--total-cpu-usage-- -dsk/total- ----system----" "$(head -1 <<<"$OUT")"
run "$IOLENS" stat -M cpu-adv,epoch 0.1 1
check_match "-M cpu-adv: hiq and siq apart" "usr sys idl wai hiq siq stl" "$OUT"
run "$IOLENS" stat -M cpu,nosuchplugin 0.1 1
check_eq "-M with an unknown plugin: exit 2" 2 "$RC"
check_match "-M with an unknown plugin: said" "no plugin 'nosuchplugin'" "$ERR"
run "$IOLENS" stat --filesystem 0.1 1
check_match "--filesystem is --fs, as dstat" "^--filesystem-" "$OUT"
if $have_dstat; then
	run "$IOLENS" stat -M cpu,disk,net 1 1
	check_eq "-M cpu,disk,net: dstat's headers" "$(dstat_headers -M cpu,disk,net)" "$(headers "$OUT")"
fi
run "$IOLENS" stat --list
check_eq "--list: exit 0" 0 "$RC"
check_match "--list: dstat's format (a section title, then names after a tab)" $'^internal:\n\t' "$(head -2 <<<"$OUT")"
names=$(sed -n '/^internal:/,/^[a-z]/p' <<<"$OUT" | grep $'^\t' | tr -d '\t\n' | tr ',' ' ')
bad=
for name in $names; do
	"$IOLENS" stat -M "$name" --nocolor 0.1 1 >/dev/null 2>&1 || [ $? = 1 ] || bad="$bad $name"
done
check_eq "--list: every name listed is taken by -M" "" "$bad"
if $have_dstat; then
	theirs=$(dstat --list 2>/dev/null | tr -d '\t\n' | tr ',:' '  ')
	missing=
	for name in $names; do
		grep -qw -- "$name" <<<"$theirs" || missing="$missing $name"
	done
	check_eq "--list: every name in our 'internal' section is one of dstat's" "" "$missing"
fi
check "--list: no line wider than 80" test "$(awk '{ gsub(/\t/, "        "); if (length($0) > w) w = length($0) } END { print w + 0 }' <<<"$OUT")" -le 80

# ---- -o FILE ------------------------------------------------------------------------------------
run "$IOLENS" stat -c -o "$T/short.csv" 0.1 2
check_eq "-o FILE: exit 0" 0 "$RC"
check_match "-o FILE: the CSV header" "^time_ns,since_boot,cpu_total_usr_pct" "$(head -1 "$T/short.csv")"
check_eq "-o FILE: a line per sample" 3 "$(wc -l < "$T/short.csv")"

# ---- --pidfile ----------------------------------------------------------------------------------
"$IOLENS" stat -c --pidfile "$T/stat.pid" 0.1 > /dev/null &
pid=$!
wait_until test -s "$T/stat.pid"
check_eq "--pidfile: our pid, while we run" "$pid" "$(cat "$T/stat.pid")"
kill -INT $pid
wait $pid
check_eq "--pidfile: Ctrl-C: exit 0" 0 "$?"
check_fails "--pidfile: removed at the end" test -e "$T/stat.pid"
run "$IOLENS" stat -c --pidfile "$T/nosuchdir/stat.pid" 0.1 2
check_eq "--pidfile that cannot be written: the run goes on" 4 "$(wc -l <<<"$OUT")"
check_match "--pidfile that cannot be written: said" "nosuchdir/stat.pid: No such file" "$ERR"
check_eq "--pidfile that cannot be written: exit 1" 1 "$RC"

# ---- --version through the link -----------------------------------------------------------------
run "$T/dstat" --version
check_eq "dstat --version says what answers" "iolens stat $("$IOLENS" --version | cut -d' ' -f2) (dstat-compatible)" "$OUT"
run "$IOLENS" stat --version
check_match "iolens stat --version: as before" "^iolens stat [0-9.]+$" "$OUT"

# ---- Colour: --color, TERM ----------------------------------------------------------------------
run "$IOLENS" stat --color -c 0.1 2
check_match "--color on a pipe: colours" $'\033\\[' "$OUT"
run "$IOLENS" stat --nocolor --color -c 0.1 2
check_match "--nocolor then --color: the last wins, as in dstat" $'\033\\[' "$OUT"
run "$IOLENS" stat --color --nocolor -c 0.1 2
check_no_match "--color then --nocolor: none" $'\033' "$OUT"
run "$IOLENS" stat --color --json -c 0.1 1
check_no_match "--color --json: JSON has no colours" $'\033' "$OUT"
tty_out=$(TERM=dumb script -qec "'$IOLENS' stat -c 0.1 2" /dev/null)
check_no_match "TERM=dumb on a terminal: no escape at all" $'\033' "$tty_out"
tty_out=$(env -u TERM script -qec "'$IOLENS' stat -c 0.1 2" /dev/null)
check_no_match "no TERM on a terminal: no escape at all" $'\033' "$tty_out"
tty_out=$(TERM=xterm script -qec "'$IOLENS' stat -c 0.1 2" /dev/null)
check_match "TERM=xterm on a terminal: colours" $'\033\\[' "$tty_out"
tty_out=$(TERM=dumb script -qec "'$IOLENS' stat --color -c 0.1 2" /dev/null)
check_match "TERM=dumb with --color: colours" $'\033\\[' "$tty_out"
if $have_dstat; then
	tty_out=$(TERM=dumb script -qec "dstat -c 1 2" /dev/null)
	check_no_match "(dstat on TERM=dumb prints none either)" $'\033\\[[0-9;]*m' "$tty_out"
fi

# ---- Bad input ----------------------------------------------------------------------------------
for delay in 0x2 1e-9 1e2 inf nan 0.001 0.009 86401 100000 " 2" "2 " 2. .5 +2 1,5 ""; do
	run "$IOLENS" stat -c "$delay" 1
	check_eq "delay '$delay': exit 2" 2 "$RC"
	check_match "delay '$delay': said" "delay: '.*' is (not a number of seconds|out of range)" "$ERR"
done
for delay in 0.01 0.5 1 2 86400; do
	run "$IOLENS" stat -c "$delay" 1
	check_eq "delay '$delay': taken" 0 "$RC"
done
for args in "--csv --json" "--json --csv" "--json -c --csv"; do
	run "$IOLENS" stat $args -c 0.1 1
	check_eq "$args: exit 2" 2 "$RC"
	check_match "$args: said" "--csv and --json: choose one" "$ERR"
	check_eq "$args: nothing shown" "" "$OUT"
done
run "$IOLENS" stat --json --json -c 0.1 1
check_eq "--json twice: fine" 0 "$RC"

echo "1..$t_count"
