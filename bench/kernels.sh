#!/usr/bin/env bash
# bench/kernels.sh: the Measure table of issue 30 in each kernel of the matrix, booted in qemu:
# which feature counts by which mechanism and holds its truth (tests/kernels/check.sh's matrix.md),
# and what each mechanism costs per event there, from the kernel's own bpf_stats, beside bcc's
# cachestat where bcc runs.
#
#   bench/kernels.sh [KERNEL...]          default: 6.1 6.12 host
#
# KERNEL: a series or release tests/kernels/fetch.sh fetches (Debian's packages), booted in qemu;
# host: this machine's kernel, natively, for the cost table only (its matrix is make check's: the
# matrix counts the reads its disk completed, which other work here would add to).
#
# Cost: kernel.bpf_stats_enabled=1 (set back as it was on the host), then per mechanism
# (IOLENS_CACHE_MECHANISM tracepoints, fentry, kprobes with cachestat; IOLENS_BIO_MECHANISM
# block_io_start, block_getrq with biotop) the same workload under the command: a 64 MiB file
# evicted, then read twice (32768 pages read: 16384 misses, 16384 hits; the eviction's 16384
# removals are in the span measured), or 4000 O_DIRECT reads of 4 KiB. run_time_ns and run_cnt of
# each of the command's programs (the fdinfo of its eBPF program descriptors) before and after
# give the runs and ns per run of each program, and their sum per page read (per request): the
# cost of the mechanism on the same work; beside it, the hits and misses the command printed for
# it. ROUNDS (default 5) rounds, each mechanism once in each: the median round's figures, with the
# least and the most of all rounds (one round is not enough: the same program's ns per run went
# from 1615 to 3108 between two runs of 6.1 here, as the load beside the emulator moved). bcc:
# Debian's bpfcc-tools (cachestat-bpfcc, kprobes), compiled in the guest against the kernel's
# headers (Debian's linux-headers packages, unpacked beside the kernel); where it does not run,
# the table says why. Under TCG every instruction is emulated, and this machine is shared: the ns
# compare mechanisms within one kernel, not kernels nor a real machine.
#
# MATRIX=0 leaves the first table out. Runs as root (qemu's 9p share of /); needs only Debian
# packages (make test-deps, bpfcc-tools), iolens (IOLENS, default ./iolens) and, for the matrix, the
# test helpers make check-kernels builds. Writes build/kernels/results/cost.md and prints both
# tables.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
: "${IOLENS:=$top/iolens}" "${BUILD:=$top/build}" "${KERNELS_DIR:=$top/build/kernels}" "${ROUNDS:=5}"
export IOLENS BUILD ROUNDS

# ---- in the guest (or on the host): one kernel's costs, as table rows on stdout ----------------
# kernels.sh --in-guest [HEADERS [NAME]]: NAME, the kernel column (default: uname -r).
if [ "${1:-}" = --in-guest ]; then
	headers=${2:-} release=${3:-$(uname -r)}
	stats_were=$(sysctl -n kernel.bpf_stats_enabled) && sysctl -qw kernel.bpf_stats_enabled=1 ||
		{ echo "| $release | (all) | | | | | | bpf_stats cannot be enabled |"; exit 1; }
	work=$(mktemp -d "${TMPDIR:-/tmp}/bench.XXXXXX") || exit 1
	trap 'sysctl -qw kernel.bpf_stats_enabled="$stats_were"; rm -rf "$work"' EXIT
	trap 'exit 130' INT TERM
	python3 - "$work" "$release" "$headers" <<'EOF'
import json, os, re, subprocess, sys, threading, time
work, release, headers = sys.argv[1:4]
IOLENS = os.environ["IOLENS"]
F = os.path.join(work, "data")
SIZE = 64 << 20
PAGES = SIZE // 4096
DIRECT = 4000
START = 300  # seconds a command may take to print its first line (under TCG: its BTF, its programs)
ROUNDS = int(os.environ.get("ROUNDS") or 5)
with open(F, "wb") as f:
    f.write(os.urandom(SIZE))
    os.fsync(f.fileno())

