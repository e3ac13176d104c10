"""block_latency.py: an independent tracer's block request latencies (bpftrace on the block tracepoints), the truth tests hold iolens's to.

  program DEV...   the bpftrace program for the disks DEV (MAJ:MIN, whole disks): for each request of
                   theirs, the moments of its first bio's queueing (block_bio_queue), its start
                   (block_io_start; block_getrq before Linux 6.5) and its issue (block_rq_issue),
                   paired by disk and sector with its completion (block_rq_complete), the spans
                   between them counted in the kernel (16 ns steps) and printed as it ends (SIGINT)
  run PROGRAM      runs the tracer (bpftrace) on the program PROGRAM (tracer_command says how)
  summary TRACE    what TRACE holds, one line per disk, process and op: each span's count, avg, p50, p99, max
  count TRACE ...  how many of a disk's requests of an op the tracer saw from start to completion
  done TRACE ...   the time from completion to the kernel's accounting (block_io_done) of a disk's requests of
                   an op, summed, and their count: what /proc/diskstats' time counts beyond iolens's
  holds TRACE ...  whether a percentile iolens printed is the one of the tracer's requests (holds
                   --help): exit 0 if it is, 3 if not, 4 if the tracer saw none of those requests
  range TRACE ...  the values iolens's percentile may be of: LOW HIGH, ns

The kernel's start of a request (start_time_ns, what /proc/diskstats and iolens count from) is no
tracepoint's moment: a clock read as the request is made, before block_io_start (block_getrq),
and since Linux 6.9 the submitter's plug's cached clock, read once per plug, as early as its first
bio's queueing (6.9 to 6.17: read for the bio's issue time, just before block_bio_queue fires: the
slack below; earlier for all but the first of several bios submitted under one
plug of the submitter's own, as io_uring's batches are: the tests' fio jobs submit one bio at a
time). iolens times the issue itself at block_rq_issue, as the tracer does (not from the kernel's
io_start_time_ns, the plug's clock too, which makes a request issued under its own plug seem
issued as it started).
So each request's span as iolens counts it lies between two of the tracer's: start to completion
between from_start and from_bio, device time is from_issue, queue time below bio_to_issue (the
kernel's start, read after block_io_start, may be later than the tracer's by a preemption between:
no bound below). Requests plugged several to a submitter's plug start at the plug's clock, read at
the first bio, so earlier than each one's block_io_start: their queue time is at least
start_to_issue, with no bound above (--span queue-plugged; judge its median: the first of a plug
may see the clock read after its block_io_start). Measured here (6.18, psync 4 KiB reads of a loop device, a CPU hog on each core):
biotop's mean span from -0.9 to +1.6 us off from_start's, 1.3 to 4.3 us below from_bio's; on a
disk with iostats off, where biotop times the start itself, within 0.9 us of from_start's
(block_io_start) and of from_bio's (block_getrq, a moment after the bio's queueing).
"""
import argparse
import math
import os
import re
import sys

# Each span's end at block_rq_complete differs between iolens and the tracer by what runs between
# their two clock reads: the rest of the tracer's program (attached first, it runs first), measured
# as it runs (@self_ns, its mean), and what no program times: the call of iolens's program and its
# own work before it reads the clock, other programs (their order is their attachment's), an
# interrupt; its start by the like at the tracepoint (and in Linux 6.9 to 6.17 the kernel's start
# is the submitter's plug's clock, read for the bio's issue time just before block_bio_queue fires).
# Natively that is a few hundred ns a piece: 3 us either side of the bounds, and the tracer's mean.
# In a guest under TCG each piece takes microseconds: the untimed ones came to 3 to 7 us there
# (stat -x's p50 of dd's reads 15 to 20 us above the tracer's from_bio on 6.12), less than the
# tracer's own program (11 to 17 us: 3 map lookups, 3 deletions, an update), whose mean bounds
# them: the slack is 3 us and twice that mean.
SLACK_NS = 3000
# Completions a program may not have run for: all_but_missed in tests/cli/lib.sh (0.5 %), for
# iolens and the tracer alike.
MISSED = 0.005
STEP_SHIFT = 4  # the program's latencies in 16 ns steps

