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
for list in "" ",,,"; do
	run "$IOLENS" stat -M "$list" 0.1 1
	check_eq "-M '$list': no plugin named, exit 2 (not the default groups)" 2 "$RC"
done
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

# ---- Through the link: what dstat prints where iolens stat differs by design ---------------------
# heads OUTPUT: dstat's default message (when printed), then the two header rows.
heads() { awk '{ print } /^-/ && !t { t = 1; next } t { exit }' <<<"$1"; }
# layout LINE: a value line with only its separators kept: where '|' and ':' fall (the last group's
# width is the headers' to hold: a value there may be narrower on a line, in both tools).
layout() { sed 's/[^|:]/x/g; s/x*$//' <<<"$1"; }
disk=$(awk '$3 ~ /^(vd|sd|nvme|xvd|hd|mmcblk)[a-z0-9]*$/ && $3 !~ /p?[0-9]+$/ || $3 ~ /^nvme[0-9]+n[0-9]+$/ { print $3; exit }' /proc/diskstats)
# (an interface that carried packets: dstat leaves out the others)
net=$(awk -F'[: ]+' 'NR > 2 { sub(/^ +/, ""); split($0, f, /[: ]+/); if (f[1] != "lo" && f[3] > 0) { print f[1]; exit } }' /proc/net/dev)
link_cases=("-g" "-s" "-v" "-n" "-a" "" "-cdngy" "-D total${disk:+,$disk}" "-N total,lo" "-C 0,1,total" "-g -s -S total"
	"-c -C 0,total -d -D total${disk:+,$disk} -n -N total,lo" "-r -D total${disk:+,$disk}" "--net-packets -N total,lo" "-v -D total" "-t -g")
if $have_dstat; then
	for args in "${link_cases[@]}"; do
		theirs=$(timeout -k 5 30 dstat $args --nocolor 1 2 2>/dev/null)
		run "$T/dstat" $args --nocolor 1 2
		check_eq "dstat link ${args:-(no option)}: exit 0" 0 "$RC"
		check_eq "dstat link ${args:-(no option)}: dstat's headers, byte for byte" "$(heads "$theirs")" "$(heads "$OUT")"
		# (the first line, since boot, to the column; the second, its separators in order: a value
		# there may be a character narrower in one tool, as seen once with -r)
		check_eq "dstat link ${args:-(no option)}: dstat's row layout (widths, '|' and ':')" \
			"$(layout "$(tail -2 <<<"$theirs" | head -1)")|$(tail -1 <<<"$theirs" | tr -cd '|:')" \
			"$(layout "$(tail -2 <<<"$OUT" | head -1)")|$(tail -1 <<<"$OUT" | tr -cd '|:')"
	done
	# The network on the first line: 0, as dstat (which computes it from its second sample only).
	run "$T/dstat" -n -N total,lo${net:+,$net} --nocolor 1 1
	check_eq "dstat link -n: the first line's network is dstat's 0" "$(timeout -k 5 30 dstat -n -N total,lo${net:+,$net} --nocolor 1 1 2>/dev/null | sed -n 3p)" \
		"$(sed -n 3p <<<"$OUT")"
else
	skip "the dstat link against dstat: no dstat here"
fi
run "$IOLENS" stat -c -g -s -C 0,total 0.1 1
check_eq "iolens stat keeps its own look (page/swap, swp/total, '|' between cpus)" \
	"-----cpu0-usage---- --total-cpu-usage-- -------page/swap------- -swp/total-" "$(head -1 <<<"$OUT")"
check_match "… and '|' between the items of a group" "^usr sys idl wai stl\|usr" "$(sed -n 2p <<<"$OUT")"
run "$T/dstat" -D total 0.1 1
check_eq "dstat link without a group: dstat's message first, on stdout" "You did not select any stats, using -cdngy by default." "$(head -1 <<<"$OUT")"
run "$IOLENS" stat -D total 0.1 1
check_no_match "iolens stat without a group: no such message" "did not select" "$OUT"

