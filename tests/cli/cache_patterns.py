"""cache_patterns.py: cachetop's and cachestat's counts held to the truth of read and write patterns between cache_accuracy's cases (TAP).

Run by cache_patterns.sh (root, eBPF). Each case is this script run as a reader (--reader MODE):
it says "ready PID", does its pattern on "go", says what it did (its own count of the pages its
reads spanned, and of pages written) and stays until told "exit", so that what is counted while
it lives is checked, not only what its exit hands over. The truths: that count, fincore before
and after (a file fully cached at the cue and after: every page read was a hit), the memory
cgroup's memory.stat and /proc/vmstat. Within 2 % of the case's pages.
"""
import fcntl
import json
import os
import random
import select
import subprocess
import sys
import threading
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def pages_of(offset, length, size):
    """The pages [first, last] a read of length bytes at offset returns, or None past the end."""
    end = min(offset + length, size)
    if length <= 0 or offset >= end:
        return None
    return offset // PAGE, (end - 1) // PAGE


def reader(mode, path, *args):
    """A reader (or writer) process: ready, go, the pattern, its truth, exit."""
    fd = os.open(path, os.O_RDWR if mode in ("rewrite", "overwrite") else os.O_RDONLY)
    size = os.fstat(fd).st_size
    print("ready %d" % os.getpid(), flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    truth = {"pages_read": 0, "pages_written": 0, "reads": []}
    last = [None]

    def pread(offset, length):
        span = pages_of(offset, length, size)
        data = os.pread(fd, length, offset)
        if span:
            pages = span[1] - span[0] + 1
            # A read that begins in the page the previous one ended in: that page once (the
            # kernel marks it accessed once; cachetop(1) says so).
            if last[0] == span[0] and span[1] > span[0]:
                pages -= 1
            truth["pages_read"] += pages
            last[0] = span[1]
        return data

    if mode == "windows":  # overlapping windows: 64 pages and a bit, on by 16 pages, then each to the end
        window = 64 * PAGE + 100
        for offset in range(0, size, 16 * PAGE):
            pread(offset, window)
        for offset in range(0, size, size // 16):
            pread(offset, size)
    elif mode == "tails":  # 1 MiB, then its last 256 KiB again, its last page again
        for offset in range(0, size, 1 << 20):
            pread(offset, 1 << 20)
            pread(offset + (768 << 10), 256 << 10)
            pread(offset + (1 << 20) - PAGE, PAGE)
    elif mode == "random":  # random offsets and sizes, many reading pages read before
        rng = random.Random(int(args[0]))
        for _ in range(int(args[1])):
            pread(rng.randrange(size), rng.randrange(1, 96 * PAGE))
    elif mode == "files":  # every file of a directory, one after another, each in one read (cat a b c ...)
        for name in sorted(os.listdir(path)):
            with open(os.path.join(path, name), "rb", buffering=0) as f:
                length = os.fstat(f.fileno()).st_size
                span = pages_of(0, len(os.pread(f.fileno(), length, 0)), length)
                truth["pages_read"] += span[1] - span[0] + 1 if span else 0
    elif mode == "splice":  # the whole file spliced into a pipe at once (splice(2) leaves syscr as it is)
        _, into = os.pipe()
        fcntl.fcntl(into, fcntl.F_SETPIPE_SZ, 1 << 20)
        span = pages_of(0, os.splice(fd, into, size, offset_src=0), size)
        truth["pages_read"] = span[1] - span[0] + 1 if span else 0
    elif mode == "big":  # one read of the whole file
        buf = bytearray(size)
        got = os.preadv(fd, [buf], 0)
        span = pages_of(0, got, size)
        truth["pages_read"] = span[1] - span[0] + 1 if span else 0
    elif mode == "loop":  # 1 MiB reads over and over until told to stop, each timed (realtime, ns)
        truth["reads"] = []
        while not select.select([sys.stdin], [], [], 0)[0]:
            for offset in range(0, size, 1 << 20):
                pread(offset, 1 << 20)
                truth["reads"].append((time.time_ns(), min(1 << 20, size - offset) // PAGE))
        sys.stdin.readline()
    elif mode == "rewrite":  # read it, truncate it, write it again
        data = b""
        for offset in range(0, size, 1 << 20):
            data += pread(offset, 1 << 20)
        os.ftruncate(fd, 0)
        for offset in range(0, size, 1 << 20):
            truth["pages_written"] += os.pwrite(fd, data[offset:offset + (1 << 20)], offset) // PAGE
    elif mode == "overwrite":  # its cached pages written over, in place
        chunk = os.urandom(1 << 20)
        for offset in range(0, size, 1 << 20):
            truth["pages_written"] += os.pwrite(fd, chunk, offset) // PAGE
    if mode != "loop":
        del truth["reads"]
    print(json.dumps(truth), flush=True)
    sys.stdin.readline()  # "exit"


if len(sys.argv) > 2 and sys.argv[1] == "--reader":
    reader(*sys.argv[2:])
    sys.exit(0)

IOLENS = os.environ["IOLENS"]
DIR = sys.argv[1]
INTERVAL = "0.1"
from tap import near, ok, plan, skip  # noqa: E402 (beside this script)


def near_reads(what, row, key, want, scale, slack=2):
    """A row's count of pages its reads found or brought in: within 2 % of want, and above it by no
    more than the pages the process mapped meanwhile (python maps its own code as it runs, which
    are accesses too, hits or misses)."""
    tolerance = max(0.02 * scale, slack)
    got, maps = row.get(key, 0), row.get("maps", 0)
    return ok(want - tolerance <= got <= want + maps + tolerance,
              "%s: %d, truth %d (within %d, and the %d pages it mapped)" % (what, got, want, tolerance, maps))


class Watch:
    """iolens cachetop (or cachestat) --json in the background: every line kept, rows by key, and
    what sample() returns as each line arrives (in self.samples)."""

    def __init__(self, command="cachetop", *options, sample=None):
        self.proc = subprocess.Popen([IOLENS, command, "--json", *options, INTERVAL],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.docs, self.samples, self.sample = [], [], sample
        self.lock = threading.Condition()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            sampled = self.sample() if self.sample else None
            with self.lock:
                self.docs.append(json.loads(line))
                self.samples.append(sampled)
                self.lock.notify_all()

    def wait_lines(self, more):
        """Until `more` intervals more have been printed: what happened before is in them."""
        with self.lock:
            target = len(self.docs) + more
            while len(self.docs) < target:
                if self.proc.poll() is not None:
                    raise RuntimeError("iolens ended: " + self.proc.stderr.read())
                self.lock.wait(5)
            return len(self.docs)

    def mark(self):
        with self.lock:
            return len(self.docs)

    def rows(self, key, since=0):
        """Each interval's row of key (a pid or a file) since line `since` ({} where it had none)."""
        with self.lock:
            out = []
            for doc in self.docs[since:]:
                found = {}
                for row in doc.get("processes", []) + doc.get("files", []):
                    if (row.get("pid") or row.get("file")) == key:
                        found = row
                out.append(found)
            return out

    def sum(self, key, since=0):
        total = {}
        for row in self.rows(key, since):
            for name, value in row.items():
                if isinstance(value, int) and name not in ("pid", "uid"):
                    total[name] = total.get(name, 0) + value
        return total

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def fincore(path):
    out = subprocess.run(["fincore", "--raw", "--noheadings", "--output", "PAGES", path],
                         capture_output=True, text=True, check=True).stdout
    return int(out.split()[0])


def evict(path):
    subprocess.run([IOLENS, "evict", path], stdout=subprocess.DEVNULL, check=True)


def warm(path):
    subprocess.run([IOLENS, "warm", path], stdout=subprocess.DEVNULL, check=True)


def make(path, size):
    with open(path, "wb") as f:
        f.write(os.urandom(size))
        f.flush()
        os.fsync(f.fileno())


class Reader:
    def __init__(self, *args, prefix=()):
        self.proc = subprocess.Popen([*prefix, sys.executable, os.path.abspath(__file__), "--reader", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self.proc.stdout.readline().split()
        assert ready and ready[0] == "ready", ready
        self.pid = int(ready[1])

    def say(self, what):
        self.proc.stdin.write(what + "\n")
        self.proc.stdin.flush()

    def truth(self):
        return json.loads(self.proc.stdout.readline())

    def exit(self):
        self.say("exit")
        self.proc.wait()


def run(watch, *args, at_cue=None):
    """One reader on cue; its truth, fincore at the cue, and its counts from the cue on, taken while it lives."""
    r = Reader(*args)
    watch.wait_lines(2)
    since = watch.mark()
    cue = at_cue() if at_cue else None
    r.say("go")
    truth = r.truth()
    watch.wait_lines(3)  # its last read is over: counted by the flush, alive
    got = watch.sum(r.pid, since)
    r.exit()
    return truth, got, cue


procs = Watch()
F = os.path.join(DIR, "data")
SIZE = 16 << 20
PAGES = SIZE // PAGE
make(F, SIZE)

# ---- reads sharing pages with the ones before ----------------------------------------------------
for args, what in ((["windows"], "overlapping windows (64 pages and 100 bytes, on by 16 pages; then to the end from 16 places)"),
                   (["tails"], "1 MiB reads, each followed by its last 256 KiB and its last page again"),
                   (["random", "7", "3000"], "3000 reads of random size (1 byte to 96 pages) at random offsets"),
                   (["random", "11", "3000"], "the same, another seed")):
    warm(F)
    truth, got, cue = run(procs, args[0], F, *args[1:], at_cue=lambda: fincore(F))
    after = fincore(F)
    near("warm, %s: pages read = the pages its reads spanned (its count)" % what, got.get("reads", 0),
         truth["pages_read"], truth["pages_read"])
    if ok(cue == PAGES and after == PAGES, "… the file fully cached at the cue and after (fincore: %d, %d of %d)" % (cue, after, PAGES)):
        near_reads("… hits = every page read (all cached: fincore)", got, "hits", truth["pages_read"], truth["pages_read"])
    near_reads("… no misses", got, "misses", 0, truth["pages_read"])

# ---- a splice, then a wait for input in read(2) on a pipe, as a shell or a server waits ---------------
ONCE = os.path.join(DIR, "once")
make(ONCE, 64 * PAGE)
warm(ONCE)
truth, got, cue = run(procs, "splice", ONCE, at_cue=lambda: fincore(ONCE))
near("a cached file of 64 pages (fincore %d at the cue) spliced into a pipe at once, then waiting in read(2) "
     "on a pipe: pages read, counted while it waits" % cue, got.get("reads", 0), truth["pages_read"], 64)
near_reads("… hits = the pages cached at the cue", got, "hits", cue, 64)
os.remove(ONCE)

# ---- small files read one after another: each file's one read is over when the next file's begins --
SMALL = os.path.join(DIR, "small")
os.mkdir(SMALL)
for i in range(256):
    make(os.path.join(SMALL, "%03d" % i), 16 * PAGE)
names = [os.path.join(SMALL, n) for n in sorted(os.listdir(SMALL))]
for name in names:
    evict(name)
truth, got, cue = run(procs, "files", SMALL, at_cue=lambda: sum(fincore(n) for n in names))
fetched = sum(fincore(n) for n in names) - cue
near("256 files of 16 pages, cold (%d pages cached at the cue), each read in one read, one after another: "
     "pages read" % cue, got.get("reads", 0), truth["pages_read"], truth["pages_read"])
near_reads("… misses = the pages they brought in (fincore after less at the cue)", got, "misses", fetched,
     truth["pages_read"])
near_reads("… hits = the pages cached at the cue", got, "hits", cue, truth["pages_read"])
for name in names:
    os.remove(name)
os.rmdir(SMALL)

# ---- a read larger than an interval, with another process's hits in the same intervals ------------
BIG = os.path.join(DIR, "big")
BIG_SIZE = 128 << 20
BIG_PAGES = BIG_SIZE // PAGE
make(BIG, BIG_SIZE)
evict(BIG)
warm(F)
system = Watch("cachestat")
big = Reader("big", BIG)
loop = Reader("loop", F)
procs.wait_lines(2)
system.wait_lines(2)
since, system_since = procs.mark(), system.mark()
cached_before = fincore(BIG)
loop.say("go")
big.say("go")
big_truth = big.truth()
loop.say("stop")
loop_truth = loop.truth()
procs.wait_lines(3)
system.wait_lines(3)
big_rows, loop_rows = procs.rows(big.pid, since), procs.rows(loop.pid, since)
got, loop_got = procs.sum(big.pid, since), procs.sum(loop.pid, since)
system_docs = system.docs[system_since:]
big.exit()
loop.exit()
system.stop()
fetched = fincore(BIG) - cached_before
print("# one read of %d MiB, cold (%d pages cached before it), beside a process reading a cached file: "
      "%d intervals of %s s" % (BIG_SIZE >> 20, cached_before, len(big_rows), INTERVAL))
near("one %d MiB read of a cold file, in %s s intervals: pages read = the read's size" % (BIG_SIZE >> 20, INTERVAL),
     got.get("reads", 0), big_truth["pages_read"], BIG_PAGES)
near_reads("… misses = the pages it brought in (fincore after less before)", got, "misses", fetched, BIG_PAGES)
near_reads("… hits = the pages cached before it (fincore)", got, "hits", cached_before, BIG_PAGES)
worst = max((row.get("hits", 0) - row.get("maps", 0) for row in big_rows), default=0)
ok(worst <= max(0.02 * BIG_PAGES, cached_before + 2),
   "… in no interval more hits than were cached before it, beside the pages it mapped (most in one: %d)" % worst)
loop_pages = loop_truth["pages_read"]
near_reads("the other process, reading a cached file meanwhile: hits = every page it read (its count)",
     loop_got, "hits", loop_pages, loop_pages)
# System-wide, each interval: at least the hits of the other process's reads that ended in it
# (their time stamps). cachestat takes its counts a moment before it stamps a line (a task
# iterator runs first: milliseconds under ASan): the reads of the 10 ms at either end are left
# out, and one 1 MiB read of slack.
MARGIN = 10e6
short, seen = [], []
for doc in system_docs:
    end, start = doc["time_ns"], doc["time_ns"] - doc["interval_ns"]
    inside = sum(pages for stamp, pages in loop_truth["reads"] if start + MARGIN <= stamp <= end - MARGIN)
    seen.append("%d/%d" % (doc.get("hits", 0), inside))
    if doc.get("hits", 0) < inside - 256:
        short.append((doc.get("hits", 0), inside))
print("# cachestat's hits / the other process's, each interval: " + " ".join(seen))
ok(not short, "cachestat, every interval: hits at least those of the other process's reads in it (short: %s)" % short[:5])

# ---- a write creating pages inside the range a finished read covered -----------------------------
R = os.path.join(DIR, "rewritten")
make(R, SIZE)
warm(R)
truth, got, cue = run(procs, "rewrite", R, at_cue=lambda: fincore(R))
near_reads("read (cached: fincore %d at the cue), truncate, write again: hits = the pages read" % cue, got, "hits",
     min(cue, truth["pages_read"]), PAGES)
near("… pages read", got.get("reads", 0), truth["pages_read"], PAGES)
near("… write misses = the pages written (its count)", got.get("write_misses", 0), truth["pages_written"], PAGES)
near_reads("… misses = the pages added: fincore after (the file was empty)", got, "misses", fincore(R), PAGES)
near("… dirties = the pages written", got.get("dirties", 0), truth["pages_written"], PAGES)

# ---- a writer running before tracing began, whose first event is a dirtying ----------------------
warm(R)
writer = Reader("overwrite", R)
late = Watch()
files = Watch("cachetop", "--files")
late.wait_lines(2)
files.wait_lines(2)
since, files_since = late.mark(), files.mark()
cue = fincore(R)
writer.say("go")
truth = writer.truth()
late.wait_lines(3)
files.wait_lines(3)
got = late.sum(writer.pid, since)
# Under its path, or under its device and inode while cachetop has not named it yet (naming takes
# up to a quarter of an interval, later on a busy ASan run).
st = os.stat(R)
file_got = {}
for key in (R, "dev %d:%d inode %d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)):
    for name, value in files.sum(key, files_since).items():
        file_got[name] = file_got.get(name, 0) + value
writer.exit()
late.stop()
files.stop()
near("a writer started before cachetop, overwriting cached pages (fincore %d at the cue): its row's dirties = "
     "the pages written" % cue, got.get("dirties", 0), truth["pages_written"], PAGES)
near("… write misses = the pages not cached at the cue", got.get("write_misses", 0), PAGES - cue, PAGES)
near("… the file's dirties (--files)", file_got.get("dirties", 0), truth["pages_written"], PAGES)

# ---- refaults of pages evicted before tracing began ---------------------------------------------


def vmstat(key):
    for line in open("/proc/vmstat"):
        name, value = line.split()
        if name == key:
            return int(value)
    return 0


def memstat(path, key):
    for line in open(path + "/memory.stat"):
        name, value = line.split()
        if name == key:
            return int(value)
    return 0


def memcg(limit):
    """A memory cgroup limited to `limit` bytes (v1 where memory is there, else v2), or None."""
    name = "iolens-patterns-%d" % os.getpid()
    try:
        if os.path.isdir("/sys/fs/cgroup/memory") and os.access("/sys/fs/cgroup/memory", os.W_OK):
            path = "/sys/fs/cgroup/memory/" + name
            os.makedirs(path, exist_ok=True)
            with open(path + "/memory.limit_in_bytes", "w") as f:
                f.write(str(limit))
            return path
        with open("/sys/fs/cgroup/cgroup.controllers") as f:
            if "memory" not in f.read().split():
                return None
        with open("/sys/fs/cgroup/cgroup.subtree_control", "w") as f:
            f.write("+memory")
        path = "/sys/fs/cgroup/" + name
        os.makedirs(path, exist_ok=True)
        with open(path + "/memory.max", "w") as f:
            f.write(str(limit))
        return path
    except OSError:
        return None


def remove_cgroup(path):
    """Removed once nothing runs in it (a process killed a moment ago may still be there)."""
    for _ in range(200):
        try:
            os.rmdir(path)
            return
        except OSError:
            for pid in open(path + "/cgroup.procs").read().split():
                try:
                    os.kill(int(pid), 9)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
    print("# could not remove the cgroup " + path, file=sys.stderr)


procs.stop()
cgroup = memcg(32 << 20)
if cgroup:
    enter = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup]
    M = os.path.join(DIR, "twice")
    make(M, 64 << 20)
    evict(M)
    # Read once in the cgroup, with nothing tracing: half of it is evicted by the cgroup's reclaim,
    # leaving shadow entries.
    subprocess.run([*enter, "dd", "if=" + M, "of=/dev/null", "bs=1M", "status=none"], check=True)
    procs, system = Watch(), Watch("cachestat", sample=lambda: vmstat("workingset_refault_file"))
    r = Reader("tails", M, prefix=enter)  # reads it all again
    procs.wait_lines(2)
    system.wait_lines(2)
    since, system_since = procs.mark(), system.mark()
    cgroup_before = memstat(cgroup, "workingset_refault_file")
    r.say("go")
    r.truth()
    cgroup_refaults = memstat(cgroup, "workingset_refault_file") - cgroup_before
    procs.wait_lines(3)
    system_until = system.wait_lines(3)
    vmstat_refaults = system.samples[system_until - 1] - system.samples[system_since - 1]
    got = procs.sum(r.pid, since)
    system_refaults = sum(doc.get("refaults", 0) for doc in system.docs[system_since:system_until])
    r.exit()
    procs.stop()
    system.stop()
    scale = (64 << 20) // PAGE
    ok(cgroup_refaults > scale // 4, "the second read in a 32 MiB cgroup refaults (memory.stat: %d pages)" % cgroup_refaults)
    near("refaults of pages evicted before cachetop began: its row = the cgroup's workingset_refault_file "
         "(memory.stat)", got.get("refaults", 0), cgroup_refaults, scale)
    # The system's, from the interval after one line to the one that ended with another, and
    # /proc/vmstat read as each of those two lines arrived: the same time but for how long a line
    # takes to arrive (on a busy machine other processes refault too: 2 % of all of them).
    near("cachestat's refaults, every process's, = /proc/vmstat's workingset_refault_file over the same intervals",
         system_refaults, vmstat_refaults, max(scale, vmstat_refaults))
    remove_cgroup(cgroup)
    os.remove(M)
else:
    skip("no memory cgroup can be made here")

os.remove(F)
os.remove(BIG)
os.remove(R)
plan()
