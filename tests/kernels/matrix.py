"""matrix.py: each eBPF feature of iolens held to an exact truth, by every mechanism this kernel has (TAP).

Run by tests/kernels/matrix.sh (root, eBPF), in each kernel of the matrix: small workloads, one
per feature, each counted by a command started before it and compared with a truth the test
has without iolens: the pages a reader says it read (tests/helpers/cachepattern), the pages
fincore then finds cached, the reads /proc/diskstats says the virtio disk completed, the
O_DIRECT reads dd was told to make. IOLENS_CACHE_MECHANISM and IOLENS_BIO_MECHANISM force each
mechanism in turn; one the kernel lacks must be refused with its reason (and is required to
count where MATRIX_REQUIRE names it). Each feature x mechanism is one row of the Measure table
(MATRIX_ROWS: feature, mechanism, truth, result; tab-separated).
"""
import json
import os
import re
import subprocess
import sys
import threading
import time

IOLENS = os.environ["IOLENS"]
BUILD = os.environ["BUILD"]
PATTERN = os.path.join(BUILD, "tests", "helpers", "cachepattern")
DIR = sys.argv[1]
ROWS = os.environ.get("MATRIX_ROWS") or os.path.join(DIR, "rows")
REQUIRE = set((os.environ.get("MATRIX_REQUIRE") or "").split())
PAGE = os.sysconf("SC_PAGE_SIZE")
SIZE = 16 << 20
PAGES = SIZE // PAGE
DIRECT_READS = 1000
INTERVAL = "0.25"

count = 0
failures = []
group = None  # the row being held: [feature, mechanism, truth, first failure or None, checks]


def ok(good, what):
    global count
    count += 1
    print(("ok %d - %s" if good else "not ok %d - %s") % (count, what), flush=True)
    if not good:
        failures.append(what)
    if group is not None:
        group[4] += 1
        if not good and group[3] is None:
            group[3] = what
    return good


def skip(what):
    global count
    count += 1
    print("ok %d # SKIP %s" % (count, what), flush=True)


def near(what, got, want, scale, share=0.02):
    """got within 2 % of scale (the pages the case read) of want, as cache_accuracy.py holds them."""
    tolerance = max(share * scale, 2)
    return ok(abs(got - want) <= tolerance, "%s: %d, truth %d (within %d)" % (what, got, want, tolerance))


def row(feature, mechanism, truth, result):
    with open(ROWS, "a") as f:
        f.write("\t".join((feature, mechanism, truth, result.replace("\t", " ").replace("\n", " "))) + "\n")


def begin(feature, mechanism, truth, failed=None):
    """The checks from here to end() make one row; failed: a check of the workload they share."""
    global group
    group = [feature, mechanism, truth, failed, 0]


def end():
    global group
    feature, mechanism, truth, failed, checks = group
    row(feature, mechanism, truth, "held (%d checks)" % checks if failed is None else "NOT held: " + failed[:160])
    group = None


def reason(why):
    """The kernel's part of a refusal: "has no tracepoint X", "does not load fentry programs"."""
    found = re.search(r"this kernel \([^)]*\) ([^):;]+)", why) or re.search(r"(has no [^):;]+|does not [^):;]+)", why)
    return found.group(1) if found else why[:160]


def refused(features, mechanism, command, why, expected, truth):
    """A mechanism this kernel cannot do: refused with its reason, and only where the kernel lacks it.
    One row for each feature (command) that would have used it."""
    global group
    begin(features[0], mechanism, "")
    ok(not expected, "[%s] %s counts with %s on this kernel (%s)" % (mechanism, command, mechanism, why[:200]))
    ok(mechanism in why, "[%s] … or says why not: %s" % (mechanism, why[:200]))
    failed = group[3]
    group = None
    for feature in features:
        row(feature, mechanism, truth, ("refused: " if failed is None else "NOT held: refused: ") + reason(why))


