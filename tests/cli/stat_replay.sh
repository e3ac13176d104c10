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
close("disk vda write bytes/s", line["dsk_vda"]["writ_bytes_per_s"], (b[6] - a[6]) * 512 / secs)
close("iostat w/s", line["dskext_vda"]["w_per_s"], (b[4] - a[4]) / secs)
close("iostat w_await (ns)", line["dskext_vda"]["w_await_ns"], 1e6 * (b[7] - a[7]) / (b[4] - a[4]))
close("iostat %util", line["dskext_vda"]["util_pct"], min(100, 100 * (b[9] - a[9]) / (secs * 1000)))
close("iostat aqu-sz", line["dskext_vda"]["aqu_sz"], (b[10] - a[10]) / (secs * 1000))
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

# Totals count each I/O once: partitions, device-mapper, md and loop devices are left out.
export IOLENS_REPLAY=$TOP/tests/fixtures/stat/stacked
run "$IOLENS" stat --json -d -D total,sda,sdb,md0,dm-0,loop0 --no-boot-sample 1 2
check_eq "stacked devices: the total is sda + sdb (3500 sectors), not md0, dm-0, loop0 or partitions again" \
	"1792000 1792000" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["dsk_total"]["writ_bytes_per_s"], d["dsk_sda"]["writ_bytes_per_s"] + d["dsk_sdb"]["writ_bytes_per_s"])' "$OUT")"