# The tracer's spans, to the completion (from_*) or to the issue.
SPANS = ("from_bio", "from_start", "from_issue", "bio_to_issue", "start_to_issue")
# iolens's spans (holds --span): the tracer's below and above each (None: 0 below, no bound above),
# then the tracer's own spans, each bound by itself (what a program timing that span would print).
BOUNDS = {"total": ("from_start", "from_bio"), "device": ("from_issue", "from_issue"), "queue": (None, "bio_to_issue"),
          "queue-plugged": ("start_to_issue", None)}
BOUNDS.update({s: (s, s) for s in SPANS})
LINE = re.compile(r"^@req\[(\d+), (\d+), ([A-Za-z]*), (\d+), (\d+), (\d+)\]: (\d+)$")
DONE_LINE = re.compile(r"^@(done_ns|done_n)\[(\d+), ([A-Za-z]*)\]: (\d+)$")
SELF_LINE = re.compile(r"^@(self_ns|self_n): (\d+)$")

# block_io_done (Linux 6.5), where the kernel has it: each request's time from its completion
# (block_rq_complete, in blk_update_request, where iolens's spans end) to the kernel's accounting of
# it (blk_account_io_done, where /proc/diskstats' time ends: its clock read just before), the bios'
# completion between (for a read, the reader woken), summed per disk and rwbs.
DONE_PROGRAM = """tracepoint:block:block_io_done /%(disks)s/ {
	$c = @completed_at[args->dev, args->sector];
	if ($c != 0) {
		@done_ns[args->dev, args->rwbs] = sum(nsecs - $c);
		@done_n[args->dev, args->rwbs] = count();
		delete(@completed_at[args->dev, args->sector]);
	}
}
"""


def dev_t(text):
    """MAJ:MIN as the tracepoints' dev field (the kernel's dev_t: major << 20 | minor)."""
    major, minor = (int(x) for x in text.split(":"))
    return major << 20 | minor


def maj_min(text):
    """An argument that is MAJ:MIN, said so when it is not."""
    if not re.fullmatch(r"\d+:\d+", text):
        raise argparse.ArgumentTypeError("'%s' is not MAJ:MIN" % text)
    return text


def partitions(disk):
    """The MAJ:MIN of a whole disk's partitions (sysfs): a bio's dev is its partition's."""
    found = []
    try:
        base = os.path.realpath("/sys/dev/block/" + disk)
        for name in sorted(os.listdir(base)):
            if os.path.exists(os.path.join(base, name, "partition")):
                with open(os.path.join(base, name, "dev")) as f:
                    found.append(f.read().strip())
    except OSError:
        pass
    return found


def has_tracepoint(name):
    # As tests/cli/lib.sh's bio_mechanisms: the kernel's BTF has the tracepoint's typedef.
    try:
        with open("/sys/kernel/btf/vmlinux", "rb") as f:
            return b"\x00btf_trace_%s\x00" % name.encode() in f.read()
    except OSError:
        return False


def has_block_io_start():
    return has_tracepoint("block_io_start")


# A span the program did not see (no bio before the start, no issue after it): its 16 ns steps' mark.
UNSEEN = 0xffffffff