def progs(pid):
    """{prog_id: (run_time_ns, run_cnt)} of the eBPF programs process pid holds."""
    out = {}
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            info = open("/proc/%d/fdinfo/%s" % (pid, fd)).read()
        except OSError:
            continue
        m = dict(re.findall(r"^(prog_id|run_time_ns|run_cnt):\s+(\d+)$", info, re.M))
        if "run_cnt" in m:
            out[int(m["prog_id"])] = (int(m["run_time_ns"]), int(m["run_cnt"]))
    return out

def names():
    show = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True, text=True).stdout
    return {p["id"]: p.get("name", "?") for p in json.loads(show or "[]")}

def evict():
    fd = os.open(F, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)

def read_twice():
    evict()
    for _ in range(2):
        with open(F, "rb", buffering=0) as f:
            while f.read(1 << 20):
                pass
    return 2 * PAGES, "pages read (%d evicted first)" % PAGES, "%d hits, %d misses" % (PAGES, PAGES)

def direct_reads():
    subprocess.run(["dd", "if=" + F, "of=/dev/null", "bs=4k", "count=%d" % DIRECT, "iflag=direct", "status=none"],
                   check=True)
    return DIRECT, "requests", "-"

def measure(command, env, workload, ready, counted=None, err_tail=False):
    """Starts command, waits until ready(its first line) says it counts, runs the workload: its figures
    (a dict), else why not (a string: its stderr, its end with err_tail, else ready's reason).
    counted(line): the (hits, misses) one of its lines says, added up over the workload's intervals."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **env})
    lines = []  # (when, line) of each line it printed
    printed = threading.Event()
    def read():
        for line in proc.stdout:
            lines.append((time.monotonic(), line))
            printed.set()
        printed.set()
    threading.Thread(target=read, daemon=True).start()
    said = ready(lines[0][1]) if printed.wait(START) and lines else "printed nothing in %d s" % START
    if said is not True:
        proc.kill()
        err = " ".join(proc.stderr.read().split())
        return (err[-150:] if err_tail else err[:150]) or said
    before = progs(proc.pid)
    began = time.monotonic()
    events, unit, truth = workload()
    ended = time.monotonic()
    after = progs(proc.pid)
    known = names()
    # Its counts: every interval printed from the workload's start to the first after its end.
    while counted and not any(t > ended for t, _ in lines) and proc.poll() is None and time.monotonic() < ended + 60:
        time.sleep(0.1)
    proc.terminate()
    proc.wait()
    says = "-"
    if counted:
        sums = [counted(l) for t, l in lines if t > began]
        says = "%d hits, %d misses (truth %s)" % (sum(h for h, _ in sums), sum(m for _, m in sums), truth)
    runs = ns = 0
    parts = []
    for pid_, (t1, c1) in sorted(after.items()):
        t0, c0 = before.get(pid_, (0, 0))
        if c1 - c0 > 0:
            runs += c1 - c0
            ns += t1 - t0
            parts.append("%s %d x %.0f ns" % (known.get(pid_, pid_), c1 - c0, (t1 - t0) / (c1 - c0)))
    if not parts:
        parts = ["%d programs, none ran" % len(after)]
    return {"workload": "%d %s" % (events, unit), "says": says, "runs": runs,
            "per_event": ns / events if events else 0, "programs": "; ".join(parts)}

def json_counts(line):
    try:
        doc = json.loads(line)
    except ValueError:
        return 0, 0
    return doc.get("hits") or 0, doc.get("misses") or 0

def bcc_counts(line):
    words = line.split()
    return (int(words[0]), int(words[1])) if len(words) >= 2 and words[0].isdigit() else (0, 0)

def first_json(key, want):
    """ready(): the command's first JSON line, with key naming want (else what it said)."""
    def ready(line):
        try:
            doc = json.loads(line)
        except ValueError:
            return "not JSON: %r" % line[:100]
        got = doc.get(key)
        if want not in (got or ""):
            return "not %s: %s %r" % (want, key, got)
        return True
    return ready