# Values through the link, to /proc: paging is pswpin and pswpout times the page size (dstat_page),
# swap used and free are SwapTotal - SwapFree and SwapFree (/proc/meminfo). On the first line, the
# average since boot: over /proc/uptime. Read from the link's CSV, which has three decimals.
rm -f "$T/g.csv"
"$T/dstat" -g -s --output "$T/g.csv" 0.1 1 >/dev/null
read -r pswpin pswpout < <(awk '$1 == "pswpin" { i = $2 } $1 == "pswpout" { o = $2 } END { print i, o }' /proc/vmstat)
read -r up _ < /proc/uptime
read -r swap_total swap_free < <(awk '$1 == "SwapTotal:" { t = $2 } $1 == "SwapFree:" { f = $2 } END { print t * 1024, f * 1024 }' /proc/meminfo)
page=$(getconf PAGESIZE)
IFS=, read -r in out used free < <(sed -n 7p "$T/g.csv")
close_to() { awk -v a="$1" -v b="$2" -v tol="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(d <= tol * (m > 1 ? m : 1)) }'; }
check "dstat link -g: in, since boot, is pswpin x page size / uptime ($in; /proc: $pswpin pages in ${up}s)" \
	close_to "$in" "$(awk -v p="$pswpin" -v s="$page" -v u="$up" 'BEGIN { print p * s / u }')" 0.01
check "dstat link -g: out is pswpout x page size / uptime ($out; /proc: $pswpout pages)" \
	close_to "$out" "$(awk -v p="$pswpout" -v s="$page" -v u="$up" 'BEGIN { print p * s / u }')" 0.01
# (another session may swap meanwhile: within 5 % of SwapTotal)
check "dstat link -s: used is SwapTotal - SwapFree ($used; meminfo: $((swap_total - swap_free)))" \
	close_to "$used" "$((swap_total - swap_free))" "$(awk -v t="$swap_total" -v u="$((swap_total - swap_free))" 'BEGIN { print (u > 0 ? 0.05 * t / u : 0) }')"
check "dstat link -s: free is SwapFree ($free; meminfo: $swap_free)" \
	close_to "$free" "$swap_free" 0.05
# On a recording whose counters move (pswpin +2560 pages, pswpout +5120 in the interval), to the byte.
cp -r "$TOP/tests/fixtures/stat/vm1" "$T/vm"
sed -i 's/^pswpin .*/pswpin 1000/; s/^pswpout .*/pswpout 2000/' "$T/vm/1/proc/vmstat"
sed -i 's/^pswpin .*/pswpin 3560/; s/^pswpout .*/pswpout 7120/' "$T/vm/2/proc/vmstat"
rm -f "$T/r.csv"
IOLENS_REPLAY=$T/vm "$T/dstat" -g --output "$T/r.csv" 1 3 >/dev/null
elapsed=$(awk 'NR == FNR { a = $1; next } { printf "%.9f\n", ($1 - a) / 1e9 }' "$T/vm/1/time" "$T/vm/2/time")
check_eq "dstat link -g on a recording: (pswpin, pswpout) deltas x $page / ${elapsed}s" \
	"$(awk -v s="$page" -v e="$elapsed" 'BEGIN { printf "%.3f,%.3f\n", 2560 * s / e, 5120 * s / e }')" "$(sed -n 9p "$T/r.csv")"

# ---- --output through the link: dstat's CSV --------------------------------------------------------
# mask_date: the Date field of dstat's preamble, which neither run can fix.
mask_date() { sed 's/"Date:","[^"]*"/"Date:","DATE"/'; }
mkdir -p "$T/ours" "$T/theirs"
(cd "$T/ours" && "$T/dstat" -t -c -C 0,total -n -N total,lo -g -m --output out.csv 1 2 >/dev/null)
check_eq "dstat link --output: the preamble's first lines, as dstat 0.7.4 writes them" \
	"\"Dstat 0.8.0 CSV output\"|\"Author:\",\"Dag Wieers <dag@wieers.com>\",,,,\"URL:\",\"http://dag.wieers.com/home-made/dstat/\"" \
	"$(head -2 "$T/ours/out.csv" | tr '\n' '|' | sed 's/|$//')"
check_eq "dstat link --output: then Host and User" "\"Host:\",\"$(uname -n)\",,,,\"User:\",\"$(id -un)\"" "$(sed -n 3p "$T/ours/out.csv")"
check_eq "dstat link --output: a line per sample after 6 lines of preamble and headers" 8 "$(wc -l < "$T/ours/out.csv")"
check_match "dstat link --output: the time as shown, then values as dstat's printcsv (%.3f or whole)" \
	'^[0-9]{2}-[0-9]{2} [0-9:]{8}(,(-?[0-9]+|-?[0-9]+\.[0-9]{3}))+$' "$(sed -n 8p "$T/ours/out.csv")"
check_eq "dstat link --output: as many values as column names" \
	"$(sed -n 6p "$T/ours/out.csv" | tr ',' '\n' | wc -l)" "$(sed -n 8p "$T/ours/out.csv" | tr ',' '\n' | wc -l)"
check_eq "dstat link --output: the first line's network is 0, as on screen" ",0,0,0,0," \
	"$(sed -n 7p "$T/ours/out.csv" | cut -d, -f12-15 | sed 's/^/,/; s/$/,/')"
(cd "$T/ours" && "$T/dstat" -c --output out.csv 0.1 1 >/dev/null)
check_eq "dstat link --output to a file that exists: two blank lines, then Host, Cmdline and the headers" \
	"||\"Host:\"|\"Cmdline:\"|\"total cpu usage\"|\"usr\"" "$(sed -n '9,14p' "$T/ours/out.csv" | cut -d, -f1 | tr '\n' '|' | sed 's/|$//')"
if $have_dstat; then
	(cd "$T/theirs" && timeout -k 5 30 dstat -t -c -C 0,total -n -N total,lo -g -m --output out.csv 1 2 >/dev/null 2>&1)
	check_eq "dstat link --output: dstat's preamble (but the date) and header lines, byte for byte" \
		"$(sed 's/"Cmdline:","dstat/&/' "$T/theirs/out.csv" | head -6 | mask_date)" "$(head -6 "$T/ours/out.csv" | mask_date)"
	(cd "$T/theirs" && timeout -k 5 30 dstat -c --output out.csv 1 1 >/dev/null 2>&1)
	check_eq "dstat link --output, appending: dstat's lines (but the date)" \
		"$(sed -n '/^$/,$p' "$T/theirs/out.csv" | head -6 | mask_date | sed 's/ 1 1"/ N N"/')" \
		"$(sed -n '/^$/,$p' "$T/ours/out.csv" | head -6 | mask_date | sed 's/ 0.1 1"/ N N"/')"
fi
run "$IOLENS" stat -c --output "$T/own.csv" 0.1 1
check_match "iolens stat --output: its own CSV, no preamble" "^time_ns,since_boot,cpu_total_usr_pct" "$(head -1 "$T/own.csv")"

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

# ---- dstat's plugins, on the recording: exact output, and the values by dstat's formulas --------
FIX=$TOP/tests/fixtures/stat
cases=(
	"plugins-disk|--disk-util --disk-tps --disk-wait --disk-avgqu -D total,vda --nocolor 1 3"
	"plugins-mem|--mem-adv --vm-adv --net-packets -f --nocolor 1 3"
	"bits|-dn --bits --nocolor 1 3"
	"plugins-json|--json --disk-util --disk-tps --disk-wait --disk-avgqu --net-packets --mem-adv --vm-adv -D vda 1 3"
)
for c in "${cases[@]}"; do
	name=${c%%|*} args=${c#*|}
	OUT=$(IOLENS_REPLAY=$FIX/vm1 TZ=UTC "$IOLENS" stat $args 2>&1)
	if [ "${UPDATE_EXPECTED:-}" = 1 ]; then
		printf '%s\n' "$OUT" > "$FIX/expected/$name"
	fi
	check_eq "replay: $name (iolens stat $args)" "$(cat "$FIX/expected/$name" 2>/dev/null)" "$OUT"
done
line=$(IOLENS_REPLAY=$FIX/vm1 "$IOLENS" stat --json --disk-util --disk-tps --disk-wait --disk-avgqu --net-packets -N total,eth0 \
	--mem-adv --vm-adv -D total,vda 1 3 | sed -n 3p)
python3 - "$FIX/vm1" "$line" > "$T/checks" <<'PY'
import json, os, sys
root, line = sys.argv[1], json.loads(sys.argv[2])
def read(n, path): return open(os.path.join(root, str(n), path)).read()
t = [int(read(n, "time").split()[0]) for n in (1, 2)]
elapsed = (t[1] - t[0]) / 1e9
def close(name, ours, theirs, tol=0.001):
    ok = abs(ours - theirs) <= tol * max(1, abs(theirs))
    print(("ok" if ok else "BAD"), name, round(ours, 4), round(theirs, 4))
def disk(n, dev):
    for l in read(n, "proc/diskstats").splitlines():
        l = l.split()
        if l[2] == dev: return l
a, b = disk(1, "vda"), disk(2, "vda")
d = lambda i: int(b[i]) - int(a[i])
# dstat_disk_util.py: (tot_ticks delta) * hz / elapsed / 1000 with hz 100: ms of I/O in percent of the interval.
close("disk-util (dstat_disk_util.py)", line["util_vda"]["util_pct"], d(12) * 100 / elapsed / 1000)
# dstat_disk_tps.py: l[3] and l[7] deltas / elapsed.
close("disk-tps read (dstat_disk_tps.py)", line["tps_vda"]["read_per_s"], d(3) / elapsed)
close("disk-tps write", line["tps_vda"]["write_per_s"], d(7) / elapsed)
# dstat_disk_wait.py: rd_ticks delta / rd_ios delta (0 without reads), ms.
close("disk-wait read (dstat_disk_wait.py)", line["wait_vda"]["r_await_ns"] / 1e6, d(6) / d(3) if d(3) else 0)
close("disk-wait write", line["wait_vda"]["w_await_ns"] / 1e6, d(10) / d(7) if d(7) else 0)
# dstat_disk_avgqu.py: rq_ticks (l[13]) delta / elapsed / 1000.
close("disk-avgqu (dstat_disk_avgqu.py)", line["avgqu_vda"]["avgqu"], d(13) / elapsed / 1000)
def net(n, dev):
    for l in read(n, "proc/net/dev").replace(":", " ").splitlines()[2:]:
        l = l.split()
        if l[0] == dev: return int(l[2]), int(l[10])
(r0, s0), (r1, s1) = net(1, "eth0"), net(2, "eth0")
close("net-packets eth0 recv (dstat_net_packets.py)", line["pkt_eth0"]["recv_packets_per_s"], (r1 - r0) / elapsed)
close("net-packets eth0 send", line["pkt_eth0"]["send_packets_per_s"], (s1 - s0) / elapsed)
mem = {l.split(":")[0]: int(l.split()[1]) * 1024 for l in read(2, "proc/meminfo").splitlines()}
m = line["memory_adv"]
close("mem-adv total", m["total_bytes"], mem["MemTotal"])
close("mem-adv used (dstat_mem: MemTotal - MemFree - Buffers - Cached - SReclaimable + Shmem)", m["used_bytes"],
      mem["MemTotal"] - mem["MemFree"] - mem["Buffers"] - mem["Cached"] - mem["SReclaimable"] + mem["Shmem"])
close("mem-adv dirty", m["dirty_bytes"], mem["Dirty"])
close("mem-adv shmem", m["shmem_bytes"], mem["Shmem"])
close("mem-adv recl", m["reclaimable_bytes"], mem["SReclaimable"])
def vm(n):
    v = {}
    for l in read(n, "proc/vmstat").splitlines():
        k, x = l.split()
        v[k] = int(x)
    return v
va, vb = vm(1), vm(2)
def vsum(v, test): return sum(x for k, x in v.items() if test(k))
for key, test in (("steal_pages_per_s", lambda k: k.startswith("pgsteal_")),
                  ("scan_kswapd_pages_per_s", lambda k: k.startswith("pgscan_kswapd")),
                  ("scan_direct_pages_per_s", lambda k: k.startswith("pgscan_direct") and k != "pgscan_direct_throttle"),
                  ("pageoutrun_per_s", lambda k: k == "pageoutrun"),
                  ("allocstall_per_s", lambda k: k.startswith("allocstall"))):
    close("vm-adv " + key, line["vm_adv"][key], (vsum(vb, test) - vsum(va, test)) / elapsed)
PY
while read -r verdict rest; do
	if [ "$verdict" = ok ]; then ok "value: $rest"; else not_ok "value: $rest"; fi
done < "$T/checks"
check "values: 18 compared" test "$(wc -l < "$T/checks")" -eq 18
# --bits: the bytes of -d and -n times 8, in powers of 1000, as dstat's.
bytes=$(IOLENS_REPLAY=$FIX/vm1 "$IOLENS" stat --json -d --no-boot-sample 1 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["dsk_total"]["write_bytes_per_s"])')
OUT=$(IOLENS_REPLAY=$FIX/vm1 "$IOLENS" stat -d --bits --nocolor --no-boot-sample 1 1)
# dstat's dchg: divided by 1000 until the whole number fits the width less the unit (4).
check_eq "--bits: $bytes bytes/s written, in bits as dstat shows them" \
	"$(python3 -c "
v, u = $bytes * 8, 0
while len('%d' % round(v)) > 4: v, u = v / 1000, u + 1
print('%d%s' % (round(v), 'bkMGT'[u]))")" "$(sed -n 3p <<<"$OUT" | awk '{ print $2 }')"
check_eq "--bits: JSON stays in bytes" \
	"$(IOLENS_REPLAY=$FIX/vm1 "$IOLENS" stat --json -d 1 2)" "$(IOLENS_REPLAY=$FIX/vm1 "$IOLENS" stat --json --bits -d 1 2)"

# ---- dstat's plugins, live: the same headers as dstat's, the values against /proc --------------
if $have_dstat; then
	for args in "--mem-adv --vm-adv --zones" "--proc-count" "--net-packets" "--disk-tps" "-dn --bits" "--disk-util -D $(ls /sys/block | grep -v '^loop\|^zram\|^ram' | head -1)"; do
		OUT=$("$IOLENS" stat $args 1 1 2>&1)
		check_eq "$args: dstat's headers" "$(dstat_headers $args)" "$(headers "$OUT")"
	done
fi
read -r ours_high ours_normal_high < <("$IOLENS" stat --json --zones 0.1 1 |
	python3 -c 'import json,sys; z=json.load(sys.stdin)["zones"]; print(z["dma32_high_pages"], z["normal_high_pages"])')
theirs=$(awk '/^Node/ { zone = $4; seen = 0 } $1 == "high" && !seen { high[zone] += $2; seen = 1 }
	END { print (("DMA32" in high) ? high["DMA32"] : "None"), (("Normal" in high) ? high["Normal"] : "None") }' /proc/zoneinfo)
check_eq "--zones: the high watermarks of /proc/zoneinfo (pages)" "$theirs" "$ours_high $ours_normal_high"
# (Other sessions start and end processes meanwhile: within 10 % of a count between two listings,
# tried again while processes come and go faster than that, as on a busy machine.)
proc_count_near() {
	local before after lo hi
	before=$(ls -d /proc/[0-9]* 2>/dev/null | wc -l)
	count=$("$IOLENS" stat --json --proc-count 0.1 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["proc_count"]["total"])')
	after=$(ls -d /proc/[0-9]* 2>/dev/null | wc -l)
	listed="$before and $after"
	lo=$((before < after ? before : after)) hi=$((before > after ? before : after))
	[ $(((lo - count) * 10)) -le "$lo" ] && [ $(((count - hi) * 10)) -le "$hi" ]
}
near=no
wait_until 30 proc_count_near && near=yes
check_eq "--proc-count: the pid directories of /proc ($count, ls says $listed)" yes "$near"
# A process started: one more (a count we cause: N sleepers). In a pid namespace of its own, with
# its own /proc, where nothing else starts or ends processes: the shell, N sleepers and iolens.
# shellcheck disable=SC2016 # expanded by the inner shell
in_pid_ns() {
	unshare --pid --fork --mount-proc sh -c 'for i in $(seq "$1"); do sleep 30 & done
"$2" stat --json --proc-count 0.1 1; kill $(jobs -p) 2>/dev/null' _ "$1" "$IOLENS" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["proc_count"]["total"])'
}
if is_root && command -v unshare >/dev/null; then
	check_eq "--proc-count: in a pid namespace, its shell and iolens" 2 "$(in_pid_ns 0)"
	check_eq "… and 20 sleepers started there: 20 more" 22 "$(in_pid_ns 20)"
else
	skip "--proc-count: processes started, counted in a pid namespace of the test's own (needs root)"
fi

# ---- Cost: each socket group reads only its own files (/proc/net/tcp alone can cost milliseconds) ---
if command -v strace >/dev/null; then
	for case in "--unix:unix" "--tcp:tcp tcp6" "--udp:udp udp6" "--raw:raw raw6" "--socket:sockstat sockstat6" \
		"--tcp --unix:tcp tcp6 unix"; do
		args=${case%%:*} want=${case#*:}
		opened=$(strace -f -e trace=openat "$IOLENS" stat $args --nocolor 0.1 2 2>&1 >/dev/null |
			sed -n 's/.*"\/\{0,1\}proc\/net\/\([a-z0-9_]*\)".*/\1/p' | sort -u | tr '\n' ' ' | sed 's/ $//')
		check_eq "stat $args opens only /proc/net/{${want// /,}}" "$(tr ' ' '\n' <<<"$want" | sort | tr '\n' ' ' | sed 's/ $//')" "$opened"
	done
else
	skip "which files the socket groups open: needs strace"
fi

echo "1..$t_count"
