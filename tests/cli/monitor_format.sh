#!/usr/bin/env bash
# monitor_format.sh: numbers as iolens stat prints them, held against dstat's own dchg and fchg (taken from /usr/bin/dstat) on thousands of values.
. "$(dirname "$0")/lib.sh"

MONFMT=${BUILD:-$TOP/build}/tests/helpers/monfmt
[ -x "$MONFMT" ] || skip_all "monfmt is not built (make check builds it)"
DSTAT=$(command -v dstat || true)
[ -n "$DSTAT" ] && grep -q '^def fchg' "$DSTAT" || skip_all "dstat is not installed (make test-deps installs it)"

# The cases: round numbers, the edges where a digit is gained (9.96, 99.5, 999.7 ...), and random ones of every size.
python3 - > "$T/cases" <<'PY'
import random
random.seed(4)
vals = [0, 0.001, 0.4, 0.5, 0.6, 1, 1.5, 2.5, 9.4, 9.5, 9.6, 9.94, 9.95, 9.96, 9.97, 9.99, 10, 99.5, 99.94, 99.96,
        999.4, 999.5, 999.7, 1000, 1023.6, 1024, 9999.5, 12345, 99999.7, 1e6, 1048576, 1.5e9, 7.7e12, 3e15]
for e in range(-3, 16):
    for _ in range(60):
        vals.append(random.uniform(0.5, 1) * 10 ** e)
for t in "df":
    for w in (2, 3, 4, 5, 6):
        for b in (1000, 1024):
            for v in vals:
                print(t, w, b, repr(v))
PY
"$MONFMT" < "$T/cases" > "$T/iolens"
check_eq "every case formatted" "$(wc -l < "$T/cases")" "$(wc -l < "$T/iolens")"

python3 - "$DSTAT" "$T/cases" "$T/iolens" > "$T/verdict" <<'PY'
import re, sys
source = open(sys.argv[1]).read()
ns = {}
for name in ("dchg", "fchg"):
    exec(re.search(r"^def %s\(.*?(?=^def )" % name, source, re.S | re.M).group(0), ns)
wrong = 0
cases = [l.split() for l in open(sys.argv[2])]
ours = [l.split() for l in open(sys.argv[3])]
for (t, w, b, v), (text, unit) in zip(cases, ours):
    ret, c = ns["%schg" % t](float(v), int(w), float(b))
    if (ret, c) != (text, int(unit)):
        wrong += 1
        if wrong <= 5:
            print("differs: %s width %s base %s value %s: dstat %r %d, iolens %r %s" % (t, w, b, v, ret, c, text, unit))
print("wrong", wrong, "of", len(cases))
PY
check_eq "the same text and unit as dstat's dchg and fchg ($(tail -1 "$T/verdict"))" "wrong 0 of $(wc -l < "$T/cases")" "$(tail -1 "$T/verdict")"
grep '^differs' "$T/verdict" | sed 's/^/# /'

echo "1..$t_count"
