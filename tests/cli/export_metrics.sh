#!/usr/bin/env bash
# export_metrics.sh: iolens export's node_exporter-style switches and series: collectors on and off, the disk filter on a loop device, filesystems against df, vmstat against /proc/vmstat, process_* against /proc/PID, a hung mount, and no histogram for an op that never ran.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || skip_all "no curl (make test-deps)"
PROMTOOL=$(command -v promtool || true)
VTLOAD=${BUILD:-$TOP/build}/tests/helpers/vtload
FPT=${BUILD:-$TOP/build}/examples/fuse-passthrough
export VTRACE_DIR=$T/vtrace
mkdir -p "$VTRACE_DIR"

# promtool_ok DESCRIPTION TEXT: promtool check metrics finds nothing to say.
promtool_ok() {
	if [ -n "$PROMTOOL" ]; then
		check_eq "$1: promtool check metrics accepts it" "" "$(promtool check metrics <<<"$2" 2>&1)"
	else
		skip "$1: promtool is not installed (make test-deps: prometheus)"
	fi
}
# sample NAME [LABELS] <<<TEXT: the value of one sample ("" when absent). LABELS as printed: {a="b",...}
sample() { awk -v key="$1$2" '$1 == key { print $2; found = 1; exit } END { if (!found) print "" }'; }
# families TEXT: the names of its samples, without labels and suffixes of histograms, one a line.
families() { grep -v '^#' <<<"$1" | sed -E 's/[{ ].*//' | sort -u; }

# ---- A libvtrace server, so that the vtrace collector has something to say ---------------------------

if [ -x "$VTLOAD" ]; then
	start_vtload demo RAN=1 NEVER=2
	vtload_say "run RAN 50 20000"
fi

# ---- Collectors: all on by default; each off by name; disable-defaults ---------------------------------

declare -A PREFIX=([diskstats]=iolens_disk_ [filesystem]=iolens_filesystem_ [pagecache]='iolens_(page_cache|dirty|writeback)_'
	[pressure]=iolens_pressure_ [process]=process_ [vmstat]=iolens_vmstat_ [vtrace]=iolens_vtrace_)
run "$IOLENS" export --once
check_eq "export --once: exit 0" 0 "$RC"
ALL=$OUT
promtool_ok "all collectors" "$ALL"
for c in diskstats filesystem pagecache pressure process vmstat vtrace; do
	if [ "$c" = vtrace ] && [ ! -x "$VTLOAD" ]; then skip "vtrace: vtload is not built (make check builds it)"; continue; fi
	if [ "$c" = pressure ] && [ ! -r /proc/pressure/io ]; then skip "pressure: no /proc/pressure (CONFIG_PSI)"; continue; fi
	check_match "by default: the $c collector's ${PREFIX[$c]}* series" "^${PREFIX[$c]}[a-z_]+(\{| )" "$ALL"
	run "$IOLENS" export --once "--no-collector.$c"
	others=$(families "$OUT" | grep -vE "^${PREFIX[$c]}" | tr '\n' ' ')
	want=$(families "$ALL" | grep -vE "^${PREFIX[$c]}" | tr '\n' ' ')
	check_eq "--no-collector.$c: exit 0, none of ${PREFIX[$c]}*, every other family still there" "0 0 $want" \
		"$RC $(grep -cE "^${PREFIX[$c]}" <<<"$OUT") $others"
done
run "$IOLENS" export --once --collector.disable-defaults --collector.vmstat
check_eq "--collector.disable-defaults --collector.vmstat: vmstat's series and the exporter's own, nothing else" \
	"iolens_build_info iolens_export_scrapes_total" \
	"$(families "$OUT" | grep -v '^iolens_vmstat_' | tr '\n' ' ' | sed 's/ $//')"
check_match "… with vmstat's" "^iolens_vmstat_pgpgin_total [0-9]+$" "$OUT"
run "$IOLENS" export --once --collector.disable-defaults --collector.vmstat --no-collector.vmstat
check_eq "… the last of --collector.vmstat and --no-collector.vmstat counts" 0 "$(grep -c '^iolens_vmstat_' <<<"$OUT")"
run "$IOLENS" export --once --collector.nope
check_eq "--collector.nope: exit 2" 2 "$RC"
check_match "… saying which collectors there are" "collector.nope: no such collector.*disklatency, diskstats, filesystem, pagecache, pressure, process, vmstat, vtrace" "$ERR"
run "$IOLENS" export --once --no-collector.disk
check_eq "--no-collector.disk (an abbreviation): exit 2, not taken for diskstats" 2 "$RC"