class Watch:
    """An iolens command printing JSON lines in the background, each line kept."""

    def __init__(self, env, *args):
        self.proc = subprocess.Popen([IOLENS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **env})
        self.docs, self.lock = [], threading.Condition()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            try:
                doc = json.loads(line)
            except ValueError:
                doc = {"unparsed": line}
            with self.lock:
                self.docs.append(doc)
                self.lock.notify_all()
        with self.lock:
            self.lock.notify_all()

    def wait_lines(self, more):
        """Until `more` lines more: what happened before is in them. False if the command ended first."""
        with self.lock:
            target = len(self.docs) + more
            while len(self.docs) < target:
                if self.proc.poll() is not None and len(self.docs) < target:
                    self.lock.wait(1)
                    if len(self.docs) < target:
                        return False
                self.lock.wait(5)
            return True

    def mark(self):
        with self.lock:
            return len(self.docs)

    def since(self, mark):
        with self.lock:
            return list(self.docs[mark:])

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.stderr.read()


def fincore(path):
    out = subprocess.run(["fincore", "--raw", "--noheadings", "--output", "PAGES", path], capture_output=True,
                         text=True, check=True).stdout
    return int(out.split()[0])


def make(path, size):
    with open(path, "wb") as f:
        f.write(os.urandom(size))
        f.flush()
        os.fsync(f.fileno())


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


def add(rows, keep):
    total = {}
    for r in rows:
        if keep(r):
            for name, value in r.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    total[name] = total.get(name, 0) + value
    return total