def program(devices):
    disks = " || ".join("args->dev == %d" % dev_t(d) for d in devices)
    # A bio's dev is its partition's, its sector the disk's (remapped): its disk's dev is taken.
    parts = [(dev_t(p), dev_t(d)) for d in devices for p in partitions(d)]
    any_dev = " || ".join(["args->dev == %d" % dev_t(d) for d in devices] + ["args->dev == %d" % p for p, _ in parts])
    to_disk = "".join("\tif ($dev == %d) { $dev = %d; }\n" % pd for pd in parts)
    start = "block_io_start" if has_block_io_start() else "block_getrq"  # block_getrq: a bio, maybe a partition's
    of_bio = start == "block_getrq"
    done = has_tracepoint("block_io_done")
    # Little work at the completion: the programs of iolens that run after this one there count it
    # in their spans. Each request one count, keyed by its disk, process, rwbs and three spans in
    # 16 ns steps: start to completion, start to issue, bio's queueing to start (UNSEEN: not seen).
    return """// iolens tests: block request spans on %(devices)s, from %(start)s (tests/cli/block_latency.py)
BEGIN { printf("attached\\n"); }
tracepoint:block:block_bio_queue /%(any_dev)s/ {
	$dev = args->dev;
%(to_disk)s	@bio_at[$dev, args->sector] = nsecs;
}
tracepoint:block:%(start)s /%(start_test)s/ {
	$now = nsecs;
	$dev = args->dev;
%(start_map)s	$bio = @bio_at[$dev, args->sector];
	$early = $bio != 0 && $bio <= $now ? ($now - $bio) >> %(shift)d : %(unseen)d;
	@start_at[$dev, args->sector] = $now;
	@who[$dev, args->sector] = (pid << 32) | ($early < %(unseen)d ? $early : %(unseen)d);
	delete(@bio_at[$dev, args->sector]);
}
tracepoint:block:block_rq_issue /%(disks)s/ { @issue_at[args->dev, args->sector] = nsecs; }
tracepoint:block:block_rq_complete /%(disks)s/ {
	$now = nsecs;
	$start = @start_at[args->dev, args->sector];
	if ($start != 0) {
		$who = @who[args->dev, args->sector];
		$issue = @issue_at[args->dev, args->sector];
		$queue = $issue >= $start ? ($issue - $start) >> %(shift)d : %(unseen)d;
		@req[args->dev, $who >> 32, args->rwbs, ($now - $start) >> %(shift)d, $queue, $who & %(unseen)d] = count();
		delete(@start_at[args->dev, args->sector]);
		delete(@who[args->dev, args->sector]);
		delete(@issue_at[args->dev, args->sector]);
%(to_done)s		@self_ns = sum(nsecs - $now);
		@self_n = count();
	}
}
%(done)sEND { clear(@bio_at); clear(@start_at); clear(@who); clear(@issue_at);%(done_clear)s }
""" % {"devices": " ".join(devices), "start": start, "disks": disks, "any_dev": any_dev, "to_disk": to_disk,
       "start_test": any_dev if of_bio else disks, "start_map": to_disk if of_bio else "", "shift": STEP_SHIFT,
       "unseen": UNSEEN, "to_done": "\t\t@completed_at[args->dev, args->sector] = $now;\n" if done else "",
       "done": DONE_PROGRAM % {"disks": disks} if done else "", "done_clear": " clear(@completed_at);" if done else ""}


# How the tracer runs: bpftrace in a mount namespace of its own with tracefs mounted there (a
# machine freshly booted here has none; its own mounts are left as they are), its locked memory
# unlimited, room for the keys of many requests in flight; and the kernel's BTF given as a file:
# bpftrace 0.17 finds it among the kernel's BTF objects by name, which the kernel gives its own
# from Linux 5.11 on, so on 5.10 it found none and failed ("unknown type name 'dev_t'").
VMLINUX_BTF = "/sys/kernel/btf/vmlinux"
TRACER_SHELL = ('{ mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing; } && '
                '{ ulimit -l unlimited 2>/dev/null; exec bpftrace "$1"; }')


def tracer_command(program_file):
    """The command (argv) that runs the tracer on program_file, and what it adds to the environment.
    It execs bpftrace in the end: its pid is the tracer's."""
    env = {"BPFTRACE_MAP_KEYS_MAX": "65536"}
    if os.path.exists(VMLINUX_BTF):
        env["BPFTRACE_BTF"] = VMLINUX_BTF
    return ["unshare", "-m", "sh", "-c", TRACER_SHELL, "_", program_file], env


def op_of(rwbs):
    """The op of a request by its rwbs: R, W, D (discard), F (an empty flush) or another letter."""
    body = rwbs[1:] if rwbs.startswith("F") and len(rwbs) > 1 else rwbs
    return body[:1] if body[:1] in ("R", "W", "D", "E", "N") else "F" if rwbs.startswith("F") else "?"