# ---- Disk filters: a loop device of the test's, absent by default, there with an include ------------------

for args in "--collector.diskstats.device-include (" "--collector.diskstats.device-exclude [z-a]" \
	"--collector.diskstats.device-include ^loop\\d+$" "--collector.diskstats.device-include a --collector.diskstats.device-exclude b" \
	"--collector.filesystem.mount-points-exclude (("; do
	run "$IOLENS" export --once $args
	check_eq "export $args: exit 2" 2 "$RC"
done
check_match "… a bad regex said with regerror's words" "device-exclude '\[z-a\]': Invalid range end" \
	"$("$IOLENS" export --once --collector.diskstats.device-exclude '[z-a]' 2>&1)"
check_match "… \\d refused, with the ERE to write" "POSIX ERE has no .d: write \[0-9\]" \
	"$("$IOLENS" export --once --collector.diskstats.device-include '^loop\d+$' 2>&1)"
if ! is_root || ! command -v losetup >/dev/null; then
	skip "the loop device: losetup needs root"
else
	make_file "$T/disk.img" $((4 << 20))
	LOOPDEV=$(losetup -f --show "$T/disk.img")
	on_exit "loop_release $LOOPDEV $T/disk.img"
	loop=${LOOPDEV#/dev/}
	dd if="$LOOPDEV" of=/dev/null bs=4096 count=64 iflag=direct status=none
	reads=$(awk -v d="$loop" '$3 == d { print $4 }' /proc/diskstats)
	# The documented default exclude, as awk reads it: what the exporter must keep and leave out.
	kept=$(awk '$3 !~ /^(z?ram|loop|fd|(h|s|v|xv)d[a-z]|nvme[0-9]+n[0-9]+p)[0-9]+$/ { print $3 }' /proc/diskstats | sort | tr '\n' ' ')
	run "$IOLENS" export --once
	check_eq "the default filter: $loop has no series" 0 "$(grep -c "device=\"$loop\"" <<<"$OUT")"
	check_eq "… the disks kept are /proc/diskstats's but loop, ram, zram, floppies and partitions" "$kept" \
		"$(grep '^iolens_disk_reads_completed_total{' <<<"$OUT" | sed -E 's/.*device="([^"]*)".*/\1/' | sort | tr '\n' ' ')"
	run "$IOLENS" export --once --collector.diskstats.device-include "^$loop\$"
	check_eq "--collector.diskstats.device-include ^$loop\$: its reads completed as /proc/diskstats says, and no other disk" \
		"$reads 1" "$(sample iolens_disk_reads_completed_total "{device=\"$loop\"}" <<<"$OUT") $(grep -c '^iolens_disk_reads_completed_total' <<<"$OUT")"
	promtool_ok "… " "$OUT"
	first=${kept%% *}
	run "$IOLENS" export --once --collector.diskstats.device-exclude "^$first\$"
	check_eq "--collector.diskstats.device-exclude ^$first\$: replaces the default ($loop back, $first gone)" "$reads 0" \
		"$(sample iolens_disk_reads_completed_total "{device=\"$loop\"}" <<<"$OUT") $(grep -c "device=\"$first\"" <<<"$OUT")"
fi

# ---- Filesystems, against df: a tmpfs the test mounts (exact), and / (size exact, avail within what others write) -

fs_labels() { echo "{device=\"$1\",fstype=\"$2\",mountpoint=\"$3\"}"; }
if is_root; then
	mkdir -p "$T/tmpfs"
	mount -t tmpfs -o size=8m,nr_inodes=1000 iolens-test "$T/tmpfs"
	on_exit "umount -l '$T/tmpfs' 2>/dev/null"
	make_file "$T/tmpfs/data" $((1 << 20))
	touch "$T/tmpfs/a" "$T/tmpfs/b"
	run "$IOLENS" export --once --collector.disable-defaults --collector.filesystem
	L=$(fs_labels iolens-test tmpfs "$T/tmpfs")
	read -r size used avail itotal iavail < <(df -B1 --output=size,used,avail,itotal,iavail "$T/tmpfs" | tail -1)
	check_eq "a tmpfs of 8 MiB with 1 MiB and 3 files in it: size, free, avail, files, files free as df -B1 says" \
		"$size $((size - used)) $avail $itotal $iavail" \
		"$(for m in size_bytes free_bytes avail_bytes files files_free; do sample "iolens_filesystem_$m" "$L" <<<"$OUT"; done | tr '\n' ' ' | sed 's/ $//')"
	check_eq "… df's own numbers are those of the mount (8 MiB, 1000 inodes, 1 MiB and 4 inodes used)" \
		"8388608 1048576 1000 996" "$size $used $itotal $iavail"
	check_eq "… read-write, answered" "0 0" \
		"$(sample iolens_filesystem_readonly "$L" <<<"$OUT") $(sample iolens_filesystem_device_error "$L" <<<"$OUT")"
else
	skip "a tmpfs of the test's: mounting needs root"
fi
root_dev=$(awk '$2 == "/" { dev = $1; type = $3 } END { print dev, type }' /proc/self/mounts)
read -r rsize ravail1 rfiles < <(df -B1 --output=size,avail,itotal / | tail -1)
run "$IOLENS" export --once --collector.disable-defaults --collector.filesystem
ravail2=$(df -B1 --output=avail / | tail -1)
L=$(fs_labels ${root_dev% *} ${root_dev#* } /)
got_avail=$(sample iolens_filesystem_avail_bytes "$L" <<<"$OUT")
check_eq "/: size and files as df says" "$rsize $rfiles" \
	"$(sample iolens_filesystem_size_bytes "$L" <<<"$OUT") $(sample iolens_filesystem_files "$L" <<<"$OUT")"
# Others write to / meanwhile: avail is held to df's before and after, 64 MiB apart at most (free, which
# counts root's reserved blocks, is 5 % of the disk above it on ext4).
check "/: avail between df's before and after it ($ravail1 $got_avail $ravail2)" awk -v a="$ravail1" -v b="$ravail2" -v x="$got_avail" \
	'BEGIN { lo = a < b ? a : b; hi = a < b ? b : a; exit !(x != "" && x >= lo - 67108864 && x <= hi + 67108864) }'
check_eq "no pseudo filesystem (proc, sysfs, cgroup, devpts, devtmpfs)" "" \
	"$(grep -E '^iolens_filesystem_[a-z_]+\{.*fstype="(proc|sysfs|cgroup2?|devpts|devtmpfs|mqueue)"' <<<"$OUT" | head -3)"
if awk '$2 == "/dev/shm" { found = 1 } END { exit !found }' /proc/self/mounts; then
	check_eq "/dev/shm left out by the default mount-points-exclude" 0 "$(grep -c 'mountpoint="/dev/shm"' <<<"$OUT")"
	run "$IOLENS" export --once --collector.disable-defaults --collector.filesystem --collector.filesystem.mount-points-exclude '^/proc'
	check_match "… there with another exclude" 'iolens_filesystem_size_bytes\{[^}]*mountpoint="/dev/shm"\}' "$OUT"
else
	skip "/dev/shm is not a mount here"
fi
promtool_ok "filesystems" "$OUT"

# ---- A mount whose statfs never returns: the exporter answers, says so, and asks it again only once its probe ended --

if ! is_root || [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null || [ ! -x "$FPT" ]; then
	skip "a hung mount: needs root, /dev/fuse, fusermount3 and $FPT"
else
	mkdir -p "$T/src" "$T/mnt"
	# In a mount namespace of the test's own: the server holds only the first statfs, which another
	# program on this machine (a doctor, an exporter) must not be the one to send; and their tests
	# must not find a hung mount of ours.
	unshare -m --propagation private sleep 100000 &
	NS=$!
	on_exit "kill $NS 2>/dev/null"
	for i in $(seq 100); do [ "$(readlink /proc/$NS/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] && break; sleep 0.05; done
	in_ns() { nsenter -t "$NS" -m "$@"; } # not for what runs in the background: $! would be a subshell's
	nsenter -t "$NS" -m "$FPT" --service mute --hang-op FUSE_STATFS "$T/src" "$T/mnt" 2>"$T/fpt.log" &
	FUSE=$!
	on_exit "kill -USR1 $FUSE 2>/dev/null; nsenter -t $NS -m fusermount3 -uz '$T/mnt' 2>/dev/null; kill $FUSE 2>/dev/null"
	for i in $(seq 100); do in_ns mountpoint -q "$T/mnt" && break; sleep 0.05; done
	port=$(free_port)
	nsenter -t "$NS" -m "$IOLENS" export --listen "127.0.0.1:$port" --collector.disable-defaults --collector.filesystem 2>"$T/export.err" &
	EXPORTER=$!
	on_exit "kill $EXPORTER 2>/dev/null"
	for i in $(seq 100); do curl -s -o /dev/null "127.0.0.1:$port/" && break; sleep 0.1; done
	M="mountpoint=\"$T/mnt\""
	# Children of the exporter: its probes left waiting (another hung mount on this machine has its own).
	children() { children_of "$EXPORTER" | wc -l; }
	OUT=$(curl -s --max-time 60 "127.0.0.1:$port/metrics")
	after_one=$(children)
	for scrape in 2 3; do OUT=$(curl -s --max-time 60 "127.0.0.1:$port/metrics"); done
	check_match "the hung mount: iolens_filesystem_device_error 1" "^iolens_filesystem_device_error\{[^}]*$M\} 1$" "$OUT"
	check_eq "… and no made-up size for it" 0 "$(grep -c "^iolens_filesystem_size_bytes{[^}]*$M}" <<<"$OUT")"
	check_match "… the other mounts still measured" '^iolens_filesystem_size_bytes\{[^}]*mountpoint="/"\} [0-9]+$' "$OUT"
	check "three scrapes, one probe left waiting on it, not one a scrape (children after one: $after_one, after three: $(children))" \
		test "$after_one" -ge 1 -a "$(children)" -eq "$after_one"
	check_eq "… the server got the one statfs, held" 1 "$(grep -c 'FUSE_STATFS hangs' "$T/fpt.log")"
	kill -USR1 "$FUSE" # the server answers the statfs it held, and the next ones
	for i in $(seq 100); do
		OUT=$(curl -s --max-time 60 "127.0.0.1:$port/metrics")
		grep -qE "^iolens_filesystem_size_bytes\{[^}]*$M\} [0-9]+$" <<<"$OUT" && break
		sleep 0.05
	done
	check_match "released: the mount measured again" "^iolens_filesystem_size_bytes\{[^}]*$M\} [0-9]+$" "$OUT"
	check_eq "… and the probe that waited reaped: one child fewer" "$((after_one - 1))" "$(children)"
	kill "$EXPORTER"; wait "$EXPORTER" 2>/dev/null
fi

# ---- vmstat: each counter between two reads of /proc/vmstat around the scrape -----------------------------

before=$(cat /proc/vmstat)
run "$IOLENS" export --once --collector.disable-defaults --collector.vmstat
after=$(cat /proc/vmstat)
for c in pgpgin pgpgout pgfault pgmajfault pswpin pswpout workingset_refault_file workingset_refault_anon pgsteal_file pgscan_file; do
	a=$(awk -v k="$c" '$1 == k { print $2 }' <<<"$before")
	b=$(awk -v k="$c" '$1 == k { print $2 }' <<<"$after")
	x=$(sample "iolens_vmstat_${c}_total" <<<"$OUT")
	if [ -z "$a" ]; then
		check_eq "iolens_vmstat_${c}_total: absent, as from this kernel's /proc/vmstat" "" "$x"
		continue
	fi
	check "iolens_vmstat_${c}_total between /proc/vmstat's before and after ($a <= $x <= $b)" \
		awk -v a="$a" -v b="$b" -v x="$x" 'BEGIN { exit !(x != "" && x + 0 >= a + 0 && x + 0 <= b + 0) }'
done
check_match "… counters, with HELP" "# TYPE iolens_vmstat_workingset_refault_file_total counter" "$OUT"
promtool_ok "vmstat" "$OUT"

# ---- process_*: the exporter against /proc/PID of it ---------------------------------------------------------

port=$(free_port)
"$IOLENS" export --listen "127.0.0.1:$port" --collector.disable-defaults --collector.process 2>"$T/export.err" &
EXPORTER=$!
on_exit "kill $EXPORTER 2>/dev/null"
for i in $(seq 100); do curl -s -o /dev/null "127.0.0.1:$port/" && break; sleep 0.1; done
HZ=$(getconf CLK_TCK)
cpu_of() { awk -v hz="$HZ" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$EXPORTER/stat"; }
# Scrapes until it has spent some CPU time, so that the number held to /proc is not 0.
for i in $(seq 2000); do
	awk -v c="$(cpu_of)" 'BEGIN { exit !(c >= 0.05) }' && break
	curl -s -o /dev/null "127.0.0.1:$port/metrics"
done
cpu1=$(cpu_of)
OUT=$(curl -s "127.0.0.1:$port/metrics")
cpu2=$(cpu_of)
promtool_ok "process_*" "$OUT"
x=$(sample process_cpu_seconds_total <<<"$OUT")
check "process_cpu_seconds_total between /proc/PID/stat's utime+stime before and after ($cpu1 <= $x <= $cpu2)" \
	awk -v a="$cpu1" -v b="$cpu2" -v x="$x" 'BEGIN { exit !(x != "" && x >= a - 1e-9 && x <= b + 1e-9) }'
start=$(awk -v hz="$HZ" -v btime="$(awk '$1 == "btime" { print $2 }' /proc/stat)" \
	'{ sub(/.*\) /, ""); printf "%.2f", btime + $20 / hz }' "/proc/$EXPORTER/stat")
check_eq "process_start_time_seconds: btime + starttime / CLK_TCK (/proc/stat, /proc/PID/stat)" "$start" \
	"$(printf '%.2f' "$(sample process_start_time_seconds <<<"$OUT")")"
check_eq "process_max_fds: Max open files in /proc/PID/limits" \
	"$(awk '/^Max open files/ { print $4 }' "/proc/$EXPORTER/limits")" "$(sample process_max_fds <<<"$OUT")"
# During the scrape the exporter held one descriptor more than idle: the connection it answered on.
fds=$(sample process_open_fds <<<"$OUT")
for i in $(seq 100); do [ "$(ls "/proc/$EXPORTER/fd" | wc -l)" = $((fds - 1)) ] && break; sleep 0.05; done
check_eq "process_open_fds: /proc/PID/fd once idle, and the scrape's connection" "$((fds - 1))" "$(ls "/proc/$EXPORTER/fd" | wc -l)"
vsz=$(awk '{ sub(/.*\) /, ""); print $21 }' "/proc/$EXPORTER/stat")
rss=$(awk -v p="$PAGE" '{ sub(/.*\) /, ""); print $22 * p }' "/proc/$EXPORTER/stat")
check "process_virtual_memory_bytes within 10 % of /proc/PID/stat's vsize after ($(sample process_virtual_memory_bytes <<<"$OUT") ~ $vsz)" \
	awk -v a="$vsz" -v x="$(sample process_virtual_memory_bytes <<<"$OUT")" 'BEGIN { exit !(x != "" && x >= a * 0.9 && x <= a * 1.1) }'
check "process_resident_memory_bytes within 10 % of rss pages x $PAGE after ($(sample process_resident_memory_bytes <<<"$OUT") ~ $rss)" \
	awk -v a="$rss" -v x="$(sample process_resident_memory_bytes <<<"$OUT")" 'BEGIN { exit !(x != "" && x >= a * 0.9 && x <= a * 1.1) }'
kill "$EXPORTER"; wait "$EXPORTER" 2>/dev/null

# ---- vtrace: an op that never ran has counters at 0 but no histogram ---------------------------------------

if [ -x "$VTLOAD" ]; then
	run "$IOLENS" export --once --collector.disable-defaults --collector.vtrace
	check_eq "RAN, run 50 times: 22 buckets and +Inf, count 50" "23 50" \
		"$(grep -c '^iolens_vtrace_request_duration_seconds_bucket{service="demo",.*op="RAN"' <<<"$OUT") $(grep -E '^iolens_vtrace_request_duration_seconds_count\{service="demo",.*op="RAN"' <<<"$OUT" | awk '{ print $2 }')"
	check_eq "NEVER, never run: its requests at 0, and no _bucket, _sum or _count line" "0 0" \
		"$(grep -E '^iolens_vtrace_requests_total\{service="demo",.*op="NEVER"' <<<"$OUT" | awk '{ print $2 }') $(grep -c '^iolens_vtrace_request_duration_seconds_[a-z]*{.*op="NEVER"' <<<"$OUT")"
	promtool_ok "vtrace" "$OUT"
	vtload_say quit
else
	skip "vtrace: vtload is not built (make check builds it)"
fi

echo "1..$t_count"
