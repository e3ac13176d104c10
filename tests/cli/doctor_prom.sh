#!/usr/bin/env bash
# doctor_prom.sh: docs/iolens-doctor-rules.yml is doctor --prometheus-rules (it cannot drift from the rule table), promtool accepts it, and on series scraped from iolens export in real runs (a filesystem filled, a hung libvtrace server) its alerts fire where live doctor finds the same, and only there.
. "$(dirname "$0")/lib.sh"

command -v promtool >/dev/null || skip_all "no promtool (make test-deps)"
command -v curl >/dev/null || skip_all "no curl (make test-deps)"
RULES=$TOP/docs/iolens-doctor-rules.yml
export VTRACE_DIR=$T/shm
mkdir -p "$VTRACE_DIR"

run "$IOLENS" doctor --no-config --prometheus-rules
check_eq "docs/iolens-doctor-rules.yml is what doctor --no-config --prometheus-rules writes" "" \
	"$(diff <(echo "$OUT") "$RULES")"
run promtool check rules "$RULES"
check_eq "promtool check rules: exit 0" 0 "$RC"
check_match "… every rule found" "SUCCESS: [0-9]+ rules found" "$OUT"
run "$IOLENS" doctor --no-config --set vtrace-hang.seconds=7 --prometheus-rules
check_match "a site's threshold (--set) in its rule" "expr: 'iolens_vtrace_oldest_in_flight_seconds >= 7'" "$OUT"

# ---- Real runs ---------------------------------------------------------------------------------------
# scrape: one scrape of a running exporter into $T/scrape.N.
port=$(free_port)
scrape_n=0
scrape() { scrape_n=$((scrape_n + 1)); curl -s "127.0.0.1:$port/metrics" >"$T/scrape.$scrape_n"; }
# series FILE NAME LABEL=VALUE: the sample of NAME whose labels include LABEL="VALUE", as
# 'NAME{labels}' and its value, tab apart.
series() {
	python3 - "$@" <<'EOF'
import re, sys
path, name, want = sys.argv[1], sys.argv[2], sys.argv[3]
key, value = want.split("=", 1)
for line in open(path):
    m = re.match(r'([a-z_]+)\{(.*)\} (\S+)$', line.strip())
    if m and m.group(1) == name and re.search(r'(^|,)%s="%s"' % (re.escape(key), re.escape(value)), m.group(2)):
        print("%s{%s}\t%s" % (m.group(1), m.group(2), m.group(3)))
        break
EOF
}

if is_root; then
	# A filesystem 95 % used: a tmpfs of the test's own, filled.
	mkdir -p "$T/fill"
	mount -t tmpfs -o size=1m tmpfs "$T/fill" && on_exit "umount -l $T/fill"
	head -c 970k /dev/zero >"$T/fill/data"
fi
# A hung server: vtload begins a READ and never ends it.
start_vtload night READ
vtload_say "hold READ"

"$IOLENS" export --listen "127.0.0.1:$port" 2>"$T/export.err" &
exporter=$!
on_exit "kill $exporter 2>/dev/null"
wait_until curl -sf -o /dev/null "127.0.0.1:$port/metrics"
sleep_past() { [ "$(($(date +%s%N) - $1))" -ge "$2" ]; }
t0=$(date +%s%N)
scrape
wait_until sleep_past "$t0" 1500000000
scrape
run "$IOLENS" doctor --no-config --json 0.2
live=$OUT

