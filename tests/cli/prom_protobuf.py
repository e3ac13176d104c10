"""prom_protobuf.py: reads a delimited io.prometheus.client.MetricFamily stream (stdin), for the export tests.

A decoder of the protobuf wire format written from metrics.proto, apart from iolens's encoder.
  histograms FAMILY   one line per histogram of that family: its labels (k=v,...), sample_count,
                      the classic buckets' cumulative counts (le:count,...), the native histogram's
                      count (zero bucket and every positive bucket added up), and its lowest and
                      highest native index
  families            name:type of each family, one a line
"""
import sys


def varint(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def fields(data):
    """(field, wire, value) of a message: varints as ints, fixed64 as bytes, length-delimited as bytes."""
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 1:
            value, at = data[at:at + 8], at + 8
        elif wire == 2:
            length, at = varint(data, at)
            value, at = data[at:at + length], at + length
        else:
            raise ValueError("wire type %d" % wire)
        yield field, wire, value


def double(raw):
    import struct
    return struct.unpack("<d", raw)[0]


def zigzag(v):
    return (v >> 1) ^ -(v & 1)


def families(stream):
    at = 0
    while at < len(stream):
        length, at = varint(stream, at)
        yield stream[at:at + length]
        at += length


def histogram(h):
    count, classic, zero, deltas, spans = None, [], 0, [], []
    for f, _, v in fields(h):
        if f == 1:
            count = v
        elif f == 3:
            b = dict((bf, bv) for bf, _, bv in fields(v))
            classic.append("%g:%d" % (double(b[2]), b.get(1, 0)))
        elif f == 7:
            zero = v
        elif f == 12:
            s = dict((sf, sv) for sf, _, sv in fields(v))
            spans.append((zigzag(s.get(1, 0)), s.get(2, 0)))
        elif f == 13:
            deltas.append(zigzag(v))
    native, running, indexes, position, d = zero, 0, [], None, 0
    for offset, length in spans:
        position = offset if position is None else position + offset
        for _ in range(length):
            running += deltas[d]
            d += 1
            native += running
            indexes.append(position)
            position += 1
    low = min(indexes) if indexes else "none"
    high = max(indexes) if indexes else "none"
    return count, ",".join(classic), native, low, high, len(deltas) == d


def main():
    data = sys.stdin.buffer.read()
    for family in families(data):
        name, kind, metrics = "", 0, []
        for f, _, v in fields(family):
            if f == 1:
                name = v.decode()
            elif f == 3:
                kind = v
            elif f == 4:
                metrics.append(v)
        if sys.argv[1] == "families":
            print("%s:%d" % (name, kind))
        elif sys.argv[1] == "histograms" and name == sys.argv[2]:
            for m in metrics:
                labels, h = [], None
                for f, _, v in fields(m):
                    if f == 1:
                        pair = dict((lf, lv.decode()) for lf, _, lv in fields(v))
                        labels.append("%s=%s" % (pair.get(1, ""), pair.get(2, "")))
                    elif f == 7:
                        h = v
                if h is not None:
                    count, classic, native, low, high, whole = histogram(h)
                    print("%s %d %s %d %s %s %s" % (",".join(labels), count, classic, native, low, high,
                                                    "deltas-ok" if whole else "deltas-bad"))


main()
