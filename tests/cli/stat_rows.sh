#!/usr/bin/env bash
# stat_rows.sh: iolens stat -x as a person reads it: iostat -x's rows, one per disk, fitted to the terminal's width (a pty of a set size, or COLUMNS), every column off a terminal; devices without a medium or any I/O left out (shown with --partitions=ALL), held to /proc/diskstats and sysfs; stderr in short lines, %cap said only when asked for.
. "$(dirname "$0")/lib.sh"
unset COLUMNS

# on_pty WIDTH ERRFILE COMMAND...: COMMAND's output on a terminal WIDTH columns wide (its stderr in ERRFILE).
on_pty() {
	python3 - "$@" <<'PY'
import fcntl, os, pty, struct, sys, termios
width, err, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, width, 0, 0))
    os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
    os.execvp(cmd[0], cmd)
out = b""
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace").replace("\r\n", "\n"))
sys.exit(os.waitstatus_to_exitcode(status))
PY
}
# widest FILE: the longest line's width, escapes left out.
widest() { sed 's/\x1b\[[0-9;]*m//g' "$1" | awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }'; }
# rows FILE: the devices of the last report's rows.
rows() { awk '$1 == "Device" { n = "" ; on = 1; next } /^$/ { on = 0 } on { n = n (n ? " " : "") $1 } END { print n }' "$1"; }
# whole_disks: the devices the man page says -x shows by default: whole (no partition file in
# sysfs), with a size, and with I/O since boot (reads, writes, discards or flushes), sorted.
whole_disks() {
	awk '{ print $3, $4 + $8 + ($15 == "" ? 0 : $15) + ($19 == "" ? 0 : $19) }' /proc/diskstats | while read -r name ios; do
		d=/sys/class/block/${name//\//!}
		[ -e "$d/partition" ] && continue
		[ "$ios" -gt 0 ] && [ "$(cat "$d/size" 2>/dev/null || echo 1)" -gt 0 ] && echo "$name"
	done | sort | tr '\n' ' ' | sed 's/ $//'
}
# subset A B: every word of A is in B.
subset() { local w; for w in $1; do [[ " $2 " == *" $w "* ]] || return 1; done; }

# ---- A terminal of 80 columns: iostat -x's first columns, a row per disk, no line wider -------------
before=$(whole_disks)
on_pty 80 "$T/80.err" "$IOLENS" stat -x --nocolor 1 2 >"$T/80.out"
check_eq "80 columns: exit 0" 0 $?
after=$(whole_disks)
sed 's/^/# /' "$T/80.out"
check "80 columns: no line wider than 80 ($(widest "$T/80.out"))" [ "$(widest "$T/80.out")" -le 80 ]
check_match "… iostat -x's header, the columns that fit, '>' for those left out" \
	"^Device +r/s +rkB/s +r_await +w/s +wkB/s +w_await +aqu-sz +%util >$" "$(grep -m1 '^Device' "$T/80.out")"
check_eq "… two reports (since boot, then the second), each with its header" 2 "$(grep -c '^Device' "$T/80.out")"
shown=$(rows "$T/80.out")
echo "# shown: $shown; whole disks with a size and I/O, before: $before, after: $after"
common=$(comm -12 <(tr ' ' '\n' <<<"$before" | sort) <(tr ' ' '\n' <<<"$after" | sort) | tr '\n' ' ')
check "… a row for each whole disk with a size and I/O since boot ($common)" subset "$common" "$shown"
check "… and for no other device" subset "$shown" "$before $after"
check_eq "… each row has a value per column" "" \
	"$(awk '$1 == "Device" { n = NF - ($NF == ">") ; next } NF && NF != n' "$T/80.out")"
check_eq "… values with two decimals, as iostat's" "" \
	"$(awk '$1 == "Device" { h = 1; next } h && NF { for (i = 2; i <= NF; i++) if ($i != "-" && $i !~ /^[0-9]+\.[0-9][0-9]$/) print $i }' "$T/80.out")"
check_eq "… nothing on stderr (%cap not asked for)" "" "$(cat "$T/80.err")"

# Wider: more columns, in iostat's order; wide enough, all of them and no '>'.
on_pty 132 "$T/132.err" "$IOLENS" stat -x --nocolor --no-boot-sample 1 1 >"$T/132.out"
check "132 columns: no line wider ($(widest "$T/132.out"))" [ "$(widest "$T/132.out")" -le 132 ]
check_match "… iostat's sizes and merges come in" "^Device +r/s +rkB/s +rrqm/s .* rareq-sz +w/s .* wareq-sz .*%util" \
	"$(grep -m1 '^Device' "$T/132.out")"
on_pty 300 "$T/300.err" "$IOLENS" stat -x --nocolor --no-boot-sample 1 1 >"$T/300.out"
iostat_header=$(env -u POSIXLY_CORRECT iostat -x -d 1 1 2>/dev/null | grep -m1 '^Device' | tr -s ' ')
check_match "300 columns: every column of iostat -x, in its order, and no '>'" \
	"^${iostat_header//%/%}( r_p50 r_p99 r_max w_p50 w_p99 w_max)?$" "$(grep -m1 '^Device' "$T/300.out" | tr -s ' ')"

# Other groups: their dstat line above the rows, as before.
on_pty 80 "$T/cx.err" "$IOLENS" stat -c -x --nocolor --no-boot-sample 1 1 >"$T/cx.out"
check_match "-c -x: the cpu group's dstat header, line, then the rows" \
	"^-+total-cpu-usage-+ usr sys idl wai stl [0-9 ]+ Device" "$(tr '\n' ' ' <"$T/cx.out" | tr -s ' ')"

# ---- Off a terminal ------------------------------------------------------------------------------
run "$IOLENS" stat -x --no-boot-sample 1 1
check_match "a pipe: every column, as iostat -x piped" "^Device +r/s +rkB/s +rrqm/s +%rrqm .* f/s +f_await +aqu-sz +%util" \
	"$(head -1 <<<"$OUT")"
run env COLUMNS=80 "$IOLENS" stat -x --no-boot-sample 1 1
check "COLUMNS=80 fits a pipe to 80 (as watch sets it)" [ "$(echo "$OUT" > "$T/c80"; widest "$T/c80")" -le 80 ]

# ---- A loop device detached after I/O: in diskstats with its counts, no size -------------------------
if is_root && command -v losetup >/dev/null; then
	make_file "$T/gone.img" $((4 << 20))
	if loopdev=$(loop_attach_apart "$T/gone.img"); then
		on_exit "loop_release $loopdev $T/gone.img"
		gone=${loopdev#/dev/}
		# (A loop device's counters outlive its attachments: those of its earlier users too.)
		before=$(awk -v d="$gone" '$3 == d { print $4 }' /proc/diskstats)
		dd if="$loopdev" of=/dev/null bs=64k count=8 iflag=direct status=none
		losetup -d "$loopdev"
		wait_until 10 test "$(cat /sys/class/block/$gone/size)" = 0
		reads=$(awk -v d="$gone" '$3 == d { print $4 }' /proc/diskstats)
		check_eq "the truth: $gone has no size, and the 8 reads in /proc/diskstats" "0 8" \
			"$(cat /sys/class/block/$gone/size) $((reads - ${before:-0}))"
		run "$IOLENS" stat -x 0.1 1
		check_no_match "-x: $gone (no medium) left out" "^$gone " "$OUT"
		run "$IOLENS" stat -x --partitions=ALL 0.1 1
		check_match "--partitions=ALL: shown, as iostat -p ALL shows every device" "^$gone " "$OUT"
		# Since boot its counters stand still: the row is their arithmetic.
		row=$(awk -v d="$gone" '$1 == "Device" { for (i = 1; i <= NF; i++) h[i] = $i } $1 == d { for (i = 2; i <= NF; i++) printf "%s=%s ", h[i], $i }' <<<"$OUT")
		echo "# $gone: $row"
		truth=$(awk -v d="$gone" '$3 == d { printf "rareq-sz=%.2f r_await=%.2f", $6 / 2 / $4, $7 / $4 }' /proc/diskstats)
		check_eq "… its rareq-sz (64 KiB reads) and r_await as /proc/diskstats gives them" "$truth" \
			"$(grep -o 'rareq-sz=[^ ]*' <<<"$row") $(grep -o 'r_await=[^ ]*' <<<"$row")"
		run "$IOLENS" stat -x -D "$gone" 0.1 1
		check_match "-D $gone: a disk named is shown all the same" "^$gone " "$OUT"
	else
		skip "a detached loop device: no loop device free from 200 on"
	fi
else
	skip "a detached loop device: needs root and losetup"
fi

# ---- stderr: short lines, said once, of what was asked --------------------------------------------
run "$IOLENS" stat -x --capacity-dir "$T/none" 0.1 3
check_eq "--capacity-dir without capacities: one line" 1 "$(grep -c . <<<"$ERR")"
check_match "… of %cap" "^iolens stat: %cap of [^ ]+ is '-': no capacity saved" "$ERR"
longest() { awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' "$@"; }
: >"$T/all.err"
for args in "-x 0.1 2" "-x --latency 0.1 2" "-x --capacity-dir $T/none 0.1 2" "-x --top-bio --cache --psi 0.1 2" "--json -x --top-bio 0.1 2"; do
	"$IOLENS" stat $args >/dev/null 2>>"$T/all.err"
	IOLENS_REPLAY=$TOP/tests/fixtures/stat/vm1 "$IOLENS" stat $args >/dev/null 2>>"$T/all.err"
	if is_root && command -v setpriv >/dev/null; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$IOLENS" stat $args >/dev/null 2>>"$T/all.err"
	fi
done
sed 's/^/# stderr: /' "$T/all.err"
check "every stderr line of stat -x (root, nobody, a recording) within 100 characters ($(longest "$T/all.err"))" \
	[ "$(longest "$T/all.err")" -le 100 ]

echo "1..$t_count"
