#!/usr/bin/env bash
# Measures how many block completions the kernel runs no eBPF program for under load, and what that does to a reader's bytes in `iolens doctor`: perf's count of block_rq_complete against the run count of biotop's program on it (and of an empty second program there), then dd's read_bytes held to its ru_inblock, run after run.
set -euo pipefail

usage="usage: ${0##*/} [--seconds N] [--runs N] [DIR]
  Load: fio, random 16 KiB reads and writes at queue depth 128 (io_uring, 2 jobs) on a loop device
  over a 256 MiB file in DIR, random 4 KiB O_DIRECT reads at depth 64 (libaio, 2 jobs) of a 128 MiB
  file in DIR (default: a new directory under /var/tmp), and short-lived readers (dd of 16 KiB)
  one after the other.
  1. \`iolens biotop\` counting (with IOLENS_BIO_FLOOR=1: an empty program on block_rq_complete
     too) and perf counting block_io_start and block_rq_complete; the load runs SECONDS (default
     40) and ends; then its programs' run counts (BPF_ENABLE_STATS) are read. Prints the
     completions no program ran for, and their share.
  2. Under the load, RUNS times (default 10): \`iolens doctor --json 300\` watching while dd reads a
     32 MiB file in 1 MiB O_DIRECT reads; prints dd's ru_inblock * 512 (the kernel's count of its
     reads), the finding's read_bytes, read_bytes_unended and bytes_exact; then in how many runs
     read_bytes alone fell short of ru_inblock, and in how many read_bytes + read_bytes_unended
     did (the goal: none).
  Needs root, fio, perf (linux-perf), bpftool, python3. IOLENS: the binary (default: iolens in PATH)."

seconds=40 runs=10 dir=/var/tmp
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) seconds=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h|--help) echo "$usage"; exit 0 ;;
	-*) echo "$usage" >&2; exit 2 ;;
	*) dir=$1; shift ;;
	esac
done
IOLENS=${IOLENS:-$(command -v iolens || true)}
for tool in fio perf bpftool python3 losetup; do
	command -v "$tool" >/dev/null || { echo "${0##*/}: $tool is not installed" >&2; exit 1; }
done
[ -n "$IOLENS" ] && [ -x "$IOLENS" ] || { echo "${0##*/}: no iolens (set IOLENS)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "${0##*/}: needs root (eBPF, perf -a, losetup)" >&2; exit 1; }

work=$(mktemp -d "$dir/bio-unseen.XXXXXX")
loop=""
cleanup() {
	[ -z "$loop" ] || losetup -d "$loop" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
head -c $((128 << 20)) /dev/urandom >"$work/fio.dat"
head -c $((32 << 20)) /dev/urandom >"$work/big.dat"
head -c $((1 << 20)) /dev/urandom >"$work/small.dat"
truncate -s 256M "$work/loop.img"
loop=$(losetup -f --show "$work/loop.img")

python3 - "$IOLENS" "$seconds" "$runs" "$work" "$loop" "$(cd "$(dirname "$0")" && pwd)" <<'EOF'
import ctypes, json, os, re, signal, subprocess, sys, time
sys.path.insert(0, sys.argv[6])
import verdict

iolens, seconds, runs, work, loop = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]


def load():
    """The load's processes, started."""
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return [subprocess.Popen(["fio", "--name=loop", "--filename=" + loop, "--rw=randrw", "--direct=1", "--bs=16k",
                              "--iodepth=128", "--ioengine=io_uring", "--numjobs=2", "--time_based", "--runtime=3600",
                              "--output=/dev/null"], **quiet),
            subprocess.Popen(["fio", "--name=disk", "--filename=" + work + "/fio.dat", "--rw=randread", "--direct=1",
                              "--bs=4k", "--iodepth=64", "--ioengine=libaio", "--numjobs=2", "--time_based",
                              "--runtime=3600", "--output=/dev/null"], **quiet),
            subprocess.Popen(["sh", "-c", 'while :; do dd if="$1" of=/dev/null bs=4k count=4 iflag=direct status=none; done',
                              "sh", work + "/small.dat"], **quiet)]


def stop(procs):
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()


def prog_ids(pid):
    ids = set()
    for f in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            m = re.search(r"^prog_id:\s+(\d+)", open(f"/proc/{pid}/fdinfo/{f}").read(), re.M)
        except OSError:
            continue
        if m:
            ids.add(int(m.group(1)))
    return ids


def runs_of(pid):
    ids = prog_ids(pid)
    progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True).stdout)
    return {p["name"]: (p.get("run_cnt", 0), p.get("recursion_misses", 0)) for p in progs if p["id"] in ids}


print(f"1. completions the kernel ran no program for ({seconds:.0f} s of load, Linux {os.uname().release})")
libc = ctypes.CDLL(None, use_errno=True)
attr = (ctypes.c_uint32 * 32)()  # union bpf_attr: enable_stats.type = BPF_STATS_RUN_TIME (0)
stats = libc.syscall(321, 32, attr, 128)  # bpf(BPF_ENABLE_STATS): run counts while this fd is open
if stats < 0:
    sys.exit("BPF_ENABLE_STATS: " + os.strerror(ctypes.get_errno()))
biotop = subprocess.Popen([iolens, "biotop", "--json", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          env=dict(os.environ, IOLENS_BIO_FLOOR="1"))
while not {"on_complete", "on_floor"} <= set(runs_of(biotop.pid)):
    time.sleep(0.1)
before = runs_of(biotop.pid)
perf = subprocess.Popen(["perf", "stat", "-a", "-x,", "-e", "block:block_io_start,block:block_rq_complete"],
                        stderr=subprocess.PIPE, text=True)
time.sleep(1)
procs = load()
time.sleep(seconds)
stop(procs)
time.sleep(1)  # in flight: drained
after = runs_of(biotop.pid)
perf.send_signal(signal.SIGINT)
counts = {l.split(",")[2]: int(l.split(",")[0]) for l in perf.communicate()[1].splitlines()
          if l.count(",") > 3 and l.split(",")[0].isdigit()}
biotop.terminate()
biotop.wait()
os.close(stats)
ran = {k: (after[k][0] - before[k][0], after[k][1] - before[k][1]) for k in after if k in before}
complete = counts.get("block:block_rq_complete", 0)
print("  perf: block_io_start %d, block_rq_complete %d" % (counts.get("block:block_io_start", 0), complete))
for name in ("on_start", "on_complete", "on_floor"):
    if name in ran:
        print("  biotop's %s ran %d times (recursion_misses %d)" % (name, ran[name][0], ran[name][1]))
if complete and "on_complete" in ran:
    missed = complete - ran["on_complete"][0]
    same = ran.get("on_floor", (None,))[0] == ran["on_complete"][0]
    print("  completions with no program run: %d of %d (%.3f %%)%s" % (
          missed, complete, 100.0 * missed / complete, "; the empty program missed the same ones" if same else ""))

print(f"2. dd's 32 MiB of O_DIRECT reads under doctor, under the load, {runs} runs")
procs = load()
short = 0
missing = []  # each run's bytes of dd's that doctor's read_bytes + read_bytes_unended lack
try:
    for run in range(runs):
        doctor = subprocess.Popen([iolens, "doctor", "--json", "300"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True)
        while True:  # its O_DIRECT watch, attached after its block programs
            shown = subprocess.run(["bpftool", "prog", "show", "name", "on_enter"], capture_output=True, text=True).stdout
            if {int(i) for i in re.findall(r"^(\d+):", shown, re.M)} & prog_ids(doctor.pid):
                break
            time.sleep(0.05)
        dd = subprocess.Popen(["dd", "if=" + work + "/big.dat", "of=/dev/null", "bs=1M", "iflag=direct", "status=none"])
        inblock = os.wait4(dd.pid, 0)[2].ru_inblock * 512
        doctor.send_signal(signal.SIGTERM)
        doc = json.loads(doctor.communicate()[0])
        f = next((f["data"] for f in doc["findings"] if f["rule"] == "odirect" and f["data"]["pid"] == dd.pid), {})
        got, unended = f.get("read_bytes"), f.get("read_bytes_unended")
        short += got is None or got < inblock
        missing.append(inblock if got is None else max(0, inblock - got - (unended or 0)))
        print(f"  run {run + 1}: ru_inblock {inblock}, read_bytes {got}, read_bytes_unended {unended}, "
              f"bytes_exact {f.get('bytes_exact')}", flush=True)
finally:
    stop(procs)
v = verdict.judge(missing, "<= 0")
print(f"  read_bytes short of ru_inblock: {short} of {runs} runs")
print(f"goal: read_bytes + read_bytes_unended never short of ru_inblock (bytes missing each run <= 0): {v}")
sys.exit(v.exit)
EOF
