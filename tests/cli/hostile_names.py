#!/usr/bin/env python3
# hostile_names.py: what hostile_names.sh checks of an output: clean for a terminal, strict UTF-8 JSON, one CSV record a row, names recoverable.
"""
The documented escape (iolens(1), NAMES IN OUTPUT): a byte that is not part of valid UTF-8,
and a backslash, are written as the four characters \\xNN; in tables, CSV and messages control
characters too, C1 (U+0080..U+009F), bidirectional controls and invisible format characters
included, each of their bytes (CSV keeps line feeds and tabs, inside quotes); JSON writes those
as \\uXXXX. unescape() reverses it.

  clean FILE...                  valid UTF-8, and no control character but line feeds and tabs,
                                 no C1, no bidirectional control, no invisible format character
                                 (HIDDEN, as iolens's char_hidden): safe on a terminal
  json FILE NAME_HEX...          strict UTF-8, JSON (a document or one per line); each name, after
                                 unescape, is the whole of a string or its last path component
  csv FILE NAME_HEX...           every record as many fields as the header; each name recoverable
  prom FILE NAME_HEX...          the exposition text is UTF-8; each name recoverable from a label
Exit 0, or 1 with what was wrong on stdout.
"""
import csv, io, json, re, sys

def unescape(text):
    return re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m[1], 16)]), text.encode("utf-8"))

def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)

def found(names, texts):
    got = set()
    for t in texts:
        raw = unescape(t)
        got.add(raw)
        got.add(raw.rsplit(b"/", 1)[-1])
        for word in re.split(rb"[ ()]", raw): # a path inside a sentence (doctor's numbers and more)
            got.add(word.rsplit(b"/", 1)[-1])
    return [n for n in names if n not in got]

# What no output may hold raw (src/common/util.c, char_hidden), but line feeds and tabs.
HIDDEN = [(0x00, 0x08), (0x0b, 0x1f), (0x7f, 0x9f), (0x61c, 0x61c), (0x115f, 0x1160), (0x180e, 0x180e),
          (0x200b, 0x200b), (0x200e, 0x200f), (0x2028, 0x202e), (0x2060, 0x206f), (0x3164, 0x3164),
          (0xfeff, 0xfeff), (0xffa0, 0xffa0), (0xfff0, 0xfffb), (0x1bca0, 0x1bca3), (0x1d173, 0x1d17a),
          (0xe0000, 0xe007f)]

def hidden(ch):
    return any(first <= ord(ch) <= last for first, last in HIDDEN)

def fail(why):
    print(why)
    sys.exit(1)

def main():
    mode, path, *rest = sys.argv[1:]
    data = open(path, "rb").read()
    try:
        text = data.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        fail("%s: not UTF-8: %s: %r" % (path, e, data[max(0, e.start - 20):e.end + 20]))
    names = [bytes.fromhex(h) for h in rest] if mode != "clean" else []
    if mode == "clean":
        for extra in rest:
            text += open(extra, "rb").read().decode("utf-8", "strict")
        for i, ch in enumerate(text):
            if hidden(ch):
                fail("U+%04X in %r" % (ord(ch), text[max(0, i - 30):i + 30]))
    elif mode == "json":
        try:
            docs = [json.loads(text)]
        except ValueError:
            docs = [json.loads(line) for line in text.splitlines() if line.strip()]
        missing = found(names, [s for d in docs for s in strings(d)])
        if missing:
            fail("not found after unescape: %r" % missing)
    elif mode == "csv":
        records = list(csv.reader(io.StringIO(text, newline="")))
        if not records or any(len(r) != len(records[0]) for r in records):
            fail("records of unequal length: %r" % records[:5])
        missing = found(names, [f for r in records for f in r])
        if missing:
            fail("not found after unescape: %r" % missing)
    elif mode == "prom":
        values = [re.sub(r'\\(.)', lambda m: "\n" if m[1] == "n" else m[1], v)
                  for v in re.findall(r'="((?:[^"\\]|\\.)*)"', text)]
        missing = found(names, values)
        if missing:
            fail("not found after unescape: %r" % missing)
    else:
        fail("unknown mode " + mode)

main()