def load(path):
    """{span: [(dev, pid, op, ns, count)]} from the program's output: each request's four spans (those it saw)."""
    spans = {s: [] for s in SPANS}
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if not m:
                continue
            dev, pid, op, total, queue, early, n = int(m[1]), int(m[2]), op_of(m[3]), int(m[4]), int(m[5]), int(m[6]), int(m[7])
            key = (dev, pid, op)
            spans["from_start"].append(key + (total << STEP_SHIFT, n))
            if queue != UNSEEN:
                spans["from_issue"].append(key + ((total - queue) << STEP_SHIFT, n))
            if early != UNSEEN:
                spans["from_bio"].append(key + ((total + early) << STEP_SHIFT, n))
                if queue != UNSEEN:
                    spans["bio_to_issue"].append(key + ((queue + early) << STEP_SHIFT, n))
            if queue != UNSEEN:
                spans["start_to_issue"].append(key + (queue << STEP_SHIFT, n))
    return spans


def self_ns(path):
    """The tracer's completion program's mean time to its last clock read, ns (0: not said)."""
    found = {"self_ns": 0, "self_n": 0}
    with open(path) as f:
        for line in f:
            m = SELF_LINE.match(line.strip())
            if m:
                found[m[1]] = int(m[2])
    return found["self_ns"] // found["self_n"] if found["self_n"] else 0


def values(entries, dev=None, pid=None, op=None):
    """The sorted latencies (ns) of the entries matching; pid "most": the process with the most requests."""
    chosen = [e for e in entries if (dev is None or e[0] == dev) and (op is None or e[2] == op)]
    if pid == "most":
        per = {}
        for e in chosen:
            per[e[1]] = per.get(e[1], 0) + e[4]
        pid = max(per, key=per.get) if per else None
    if pid is not None:
        chosen = [e for e in chosen if e[1] == int(pid)]
    out = []
    for e in chosen:
        out.extend([e[3]] * e[4])
    out.sort()
    return out


# The two scales iolens keeps latencies on (a percentile is interpolated within its bucket: anywhere in it).
def biotop_bucket(ns):
    """src/bpf/bio.h's bio_small_bucket: 4 buckets per power of two, from 2^10 to 2^34 ns."""
    if ns < 1 << 10:
        return 0
    if ns >= 1 << 34:
        return 97
    e = ns.bit_length() - 1
    return 1 + ((e - 10) << 2) + ((ns >> (e - 2)) & 3)


def biotop_lower(bucket):
    if bucket == 0:
        return 0
    if bucket >= 97:
        return 1 << 34
    e = 10 + ((bucket - 1) >> 2)
    return (4 + ((bucket - 1) & 3)) << (e - 2)


def biotop_bucket_bounds(ns):
    """The lowest and highest value of ns's bucket on biotop's scale (the last: no highest)."""
    b = biotop_bucket(ns)
    return biotop_lower(b), (biotop_lower(b + 1) - 1 if b < 97 else 1 << 64)


def stat_bucket(ns):
    """src/bpf/histogram.h's log_linear_bucket: exact below 128 ns, 64 buckets per power of two."""
    e = (ns | 64).bit_length() - 1
    return min(((e - 6) << 6) + (ns >> (e - 6)), 2303)


def stat_lower(bucket):
    if bucket < 128:
        return bucket
    index = bucket - 128
    e = 7 + index // 64
    return (64 + index % 64) << (e - 6)