def probe(env, *args):
    """One short run of a command with env: its first JSON line ({} if none) and its stderr."""
    p = subprocess.run([IOLENS, *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=300)
    first = next((line for line in p.stdout.splitlines() if line.startswith("{")), "{}")
    return json.loads(first), " ".join(p.stderr.split())


def btf_has(name):
    """The kernel's BTF names it (a tracepoint's btf_trace_ typedef): the truth of what it has."""
    with open("/sys/kernel/btf/vmlinux", "rb") as f:
        return b"\0" + name.encode() + b"\0" in f.read()


F = os.path.join(DIR, "data")
make(F, SIZE)

# ---- page cache: cachestat, cachetop, cachetop --files, one file read twice -------------------------
TRUTHS = {
    "cachetop": "the reader's pid: reads = the pages it read (cachepattern), misses = the pages fincore finds "
                "added, hits = its second pass",
    "cachetop --files": "the file: reads, misses and hits as cachetop's",
    "cachestat": "system-wide: misses >= the pages fincore finds added, hits >= the second pass, each at most 10 % more",
}
for mechanism in ("tracepoints", "fentry", "kprobes"):
    env = {"IOLENS_CACHE_MECHANISM": mechanism}
    first, why = probe(env, "cachestat", "--json", "0.1", "1")
    if first.get("mode") != "ebpf":
        if mechanism == "tracepoints":
            expected = btf_has("btf_trace_mm_filemap_get_pages")
            truth = "refused, with why, as the kernel's BTF has no btf_trace_mm_filemap_get_pages"
        else:
            expected = mechanism in REQUIRE
            truth = "counts (MATRIX_REQUIRE)" if expected else "refused, with why (not required: MATRIX_REQUIRE)"
        refused(("cachetop", "cachetop --files", "cachestat"), mechanism, "cachestat", why, expected, truth)
        continue

    # The workload, its own truths: a checks' failure here fails every row of this mechanism.
    failures_before = len(failures)
    evict(F)
    ok(fincore(F) == 0, "[%s] the file is out of the cache before (fincore: %d)" % (mechanism, fincore(F)))
    procs = Watch(env, "cachetop", "--json", INTERVAL)
    files = Watch(env, "cachetop", "--files", "--json", INTERVAL)
    stat = Watch(env, "cachestat", "--json", INTERVAL)
    started = all(w.wait_lines(2) for w in (procs, files, stat))
    ok(started, "[%s] cachetop, cachetop --files and cachestat print their intervals" % mechanism)
    reader = subprocess.Popen([PATTERN, "--go", "read", F, "2", str(1 << 20), "same"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    pid = int(reader.stdout.readline().split()[1])
    for w in (procs, files, stat):
        w.wait_lines(1)
    marks = [w.mark() for w in (procs, files, stat)]
    reader.stdin.write("go\n")
    reader.stdin.flush()
    truth = json.loads(reader.stdout.readline())
    reader.wait()
    for w in (procs, files, stat):
        w.wait_lines(2)
    # The lines taken, and the commands stopped, before fincore runs: its exec maps its binary and
    # libraries, cached pages that cachestat (system-wide) would count as hits (990 once on 5.10).
    docs = [w.since(m) for w, m in zip((procs, files, stat), marks)]
    errors = [w.stop() for w in (procs, files, stat)]
    added = fincore(F)
    read = truth["pages_read"]
    ok(read == 2 * PAGES, "[%s] the reader read the file twice: %d pages" % (mechanism, read))
    ok(added == PAGES, "[%s] … and fincore finds it all cached after: %d pages" % (mechanism, added))
    shared = failures[failures_before] if len(failures) > failures_before else None

    for name, lines, key in (("cachetop", docs[0], "pid"), ("cachetop --files", docs[1], "file")):
        begin(name, mechanism, TRUTHS[name], shared)
        said = {(d.get("mode"), d.get("mechanism")) for d in lines}
        ok(said == {("ebpf", mechanism)}, "[%s] %s's JSON says mode ebpf, mechanism %s: %s" % (mechanism, name,
                                                                                            mechanism, sorted(said, key=str)))
        # A file is named by what processes have open, else by its device and inode (the reader is gone).
        st = os.stat(F)
        want = {pid} if key == "pid" else {F, "dev %d:%d inode %d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)}
        got = add((r for d in lines for r in d.get("processes", []) + d.get("files", [])), lambda r: r.get(key) in want)
        near("[%s] %s: pages read = what the reader read" % (mechanism, name), got.get("reads", 0), read, read)
        near("[%s] %s: misses = the pages fincore finds added" % (mechanism, name), got.get("misses", 0), added, read)
        near("[%s] %s: hits = the second pass" % (mechanism, name), got.get("hits", 0), read - PAGES, read)
        if not got:
            print("# %s's rows: %s" % (name, sorted({r.get(key) for d in lines for r in d.get("processes", []) +
                                                 d.get("files", []) if r.get("accesses", 0) > 100}, key=str)[:10]))
        end()

    begin("cachestat", mechanism, TRUTHS["cachestat"], shared)
    said = {(d.get("mode"), d.get("mechanism")) for d in docs[2]}
    ok(said == {("ebpf", mechanism)}, "[%s] cachestat's JSON says mode ebpf, mechanism %s: %s" % (mechanism, mechanism,
                                                                                                sorted(said, key=str)))
    got = add(docs[2], lambda r: True)
    # System-wide: the reader's pages at least, and little else in a guest that does nothing else.
    ok(added - 0.02 * read <= got.get("misses", 0) <= added + 0.1 * read,
       "[%s] cachestat (system-wide): misses %d, at least the pages fincore finds added (%d), at most 10 %% more"
       % (mechanism, got.get("misses", 0), added))
    ok(read - PAGES - 0.02 * read <= got.get("hits", 0) <= read - PAGES + 0.1 * read,
       "[%s] cachestat (system-wide): hits %d, at least the second pass (%d), at most 10 %% more"
       % (mechanism, got.get("hits", 0), read - PAGES))
    end()
    for e in errors:
        for line in e.splitlines():
            print("# stderr: " + line[:300])

# ---- block I/O: biotop and stat -x, O_DIRECT reads of the virtio disk -----------------------------


def disk_of(path):
    """The whole disk (name in /proc/diskstats) that holds path."""
    dev = os.stat(path).st_dev
    sysfs = os.path.realpath("/sys/dev/block/%d:%d" % (os.major(dev), os.minor(dev)))
    if os.path.exists(os.path.join(sysfs, "partition")):
        sysfs = os.path.dirname(sysfs)
    return os.path.basename(sysfs)


def reads_completed(disk):
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == disk:
                return int(fields[3])
    raise KeyError(disk)


DISK = disk_of(F)
TRUTHS = {
    "biotop": "dd's read requests (and bytes) = its %d O_DIRECT reads of 4 KiB = the reads /proc/diskstats says "
              "%s completed; p50, p99 > 0" % (DIRECT_READS, DISK),
    "stat -x": "r_lat_count = the reads /proc/diskstats says %s completed; r_p50, r_p99 > 0" % DISK,
}
for mechanism in ("block_io_start", "block_getrq"):
    env = {"IOLENS_BIO_MECHANISM": mechanism}
    first, why = probe(env, "biotop", "--json", "0.1", "1")
    if first.get("processes") is None:
        # Before 5.11 (no task storage in the BTF) BPF has no atomic compare-and-exchange (5.12).
        old = not btf_has("BPF_MAP_TYPE_TASK_STORAGE")
        expected = (mechanism in REQUIRE or btf_has("btf_trace_" + mechanism)) and not old
        refused(("biotop", "stat -x"), mechanism, "biotop", why, expected,
                "counts, as the kernel's BTF has btf_trace_" + mechanism if expected else
                "refused, with why, as the kernel's BTF has no btf_trace_" + mechanism
                if not btf_has("btf_trace_" + mechanism) else
                "refused, with why, as the kernel's BTF has no BPF_MAP_TYPE_TASK_STORAGE (before 5.11)")
        continue

    failures_before = len(failures)
    top = Watch(env, "biotop", "--json", INTERVAL)
    stat = Watch(env, "stat", "-x", "-D", DISK, "--json", INTERVAL)
    ok(top.wait_lines(2) and stat.wait_lines(2), "[%s] biotop and stat -x print their intervals" % mechanism)
    marks = (top.mark(), stat.mark())
    before = reads_completed(DISK)
    dd = subprocess.run(["dd", "if=" + F, "of=/dev/null", "bs=4k", "count=%d" % DIRECT_READS, "iflag=direct",
                         "status=none"])
    after = reads_completed(DISK)
    top.wait_lines(2)
    stat.wait_lines(2)
    tops, stats = top.since(marks[0]), stat.since(marks[1])
    errors = [top.stop(), stat.stop()]
    ok(dd.returncode == 0 and after - before == DIRECT_READS,
       "[%s] dd made %d O_DIRECT reads of 4 KiB: %s completed %d reads meanwhile (/proc/diskstats)"
       % (mechanism, DIRECT_READS, DISK, after - before))
    shared = failures[failures_before] if len(failures) > failures_before else None

    begin("biotop", mechanism, TRUTHS["biotop"], shared)
    said = {d.get("mechanism") for d in tops}
    ok(said == {mechanism}, "[%s] biotop's JSON names its mechanism: %s" % (mechanism, sorted(said, key=str)))
    # dd's pid is not known here (subprocess.run): its rows by command name, on this disk.
    rows = [r for d in tops for r in d.get("processes", []) if r.get("comm") == "dd" and r.get("disk") == DISK]
    got = add((r for r in rows if r.get("op") == "R"), lambda r: True)
    ok(got.get("requests", 0) == after - before,
       "[%s] biotop: dd's read requests on %s = the reads the disk completed: %d, truth %d"
       % (mechanism, DISK, got.get("requests", 0), after - before))
    ok(got.get("bytes", 0) == DIRECT_READS * 4096, "[%s] biotop: … their bytes: %d, truth %d"
       % (mechanism, got.get("bytes", 0), DIRECT_READS * 4096))
    pct = [(r.get("p50_ns", 0), r.get("p99_ns", 0)) for r in rows if r.get("op") == "R"]
    ok(pct and all(p50 is not None and p99 is not None and 0 < p50 <= p99 for p50, p99 in pct), "[%s] biotop: latency p50 and p99 non-zero, p50 <= p99: %s"
       % (mechanism, pct[:4]))
    end()

    begin("stat -x", mechanism, TRUTHS["stat -x"], shared)
    # -x alone needs no submitter: block_rq_issue/complete (bio_mechanism block_rq) whichever is asked,
    # IOLENS_BIO_MECHANISM only checked (refused where the kernel cannot).
    said = {d.get("bio_mechanism") for d in stats}
    ok(said == {"block_rq"}, "[%s] stat -x's JSON: bio_mechanism block_rq (disks alone): %s"
       % (mechanism, sorted(said, key=str)))
    key = "dskext_" + DISK
    lat = sum(d.get(key, {}).get("r_lat_count", 0) for d in stats if not d.get("since_boot"))
    ok(lat == after - before, "[%s] stat -x: r_lat_count of %s = the reads it completed: %d, truth %d"
       % (mechanism, DISK, lat, after - before))
    busy = [d[key] for d in stats if d.get(key, {}).get("r_lat_count")]
    ok(busy and all(0 < g.get("r_p50_ns", 0) <= g.get("r_p99_ns", 0) for g in busy),
       "[%s] stat -x: r_p50 and r_p99 non-zero where it counted reads, p50 <= p99: %s"
       % (mechanism, [(g.get("r_p50_ns"), g.get("r_p99_ns")) for g in busy][:4]))
    end()
    for e in errors:
        for line in e.splitlines():
            if "cap_pct" not in line:
                print("# stderr: " + line[:300])

# ---- doctor: an O_DIRECT open seen by the syscall tracepoints --------------------------------------
ODIRECT_TRUTH = "the O_DIRECT open dd made: its pid, its file, O_DIRECT in its flags"
begin("doctor O_DIRECT", "tracepoints sys_enter/sys_exit", ODIRECT_TRUTH)
doctor = subprocess.Popen([IOLENS, "doctor", "--json", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def attached(pid, name):
    """Process pid holds a link to the eBPF program called name (bpftool and its fdinfo)."""
    out = subprocess.run(["bpftool", "prog", "show", "name", name], capture_output=True, text=True).stdout
    ids = re.findall(r"^(\d+):", out, re.M)
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                info = f.read()
        except OSError:
            continue
        if "link_type:" in info and any(re.search(r"^prog_id:\s+%s$" % i, info, re.M) for i in ids):
            return True
    return False


seen = False
while doctor.poll() is None and not seen:
    seen = attached(doctor.pid, "on_enter") or time.sleep(0.05)
ok(seen, "doctor's O_DIRECT watch attached (odirect.bpf.c's on_enter) before its window ended")
dd = subprocess.Popen(["dd", "if=" + F, "of=/dev/null", "bs=1M", "count=1", "iflag=direct", "status=none"])
dd.wait()
out, err = doctor.communicate()
try:
    doc = json.loads(out)
except ValueError:
    doc = {}
ok(doc.get("odirect_mode") == "ebpf", "doctor's JSON: odirect_mode ebpf: %r (%s)" % (doc.get("odirect_mode"),
                                                                                  " ".join(err.split())[:200]))
finding = next((f["data"] for f in doc.get("findings", []) if f.get("rule") == "odirect" and
                f.get("data", {}).get("pid") == dd.pid), {})
ok(finding.get("comm") == "dd", "doctor found dd (pid %d) opening with O_DIRECT: %r" % (dd.pid, finding.get("comm")))
ok(finding.get("files") == [F], "… its file: %r" % (finding.get("files"),))
ok(int(finding.get("flags") or 0) & os.O_DIRECT != 0, "… O_DIRECT in its flags: %r" % finding.get("flags"))
end()

print("1..%d" % count)
sys.exit(1 if failures else 0)
