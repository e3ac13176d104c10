#!/usr/bin/env bash
# stat_replay.sh: iolens stat on recorded /proc and /sys trees: exact output of every group, JSON and CSV, and values checked by hand.
. "$(dirname "$0")/lib.sh"

FIX=$TOP/tests/fixtures/stat
export IOLENS_REPLAY=$FIX/vm1 TZ=UTC
# Each case: a name and the options; its expected output is in expected/NAME.
cases=(
	"default|--nocolor 1 3"
	"dstat-tclmdny|-tclmdny --nocolor 1 3"
	"cpu-adv-list|--cpu-adv -C 0,1,total --nocolor 1 3"
	"disks|-d -r -D total,vda --nocolor 1 3"
	"full|-f -cdn --nocolor 1 3"
	"vmstat|-v --nocolor 1 3"
	"sockets|--tcp --udp --unix --socket --raw --nocolor 1 3"
	"system|--fs --aio --vm --lock --ipc -l -p -s --nocolor 1 3"
	"ints|-i -I 40,41 -y --nocolor 1 3"
	"ext|-x --psi --cache --nocolor 1 3"
	"formats|--integer -cdm --nocolor 1 3"
	"float|--float -cdm --nocolor 1 3"
	"no-boot|--no-boot-sample -cd --nocolor 1 3"
	"json|--json -tcdngylmsp -x --psi 1 3"
	"csv|--csv -tcdngy -x 1 3"
)
for c in "${cases[@]}"; do
	name=${c%%|*} args=${c#*|}
	run "$IOLENS" stat $args
	if [ "${UPDATE_EXPECTED:-}" = 1 ]; then
		printf '%s\n' "$OUT" > "$FIX/expected/$name"
	fi
	expected=$(cat "$FIX/expected/$name" 2>/dev/null)
	check_eq "replay: $name (iolens stat $args)" "$expected" "$OUT"
done

# The values, checked from the recorded files by a second implementation (python), for the
# interval between the recordings 1 and 2.
run "$IOLENS" stat --json -c -d -D vda -n -g -y -m -x -D vda --psi 1 3
line=$(sed -n 3p <<<"$OUT")
check_eq "replay: three JSON lines, the first since boot" "true false false" \
	"$(python3 -c 'import json,sys; print(" ".join("true" if json.loads(l)["since_boot"] else "false" for l in sys.stdin))' <<<"$OUT")"
python3 - "$FIX/vm1" "$line" > "$T/checks" <<'PY'
import json, os, sys
root, line = sys.argv[1], json.loads(sys.argv[2])
def read(n, path): return open(os.path.join(root, str(n), path)).read()
t = [int(read(n, "time").split()[0]) for n in (1, 2)]
secs = (t[1] - t[0]) / 1e9
def cpu(n):
    for l in read(n, "proc/stat").splitlines():
        if l.startswith("cpu "): return [int(x) for x in l.split()[1:9]]
a, b = cpu(1), cpu(2)
d = [y - x for x, y in zip(a, b)]
total = sum(d[:8])
user, nice, system, idle, iowait, irq, softirq, steal = d
def close(name, ours, theirs, tol=0.01):
    ok = abs(ours - theirs) <= tol * max(1, abs(theirs))
    print(("ok" if ok else "BAD"), name, round(ours, 3), round(theirs, 3))
close("cpu usr (user+nice+irq+softirq)", line["cpu_total"]["usr_pct"], 100 * (user + nice + irq + softirq) / total)
close("cpu sys", line["cpu_total"]["sys_pct"], 100 * system / total)
close("cpu idl", line["cpu_total"]["idl_pct"], 100 * idle / total)
def disk(n, dev):
    for l in read(n, "proc/diskstats").splitlines():
        f = l.split()
        if f[2] == dev: return [int(x) for x in f[3:]]
a, b = disk(1, "vda"), disk(2, "vda")
close("disk vda write bytes/s", line["dsk_vda"]["write_bytes_per_s"], (b[6] - a[6]) * 512 / secs)
close("iostat w/s", line["dskext_vda"]["w_per_s"], (b[4] - a[4]) / secs)
close("iostat w_await (ns)", line["dskext_vda"]["w_await_ns"], 1e6 * (b[7] - a[7]) / (b[4] - a[4]))
close("iostat %util", line["dskext_vda"]["util_pct"], min(100, 100 * (b[9] - a[9]) / (secs * 1000)))
close("iostat aqu-sz", line["dskext_vda"]["aqu_sz"], (b[10] - a[10]) / (secs * 1000))
def per(x, n): return x / n if n else 0
x = line["dskext_vda"]
close("iostat %wrqm", x["wrqm_pct"], 100 * per(b[5] - a[5], (b[5] - a[5]) + (b[4] - a[4])))
close("iostat d/s", x["d_per_s"], (b[11] - a[11]) / secs)
close("iostat dkB/s (bytes)", x["discard_bytes_per_s"], (b[13] - a[13]) * 512 / secs)
close("iostat drqm/s", x["drqm_per_s"], (b[12] - a[12]) / secs)
close("iostat d_await (ns)", x["d_await_ns"], 1e6 * per(b[14] - a[14], b[11] - a[11]))
close("iostat dareq-sz (bytes)", x["dareq_sz_bytes"], 512 * per(b[13] - a[13], b[11] - a[11]))
close("iostat f/s", x["f_per_s"], (b[15] - a[15]) / secs)
close("iostat f_await (ns)", x["f_await_ns"], 1e6 * per(b[16] - a[16], b[15] - a[15]))
def vm(n):
    return {l.split()[0]: int(l.split()[1]) for l in read(n, "proc/vmstat").splitlines()}
a, b = vm(1), vm(2)
close("page out bytes/s", line["paging"]["page_out_bytes_per_s"], (b["pgpgout"] - a["pgpgout"]) * 1024 / secs)
def stat_line(n, key):
    for l in read(n, "proc/stat").splitlines():
        if l.startswith(key + " "): return int(l.split()[1])
close("interrupts/s", line["system"]["int_per_s"], (stat_line(2, "intr") - stat_line(1, "intr")) / secs)
close("context switches/s", line["system"]["csw_per_s"], (stat_line(2, "ctxt") - stat_line(1, "ctxt")) / secs)
mem = {l.split(":")[0]: int(l.split()[1]) * 1024 for l in read(2, "proc/meminfo").splitlines()}
close("memory used (free's formula)", line["memory"]["used_bytes"],
      mem["MemTotal"] - mem["MemFree"] - mem["Buffers"] - mem["Cached"] - mem["SReclaimable"] + mem["Shmem"])
def psi(n):
    for l in read(n, "proc/pressure/io").splitlines():
        if l.startswith("some"): return int(l.split("total=")[1])
close("io pressure stall ns", line["pressure"]["io_some_stall_ns"], (psi(2) - psi(1)) * 1000)
def net(n):
    rx = 0
    for l in read(n, "proc/net/dev").splitlines()[2:]:
        name, rest = l.split(":", 1)
        if os.path.isdir(os.path.join(root, str(n), "sys/class/net", name.strip(), "device")):
            rx += int(rest.split()[0])
    return rx
close("net recv bytes/s (devices only)", line["net_total"]["recv_bytes_per_s"], (net(2) - net(1)) / secs)
PY
while read -r verdict rest; do
	if [ "$verdict" = ok ]; then ok "value: $rest"; else not_ok "value: $rest"; fi
done < "$T/checks"

# Options as dstat takes them, on the same recording.
export IOLENS_REPLAY=$FIX/vm1
run "$IOLENS" stat -i -I total,virtio2-input.0,VIRTIO3-RX --nocolor --no-boot-sample 1 2
check_eq "-I: total, and devices named whole, without regard to case" "total   38    41 " "$(sed -n 2p <<<"$OUT")"
run "$IOLENS" stat -i -I virtio2 1 1
check_eq "-I: part of a device name is not a match (exit 2)" 2 "$RC"
run "$IOLENS" stat -i -I 4 1 1
check_eq "-I: nor is a number found inside the chip's text (4-edge)" 2 "$RC"
run "$IOLENS" stat --json -i -I total --no-boot-sample 1 1
check "-I total: all interrupts, as /proc/stat counts them" python3 -c 'import json,sys,os
root=sys.argv[2]; t=[int(open(os.path.join(root,str(n),"time")).read().split()[0]) for n in (0,1)]
i=[int([l for l in open(os.path.join(root,str(n),"proc/stat")) if l.startswith("intr ")][0].split()[1]) for n in (0,1)]
v=json.loads(sys.argv[1])["interrupts"]["total_per_s"]; e=(i[1]-i[0])/((t[1]-t[0])/1e9)
sys.exit(not abs(v-e) <= 0.001*e)' "$OUT" "$FIX/vm1"
run "$IOLENS" stat -c -C all --nocolor 1 1
check_eq "-C all: every cpu, as dstat" "-----cpu0-usage---- -----cpu1-usage----" "$(head -1 <<<"$OUT")"
run "$IOLENS" stat -x -D total --nocolor 1 1
check_eq "-x -D total: iostat -x has no total, so the devices, a row each" "Device loop0 vda" \
	"$(awk '/^Device/ || /^[a-z]/ { printf "%s%s", n++ ? " " : "", $1 }' <<<"$OUT")"
run "$IOLENS" stat -v -x --nocolor 1 1
check_match "-v -x: the same, under -v's line" "^vda +" "$OUT"
check_match "… which is dstat's -v (vmstat's groups), not a verbose mode" "^---procs--- -+memory-usage" "$(head -1 <<<"$OUT")"
run "$IOLENS" stat --integer --float 1 1
check_eq "--integer --float: exit 2" 2 "$RC"
run "$IOLENS" stat --csv --output "$T/both.csv" -c 1 3
check_eq "--csv --output: the same CSV on standard output and in the file" "$(cat "$T/both.csv")" "$OUT"
check_eq "--csv: a header and three lines" 4 "$(wc -l <<<"$OUT")"
run "$IOLENS" stat --json -x -D loop0 1 1
check_eq "JSON: a small rate keeps its digits (not 0.000)" "0.000121237" \
	"$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["dskext_loop0"]["rrqm_per_s"])' "$OUT")"
check_eq "JSON: the boot sample's interval, rounded from the uptime, not truncated" "8248300000000" \
	"$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["interval_ns"])' "$OUT")"
cp -r "$FIX/vm1" "$T/swaps"
printf 'Filename\tType\tSize\tUsed\tPriority\n/dev/mapper/vg0-swap                    partition\t1048572\t1024\t-2\n/swapfile                               file\t524284\t0\t-3\n' |
	tee "$T/swaps/0/proc/swaps" "$T/swaps/1/proc/swaps" "$T/swaps/2/proc/swaps" > /dev/null
IOLENS_REPLAY=$T/swaps run "$IOLENS" stat -s -f --nocolor 1 1
check_eq "swap titles as dstat's: /dev/mapper/ and /dev/ left out, cut to the width" "swp/vg0-swa -swp//swapfi" \
	"$(head -1 <<<"$OUT" | sed 's/^-*//; s/-* -*/ -/; s/-*$//')"

# Devices, interfaces and interrupts that come, go or are replaced between samples: a total
# counts only what is in both samples with counters that did not go back; a newcomer's first
# interval is unknown ('-'), never its whole history.
H=$T/hotplug
netdev() { # NAME RX TX ...: a /proc/net/dev
	printf 'Inter-|   Receive                                                |  Transmit\n'
	printf ' face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n'
	while [ $# -gt 0 ]; do printf '%6s: %s 10 0 0 0 0 0 0 %s 10 0 0 0 0 0 0\n' "$1" "$2" "$3"; shift 3; done
}
irqs() { # COUNT30 [COUNT31]
	printf '           CPU0       CPU1\n'
	printf ' 30:  %s 0 PCI-MSIX-0000:00:03.0 0-edge virtio2-input.0\n' "$1"
	[ -z "${2:-}" ] || printf ' 31:  %s 0 PCI-MSIX-0000:00:03.0 1-edge virtio2-output.0\n' "$2"
}
for n in 0 1 2; do
	cp -r "$FIX/stacked/$(( n ? 1 : 0 ))" "$H/$n" 2>/dev/null || { mkdir -p "$H"; cp -r "$FIX/stacked/$(( n ? 1 : 0 ))" "$H/$n"; }
	echo "$(( (n + 1) * 1000000000 )) $(( 1796000000000000000 + n * 1000000000 ))" > "$H/$n/time"
	mkdir -p "$H/$n/proc/net" "$H/$n/sys/class/net/eth0/device"
done
# 1: sdd attached with a long history; eth1 and interrupt 31 appear, as busy.
echo "   8      48 sdd 900000 0 90000000 1000 900000 0 90000000 1000 0 5000 2000" >> "$H/1/proc/diskstats"
mkdir -p "$H/1/sys/class/block/sdd" "$H/1/sys/class/net/eth1/device" "$H/2/sys/class/net/eth1/device"
echo "8:48" > "$H/1/sys/class/block/sdd/dev"
netdev eth0 1000 0 > "$H/0/proc/net/dev"
netdev eth0 2000 0 eth1 99000000 99000000 > "$H/1/proc/net/dev"
netdev eth0 4000 0 eth1 99000500 99000000 > "$H/2/proc/net/dev"
irqs 100 > "$H/0/proc/interrupts"; irqs 150 900000 > "$H/1/proc/interrupts"; irqs 160 900070 > "$H/2/proc/interrupts"
# 2: sdd gone; sda writes 1000 sectors more; sdb replaced by a new disk of the same name (counters from 0).
sed -i -e 's/^\(   8       0 sda [0-9]* [0-9]* [0-9]* [0-9]* [0-9]* [0-9]*\) 9125956/\1 9126956/' \
	-e 's/^   8      16 sdb .*/   8      16 sdb 1 0 8 1 1 0 8 1 0 1 2/' "$H/2/proc/diskstats"
export IOLENS_REPLAY=$H
run "$IOLENS" stat --json -f -d -n -i --no-boot-sample 1 3
get() { python3 -c 'import json,sys
ls=[json.loads(l) for l in sys.stdin]
print(" ".join(json.dumps(l.get(sys.argv[1], {}).get(sys.argv[2], "absent")) for l in ls))' "$1" "$2" <<<"$OUT"; }
check_eq "hotplug: sdd's first interval is unknown, and it is dropped when it goes" "null \"absent\"" "$(get dsk_sdd write_bytes_per_s)"
check_eq "hotplug: a replaced sdb counts 0, not a dip below zero or a spike" "512000 0" "$(get dsk_sdb write_bytes_per_s)"
check_eq "hotplug: eth1's first interval is unknown" "null 500" "$(get net_eth1 recv_bytes_per_s)"
check_eq "hotplug: a new interrupt's first interval is unknown" "null 70" "$(get interrupts 31_per_s)"
check_eq "hotplug: an interrupt there all along" "50 10" "$(get interrupts 30_per_s)"
run "$IOLENS" stat --json -d -n --no-boot-sample 1 3
check_eq "hotplug: the disk total leaves out sdd's history when it comes, and sdb when it is replaced" \
	"1792000 512000" "$(get dsk_total write_bytes_per_s)"
check_eq "hotplug: the net total leaves out eth1's history when it comes" "1000 2500" "$(get net_total recv_bytes_per_s)"

# Totals count each I/O once: partitions, device-mapper, md and loop devices are left out.
export IOLENS_REPLAY=$TOP/tests/fixtures/stat/stacked
run "$IOLENS" stat --json -d -D total,sda,sdb,md0,dm-0,loop0 --no-boot-sample 1 2
check_eq "stacked devices: the total is sda + sdb (3500 sectors), not md0, dm-0, loop0 or partitions again" \
	"1792000 1792000" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["dsk_total"]["write_bytes_per_s"], d["dsk_sda"]["write_bytes_per_s"] + d["dsk_sdb"]["write_bytes_per_s"])' "$OUT")"