# What is measured, in this order in each round: (feature, mechanism, measure's arguments), or a
# row's reason where it cannot be.
plans = []
for m in ("tracepoints", "fentry", "kprobes"):
    plans.append(("page cache (iolens cachestat)", m, ([IOLENS, "cachestat", "--json", "1"],
                  {"IOLENS_CACHE_MECHANISM": m}, read_twice, first_json("mechanism", m), json_counts)))
for m in ("block_io_start", "block_getrq"):
    plans.append(("block I/O (iolens biotop)", m, ([IOLENS, "biotop", "--json", "1"],
                  {"IOLENS_BIO_MECHANISM": m}, direct_reads, first_json("mechanism", m))))
# bcc's cachestat: kprobes on the page-cache functions, its C compiled here against the headers.
tool = "/usr/sbin/cachestat-bpfcc"
if not os.path.exists(tool):
    plans.append(("page cache (bcc cachestat)", "kprobes", "bpfcc-tools is not installed"))
elif not headers or not os.path.isdir(headers):
    plans.append(("page cache (bcc cachestat)", "kprobes", "no kernel headers for " + release))
else:
    def bcc_ready(line):
        # It prints its header once its probes are attached (unbuffered).
        return True if "HITS" in line else "not its header: %r" % line[:100]
    plans.append(("page cache (bcc cachestat)", "kprobes", (["python3", "-u", tool, "1"],
                  {"BCC_KERNEL_SOURCE": headers, "PYTHONUNBUFFERED": "1"}, read_twice, bcc_ready, bcc_counts, True)))

# The rounds interleaved, so that the machine's load, which moves emulated time a lot, falls on
# every mechanism alike; a mechanism refused in the first round is not asked again.
figures = [[] for _ in plans]
failed = [[] for _ in plans]
for round_ in range(ROUNDS):
    for i, (_, _, how) in enumerate(plans):
        if isinstance(how, str) or (round_ and not figures[i]):
            continue
        got = measure(*how)
        (failed if isinstance(got, str) else figures)[i].append(got)