# The unit test: each series as scraped (the second scrape's values, held for 10 minutes), and
# what must fire at 6 minutes: for each finding of live doctor by rules full and vtrace-hang at
# warning, the alert of the same rule on the series of what it names (its mount, its service's
# op), with the annotations the rule file's templates make of them; no other. Only the series of
# the test's own mount and server: other tests' come and go between the scrape and doctor.
python3 - "$T/scrape.2" "$RULES" "$live" "$T/fill" night >"$T/test.yml" <<'EOF'
import json, re, sys
scrape, rules, live, fill, service = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4], sys.argv[5]
series = {}
for line in open(scrape):
    m = re.match(r'([a-z_]+)\{(.*)\} (\S+)$', line.strip())
    if m and m.group(1).startswith(("iolens_filesystem_", "iolens_vtrace_oldest")):
        labels = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        # Only what this test made: other tests' mounts and servers come and go meanwhile.
        if labels.get("mountpoint", fill) != fill or labels.get("service", service) != service:
            continue
        series[(m.group(1), tuple(sorted(labels.items())))] = float(m.group(3))
def quote(text):
    return "'" + text.replace("'", "''") + "'"
# The rule file's warning alerts: name -> (summary, description), from its lines.
text = open(rules).read()
templates = {}
for block in text.split("      - alert: ")[1:]:
    name = block.split("\n", 1)[0]
    if "severity: warning" in block:
        get = lambda key: re.search(r"\n +%s: '((?:[^']|'')*)'" % key, block).group(1).replace("''", "'")
        templates[name] = (get("summary"), get("description"))
def render(template, labels, value):
    out = re.sub(r"\{\{ \$labels\.([a-z_]+) \}\}", lambda m: labels.get(m.group(1), ""), template)
    return out.replace('{{ $value | printf "%.0f" }}', "%.0f" % value)
def find(name, **want):
    for (n, labels), v in series.items():
        d = dict(labels)
        if n == name and all(d.get(k) == str(x) for k, x in want.items()):
            return d, v
    return None, None
expected = {"IolensDoctorFull": [], "IolensDoctorVtraceHang": []}
for f in live["findings"]:
    if f["severity"] != "warning":
        continue
    d = f["data"]
    if f["rule"] == "full":
        labels, size = find("iolens_filesystem_size_bytes", mountpoint=d["mount"])
        if labels is None:
            continue  # a mount export leaves out (its exclusions)
        free = find("iolens_filesystem_free_bytes", mountpoint=d["mount"])[1]
        avail = find("iolens_filesystem_avail_bytes", mountpoint=d["mount"])[1]
        expected["IolensDoctorFull"].append((dict(labels, severity="warning", rule="full"),
                                             100 * (size - free) / (size - free + avail)))
    elif f["rule"] == "vtrace-hang":
        labels, age = find("iolens_vtrace_oldest_in_flight_seconds", service=d["service"], op=d["op"])
        expected["IolensDoctorVtraceHang"].append((dict(labels, severity="warning", rule="vtrace-hang"), age))
print("rule_files: [%s]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:" % quote(rules))
for (name, labels), v in sorted(series.items()):
    body = ",".join('%s="%s"' % kv for kv in labels)
    print("      - series: %s\n        values: '%r+0x10'" % (quote("%s{%s}" % (name, body)), v))
print("    alert_rule_test:")
for name, alerts in expected.items():
    print("      - eval_time: 6m\n        alertname: %s\n        exp_alerts:%s" % (name, "" if alerts else " []"))
    summary, description = templates[name]
    for labels, value in alerts:
        print("          - exp_labels: {%s}" % ", ".join("%s: %s" % (k, quote(v)) for k, v in sorted(labels.items())))
        print("            exp_annotations: {summary: %s, description: %s}" % (quote(render(summary, labels, value)), quote(description)))
EOF
run promtool test rules "$T/test.yml"
check_eq "promtool test rules on the scraped series: the alerts live doctor's findings call for, and no other" 0 "$RC"
[ "$RC" = 0 ] || echo "$OUT" | head -40 | sed 's/^/# /'
check_match "… live doctor found the hung server (the truth the rules are held to)" '"rule": *"vtrace-hang"' "$live"
if is_root; then
	check_match "… and the full tmpfs" "\"mount\": *\"$T/fill\"" "$live"
fi

echo "1..$t_count"
