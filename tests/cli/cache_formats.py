"""cache_formats.py: cachestat's and cachetop's CSV held to their JSON lines: the header is the keys of a JSON
line in order (an interval's own, then a row's), the values the same in the same units (time_ns, bytes,
ratios from 0 to 1 written alike). Run by cachestat.sh.

  keys CSV JSON                   prints "same", or both lists of names
  tojson CSV                      the CSV rows as JSON lines, each row under the key JSON has for rows
  check CSV JSON START_NS END_NS  prints "ok", or what is wrong: times within the run, interval_ns,
                                  cached_bytes in bytes, each ratio as its row's counts make it
"""
import csv, json, sys


def csv_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def typed(text):
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def json_records(path):
    """Each row of each JSON line with its line's own fields; a line without rows is one record."""
    records = []
    for line in open(path):
        doc = json.loads(line)
        head = {k: v for k, v in doc.items() if not isinstance(v, list)}
        lists = [v for v in doc.values() if isinstance(v, list)]
        records += [dict(head, **r) for r in lists[0]] if lists else [head]
    return records


def as_json(x):
    """A fraction as iolens writes it: whole numbers as integers, else six significant digits."""
    return str(int(x)) if x == int(x) else "%.6g" % x


def ratios(row):
    """The ratios a row must have, from its own counts: (key, value or None for unknown)."""
    if "hit_ratio" in row:
        known = row["mode"] == "ebpf" and row["hits"] + row["misses"]
        yield "hit_ratio", row["hits"] / (row["hits"] + row["misses"]) if known else None
    if "read_hit" in row:
        yield "read_hit", min(row["hits"], row["accesses"]) / row["accesses"] if row["accesses"] else None
        if row["write_misses"] is not None:
            d = row["dirties"]
            yield "write_hit", (d - row["write_misses"]) / d if d else None


def keys(csv_path, json_path):
    header, _ = csv_rows(csv_path)
    for line in open(json_path):
        doc = json.loads(line)
        lists = [v for v in doc.values() if isinstance(v, list)]
        if lists and not lists[0]:
            continue  # an interval without rows says nothing of a row's keys
        names = [k for k, v in doc.items() if not isinstance(v, list)] + (list(lists[0][0]) if lists else [])
        return "same" if names == header else "csv %s, json %s" % (header, names)
    return "no JSON line with a row"


def tojson(csv_path):
    header, rows = csv_rows(csv_path)
    key = "files" if "file" in header else "cgroups" if "cgroup" in header else "processes"
    for row in rows:
        print(json.dumps({key: [dict(zip(header, map(typed, row)))]}))


def check(csv_path, json_path, start, end):
    header, rows = csv_rows(csv_path)
    bad = []
    formats = (("csv", [dict(zip(header, r)) for r in rows]), ("json", json_records(json_path)))
    for fmt, records in formats:
        if not records:
            bad.append("no %s record" % fmt)
        for text in records:
            rec = {k: typed(v) for k, v in text.items()} if fmt == "csv" else text
            if not start <= rec["time_ns"] <= end:
                bad.append("%s time_ns %s not within the run" % (fmt, rec["time_ns"]))
            if not 0.25e9 <= rec["interval_ns"] <= 5e9:
                bad.append("%s interval_ns %s" % (fmt, rec["interval_ns"]))
            if rec["cached_bytes"] < 1 << 20 or rec["cached_bytes"] % 1024:
                bad.append("%s cached_bytes %s: not bytes" % (fmt, rec["cached_bytes"]))
            for key, want in ratios(rec):
                got = text[key]
                if want is None:
                    good = got in ("", None)
                elif fmt == "csv":
                    good = got == as_json(want)
                else:
                    good = got is not None and abs(got - want) < 1e-6
                if not good:
                    bad.append("%s %s %r, from the counts %r" % (fmt, key, got, want))
    return "; ".join(bad[:5]) or "ok"


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "keys":
        print(keys(*args))
    elif cmd == "tojson":
        tojson(*args)
    elif cmd == "check":
        print(check(args[0], args[1], int(args[2]), int(args[3])))
    else:
        sys.exit("usage: cache_formats.py keys|tojson|check ...")