for (feature, mechanism, how), got, why in zip(plans, figures, failed):
    if not got:
        why = how if isinstance(how, str) else why[0]
        print("| %s | %s | %s | - | - | - | - | %s |" % (release, feature, mechanism, why.replace("|", "/")))
        continue
    # The round of the median cost, whole: its counts and programs with its figure.
    got.sort(key=lambda g: g["per_event"])
    mid = got[(len(got) - 1) // 2]
    spread = " (%.0f-%.0f)" % (got[0]["per_event"], got[-1]["per_event"]) if len(got) > 1 else ""
    note = "; %d of %d rounds failed: %s" % (len(why), ROUNDS, why[0]) if why else ""
    print("| %s | %s | %s | %s | %s | %d | %.0f%s | %s%s |" % (
        release, feature, mechanism, mid["workload"], mid["says"], mid["runs"], mid["per_event"], spread,
        mid["programs"], note.replace("|", "/")))
    sys.stdout.flush()
EOF
	exit
fi

# ---- on the host: the matrix table, then each kernel's costs -----------------------------------
[ "$(id -u)" = 0 ] || { echo "bench/kernels.sh: qemu's 9p share of / needs root" >&2; exit 2; }
[ -x "$IOLENS" ] || { echo "bench/kernels.sh: $IOLENS: not built (make)" >&2; exit 2; }
[ $# -gt 0 ] || set -- 6.1 6.12 host
guests=()
for kernel; do [ "$kernel" = host ] || guests+=("$kernel"); done
releases=()
if [ ${#guests[@]} -gt 0 ]; then
	fetched=$("$top/tests/kernels/fetch.sh" "${guests[@]}") || exit 2
	mapfile -t releases <<<"$fetched"
fi
results=$KERNELS_DIR/results
mkdir -p "$results" || exit 2

# headers RELEASE: Debian's linux-headers-RELEASE and its -common unpacked beside the kernel (for
# bcc), once; prints the directory, or nothing when the archive has none.
headers() {
	local dir=$KERNELS_DIR/$1/headers
	if [ ! -e "$dir/ready" ]; then
		rm -rf "$dir"
		mkdir -p "$dir/download"
		# Through the apt configuration fetch.sh keeps for a release this machine does not list (5.10).
		KERNELS_DIR=$KERNELS_DIR "$top/tests/kernels/fetch.sh" --download "$dir/download" "$1" "linux-headers-$1" \
			"linux-headers-${1%-*}-common" >/dev/null 2>&1 || { rm -rf "$dir"; return 0; }
		for deb in "$dir"/download/*.deb; do dpkg-deb -x "$deb" "$dir/unpacked"; done
		rm -rf "$dir/download"
		# One tree, as bcc reads it (it cannot follow Debian's split of -common and the flavour's
		# generated headers): the common headers, then the flavour's config and generated files.
		mkdir -p "$dir/tree"
		cp -a "$dir/unpacked/usr/src/linux-headers-${1%-*}-common/." "$dir/tree/" &&
			cp -a "$dir/unpacked/usr/src/linux-headers-$1/"{include,arch,.config} "$dir/tree/" || { rm -rf "$dir"; return 0; }
		rm -rf "$dir/unpacked"
		touch "$dir/ready"
	fi
	echo "$dir/tree"
}

if [ "${MATRIX:-1}" = 1 ] && [ ${#guests[@]} -gt 0 ]; then
	echo "== which feature counts by which mechanism, and holds its truth (tests/kernels/check.sh)"
	# Without its workload the matrix skips (no rows): said here, not after the boots.
	[ -x "$BUILD/tests/helpers/cachepattern" ] ||
		{ echo "bench/kernels.sh: $BUILD/tests/helpers/cachepattern: not built (make check-kernels builds it; MATRIX=0 leaves the matrix out)" >&2; exit 2; }
	SELFTEST=0 TESTS=kernels/matrix "$top/tests/kernels/check.sh" "${guests[@]}" >"$results/bench-check.log" 2>&1
	tail -n $((${#guests[@]} + 1)) "$results/bench-check.log"
	cat "$results/matrix.md"
fi

echo
echo "== cost per event, from bpf_stats (run_time_ns / run_cnt of each program), $ROUNDS rounds"
cost=$results/cost.md
{
	echo "| kernel | feature | mechanism | workload | what it counted | program runs | ns per page or request, median (min-max) | ns per run, by program |"
	echo "|---|---|---|---|---|---|---|---|"
} >"$cost"
i=0
for kernel; do
	if [ "$kernel" = host ]; then
		# Natively: no emulation, but the other work of this machine beside it.
		release=$(uname -r)
		bash "$here/kernels.sh" --in-guest "/lib/modules/$release/build" "$release (this machine)" >>"$cost" \
			2>"$results/cost-host.err" ||
			echo "| $release (this machine) | (all) | | | | | | its run failed: $(tail -n 1 "$results/cost-host.err") |" >>"$cost"
		continue
	fi
	release=${releases[i]}
	i=$((i + 1))
	hdr=$(headers "$release")
	# tracefs and debugfs mounted: bcc needs them (iolens attaches by BTF, with or without).
	"$top/tests/kernels/run.sh" --quiet --tracefs --timeout 1800 "$release" env IOLENS="$IOLENS" ROUNDS="$ROUNDS" \
		bash "$here/kernels.sh" --in-guest "$hdr" >>"$cost" 2>"$results/cost-$release.err" ||
		echo "| $release | (all) | | | | | | the guest's run failed: $(tail -n 1 "$results/cost-$release.err") |" >>"$cost"
done
cat "$cost"
