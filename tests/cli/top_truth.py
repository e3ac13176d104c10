#!/usr/bin/env python3
"""top_truth.py: which process was the most expensive, from /proc, for tests/cli/stat_top.sh.

  top_truth.py sample KIND OUT STOP     every 50 ms until the file STOP exists (and once more), each process's
                                        counter of KIND in OUT, a JSON line a sample
  top_truth.py judge KIND OUT LINES PID GROUP
                                        holds each of iolens stat's JSON LINES (but the first) to
                                        the samples around its interval

KIND: io (rchar + wchar of /proc/PID/io, bytes), bio (read_bytes + write_bytes of its threads'
/proc/PID/task/TID/io, without its reaped children's), cpu (utime +
stime of /proc/PID/stat, in percent of all the cpus' time), cputime (the time run on a cpu,
/proc/PID/schedstat's first field, in ns per second). On a busy machine another process
may outdo the test's own (PID): a line is right when the process it shows did, by the samples,
at least 85 % of what the most expensive one did, and when it shows PID, PID's figure is the
samples' within 15 %. A process's figure by the samples lies between its rates over two pairs of
them: the last before the interval and the first after it, the first and the last within it (50
ms apart at most from its ends); one gone by the first sample after it has no upper bound. Exit 1,
saying why, when a line is wrong; 2 when PID was never shown (others did more all along) — the test decides.
"""
import json
import os
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")
NCPU = sum(1 for l in open("/proc/stat") if l.startswith("cpu") and l[3].isdigit())


def counter(kind, pid):
    if kind == "cpu":
        f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])
    if kind == "cputime":
        return int(open("/proc/%s/schedstat" % pid).read().split()[0])
    if kind == "io":
        io = dict(l.split(": ") for l in open("/proc/%s/io" % pid).read().splitlines())
        return int(io["rchar"]) + int(io["wchar"])
    # Block I/O: its threads' own (/proc/PID/io adds a child's when it is reaped, as eBPF does
    # not: a shell that waited for a test would seem to have done all the test's I/O at once).
    total = 0
    for tid in os.listdir("/proc/%s/task" % pid):
        io = dict(l.split(": ") for l in open("/proc/%s/task/%s/io" % (pid, tid)).read().splitlines())
        total += int(io["read_bytes"]) + int(io["write_bytes"])
    return total


def sample(kind, out, stop):
    with open(out, "w") as f:
        last = False
        while not last:
            last = os.path.exists(stop)  # one more sample once it does, after the lines judged
            values = {}
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    values[pid] = counter(kind, pid)
                except (OSError, ValueError, IndexError, KeyError):
                    pass
            f.write(json.dumps({"t": time.time_ns(), "v": values}) + "\n")
            f.flush()
            time.sleep(0.05)


def rate(kind, a, b, pid):
    # (A process started after the first sample counts from 0, as iolens counts it.)
    seconds = (b["t"] - a["t"]) / 1e9
    if pid not in b["v"] or seconds <= 0:
        return None
    d = (b["v"][pid] - a["v"].get(pid, 0)) / seconds
    return 100.0 * d / HZ / NCPU if kind == "cpu" else d


def judge(kind, out, lines, ours, group):
    samples = [json.loads(l) for l in open(out)]
    bad, shown_ours = [], 0
    for line in lines.splitlines()[1:]:
        j = json.loads(line)
        end, start = j["time_ns"], j["time_ns"] - j["interval_ns"]
        g = j[group]
        pid, shown = str(g.get("pid")), g.get("name")
        figure = sum(g.get(k) or 0 for k in ("cpu_pct", "read_bytes_per_s", "write_bytes_per_s", "run_ns_per_s"))
        before = [s for s in samples if s["t"] <= start]
        after = [s for s in samples if s["t"] >= end]
        if not before or not after:
            bad.append("line ending %d: no samples around it" % end)
            continue
        outer = (before[-1], after[0])
        inner = [s for s in samples if start <= s["t"] <= end]
        inner = (inner[0], inner[-1]) if len(inner) >= 2 else outer
        def bounds(p):
            r = [rate(kind, *pair, p) for pair in (outer, inner)]
            r = [x for x in r if x is not None]
            if r and p not in outer[1]["v"]:
                # Gone by the first sample after: its last counts were never sampled (a parent's
                # /proc/PID/io takes a child's as it reaps it, then it may end itself at once).
                return (min(r), float("inf"))
            return (min(r), max(r)) if r else None
        best = max(((b[0], p) for p in outer[1]["v"] for b in [bounds(p)] if b), default=(0, "none"))
        mine = bounds(pid)
        said = "pid %s (%s) %.0f; the samples: it %s, the most %.0f (pid %s)" % (
            pid, shown, figure, "%.0f-%.0f" % mine if mine else "unknown", best[0], best[1])
        if kind == "bio" and pid != ours:
            # (By eBPF, --top-bio counts block requests, kept after a process ends; /proc's
            # write_bytes counts pages as they are dirtied: only ours is held, where shown.)
            continue
        if mine is None:
            bad.append(said + ": a process the samples never saw")
        elif mine[1] < 0.85 * best[0]:
            bad.append(said + ": not the most expensive")
        if pid == ours:
            shown_ours += 1
            if mine and not (0.85 * mine[0] <= figure <= 1.15 * mine[1]):
                bad.append(said + ": its figure is not its own within 15 %")
    print("; ".join(bad) if bad else "every line held to the samples")
    if bad:
        return 1
    return 0 if shown_ours else 2


if __name__ == "__main__":
    if sys.argv[1:2] == ["sample"]:
        sample(*sys.argv[2:5])
    else:
        sys.exit(judge(sys.argv[2], sys.argv[3], open(sys.argv[4]).read(), sys.argv[5], sys.argv[6]))