def stat_width(bucket):
    return 1 if bucket < 128 else 1 << ((bucket - 128) // 64 + 1)


def stat_bucket_bounds(ns):
    """The lowest and highest value of ns's bucket on stat -x's scale."""
    b = stat_bucket(ns)
    return stat_lower(b), stat_lower(b) + stat_width(b) - 1


def stat_upper(ns):
    """stat -x's max: the upper bound of the highest bucket with a request."""
    return stat_bucket_bounds(ns)[1]


# What iolens may print for a value on each scale, lowest and highest: a percentile interpolated
# within the value's bucket (vt_quantile: anywhere in it), its upper bound (stat-max), or the value
# itself (exact: biotop's max).
SCALES = {"biotop": biotop_bucket_bounds, "stat": stat_bucket_bounds, "stat-max": lambda ns: (stat_upper(ns), stat_upper(ns)),
          "exact": lambda ns: (ns, ns)}


def window(lat, quantile, count):
    """The tracer's values iolens's percentile may be of, from below and from above, and the rank:
    iolens takes the value of rank r = ceil(q * count) of its own count requests. Both sets are
    the same requests but for those each missed, a and b of them: iolens's value of rank r lies
    between the tracer's of ranks r - b and r + a. With one of a and b at most 0.5 % (iolens's, as
    all_but_missed holds it), both are at most k = |count - n| + 0.5 % of the larger."""
    n = len(lat)
    rank = max(1, math.ceil(quantile * count - 1e-9))
    k = abs(count - n) + math.ceil(MISSED * max(count, n))
    return lat[max(0, min(n - 1, rank - 1 - k))], lat[max(0, min(n - 1, rank - 1 + k))], rank, k


def us(ns):
    return "%.1f us" % (ns / 1000)


def percentile(lat, q):
    return lat[max(1, math.ceil(q * len(lat) - 1e-9)) - 1]


def summary(trace):
    """What the trace holds, a line per disk, process and op: each span's count, avg, p50, p99, max."""
    spans = load(trace)
    lines = []
    for dev, pid, op in sorted({(e[0], e[1], e[2]) for s in SPANS for e in spans[s]}):
        said = []
        for s in SPANS:
            lat = values(spans[s], dev, pid, op)
            if lat:
                said.append("%s %d: avg %s p50 %s p99 %s max %s" % (s, len(lat), us(sum(lat) / len(lat)), us(percentile(lat, 0.5)),
                                                                    us(percentile(lat, 0.99)), us(lat[-1])))
        lines.append("# tracer: %d:%d pid %d %s: %s" % (dev >> 20, dev & 0xfffff, pid, op, "; ".join(said)))
    return lines


def bounds(trace, dev, span="total", op="R", pid=None, quantile=0.5, count=None):
    """The values iolens's percentile (quantile) of count requests of op on the disk dev (MAJ:MIN),
    of the process pid (or "most", or all), timing span, may be of: (low, high, said), ns, the
    tracer's spans from below and from above, the ranks the two may differ by, the slack; high
    1 << 64 where nothing bounds it above. LookupError when the tracer saw none of those requests."""
    spans = load(trace)
    below, above = BOUNDS[span]
    lists = {s: values(spans[s], dev_t(dev), pid, op) for s in (below, above) if s}
    first_list = lists[above or below]
    for s, lat in lists.items():
        if not lat:
            raise LookupError("the tracer saw no %s request of %s%s (%s)" % (op, dev, " by pid %s" % pid if pid else "", s))
    if count is None:
        count = len(first_list)
    # From below: the lower span's value of rank r - k, less the slack; from above, the upper's of rank r + k, and the slack.
    slack = SLACK_NS + 2 * self_ns(trace)
    low = max(0, window(lists[below], quantile, count)[0] - slack) if below else 0
    _, high, rank, k = window(first_list, quantile, count)
    high = high + slack if above else 1 << 64
    if quantile >= 1:
        # The longest request is most often one a stall of the machine made long (the host taking
        # its CPU, interrupts), and a stall may fall between the two programs' ends of that one
        # request (13 us on the longest of 2000, 416 us, once here): the longest may be 1/16 more.
        high += high // 16
    said = lambda s: "%s %s" % (s, us(percentile(lists[s], quantile))) if s else "no bound"
    spans_said = "%s .. %s" % (said(below), said(above)) if below != above else said(above)
    return low, high, "the tracer's p%g of %d requests: %s; of rank %d +- %d, +- %s: %s .. %s" % (
        quantile * 100, len(first_list), spans_said, rank, k, us(slack), us(low), us(high) if above else "-")


def holds(trace, value, scale, dev, span="total", op="R", pid=None, quantile=0.5, count=None, at_most=None):
    """Whether value, a percentile iolens printed on scale (SCALES), is in a bucket of a value
    bounds() allows (and at most at_most, the longest iolens printed): (True or False, said).
    LookupError when the tracer saw none of those requests."""
    low, high, said = bounds(trace, dev, span, op, pid, quantile, count)
    first, last = SCALES[scale](low)[0], SCALES[scale](high)[1]
    if at_most is not None:
        first, last = min(first, at_most), min(last, at_most)
    return first <= value <= last, "%s, in buckets %s .. %s" % (said, us(first), us(last) if high < 1 << 64 else "-")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("program")
    p.add_argument("devices", nargs="+", type=maj_min)
    p = sub.add_parser("run")
    p.add_argument("program")
    p = sub.add_parser("summary")
    p.add_argument("trace")
    p = sub.add_parser("count")
    p.add_argument("trace")
    p.add_argument("--dev", required=True, type=maj_min, help="MAJ:MIN")
    p.add_argument("--op", default="R")
    p = sub.add_parser("done")
    p.add_argument("trace")
    p.add_argument("--dev", required=True, type=maj_min, help="MAJ:MIN")
    p.add_argument("--op", default="R")
    p = sub.add_parser("value")
    p.add_argument("trace")
    p.add_argument("--span", choices=SPANS, required=True)
    p.add_argument("--dev", required=True, type=maj_min, help="MAJ:MIN")
    p.add_argument("--op", default="R")
    p.add_argument("--pid")
    p.add_argument("--quantile", type=float, default=0.5)
    for name in ("holds", "range"):
        p = sub.add_parser(name)
        p.add_argument("trace")
        p.add_argument("--span", choices=BOUNDS, default="total",
                       help="iolens's: total (start to completion), device (issue to completion), queue (start to issue); "
                            "or one of the tracer's, bound by itself: " + ", ".join(SPANS))
        p.add_argument("--dev", required=True, type=maj_min, help="MAJ:MIN")
        p.add_argument("--op", default="R")
        p.add_argument("--pid", help="a process (its requests' submitter), or 'most': the one with the most requests")
        p.add_argument("--quantile", type=float, default=0.5)
        p.add_argument("--count", type=int, help="the requests iolens's percentile is of (default: the tracer's)")
        if name == "holds":
            p.add_argument("--scale", choices=SCALES, required=True, help="biotop's buckets (4 per power of two), stat -x's (64), their upper bounds (stat -x's max), or none")
            p.add_argument("--value", type=int, required=True, help="iolens's percentile, ns")
            p.add_argument("--at-most", type=int, help="the longest iolens printed, ns: no percentile above it (biotop)")
    a = parser.parse_args()

    if a.what == "program":
        sys.stdout.write(program(a.devices))
        return 0
    if a.what == "run":
        argv, env = tracer_command(a.program)
        os.execvpe(argv[0], argv, {**os.environ, **env})
    if a.what == "done":
        # Completion to accounting of the op's requests: "NS COUNT", or nothing where not traced.
        found = {"done_ns": 0, "done_n": 0}
        with open(a.trace) as f:
            for line in f:
                m = DONE_LINE.match(line.strip())
                if m and int(m[2]) == dev_t(a.dev) and op_of(m[3]) == a.op:
                    found[m[1]] += int(m[4])
        if has_tracepoint("block_io_done"):
            print(found["done_ns"], found["done_n"])
        return 0
    if a.what == "count":
        # The op's requests the tracer saw from start to completion.
        print(len(values(load(a.trace)["from_start"], dev_t(a.dev), None, a.op)))
        return 0
    if a.what == "summary":
        for line in summary(a.trace):
            print(line)
        return 0
    if a.what == "value":
        # The tracer's own percentile of a span, ns (nothing when it saw none).
        lat = values(load(a.trace)[a.span], dev_t(a.dev), a.pid, a.op)
        if lat:
            print(int(percentile(lat, a.quantile)))
        return 0
    try:
        if a.what == "range":
            low, high, _ = bounds(a.trace, a.dev, a.span, a.op, a.pid, a.quantile, a.count)
            print(low, high)
            return 0
        good, said = holds(a.trace, a.value, a.scale, a.dev, a.span, a.op, a.pid, a.quantile, a.count, a.at_most)
    except LookupError as e:
        print(e)
        return 4
    print(said)
    return 0 if good else 3


if __name__ == "__main__":
    sys.exit(main())
