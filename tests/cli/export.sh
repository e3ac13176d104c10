#!/usr/bin/env bash
# export.sh: iolens export serves /metrics as Prometheus reads it: promtool accepts it, its numbers are the kernel's, a real Prometheus scrapes it and answers PromQL on the FUSE example's opens, and bad requests get HTTP errors while it keeps serving.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || skip_all "no curl (make deps)"
PROMTOOL=$(command -v promtool || true)
export VTRACE_DIR=$T/vtrace # the exporter looks for segments here, the FUSE example makes one here
mkdir -p "$VTRACE_DIR"
DOCS_DIR=$TOP/docs

# ---- --once: one exposition on stdout -----------------------------------------------------------

# The first disk the default device-exclude keeps (not loop, ram, zram, a floppy or a partition).
kept='$3 !~ /^(z?ram|loop|fd|(h|s|v|xv)d[a-z]|nvme[0-9]+n[0-9]+p)[0-9]+$/'
before=$(awk "$kept"' { print $4; exit }' /proc/diskstats)
dev=$(awk "$kept"' { print $3; exit }' /proc/diskstats)
run "$IOLENS" export --once
check_eq "export --once: exit 0" 0 "$RC"
after=$(awk -v d="$dev" '$3 == d { print $4 }' /proc/diskstats)
got=$(awk -v d="$dev" -F'[ ]' '$1 == "iolens_disk_reads_completed_total{device=\"" d "\"}" { print $2 }' <<<"$OUT")
check "… $dev's reads completed as /proc/diskstats counts them ($before <= $got <= $after)" \
	awk -v a="$before" -v b="$after" -v x="$got" 'BEGIN { exit !(x != "" && x + 0 >= a + 0 && x + 0 <= b + 0) }'
check_match "… counters named _total with HELP and TYPE" "# TYPE iolens_disk_io_time_seconds_total counter" "$OUT"
check_match "… the page cache from /proc/meminfo" "iolens_page_cache_bytes [0-9]+" "$OUT"
check_match "… with the counting mode said" 'iolens_page_cache_misses_total\{mode="(ebpf|procfs)"\} [0-9]+' "$OUT"
check_match "… pressure stall seconds" 'iolens_pressure_some_seconds_total\{resource="io"\}' "$OUT"
# Milliseconds as seconds: the shortest decimal (440.304), not the product's noise (440.30400000000003).
io_ms=$(awk -v d="$dev" '$3 == d { print $13 }' /proc/diskstats)
check_eq "… time in seconds with at most 3 decimals, as /proc/diskstats's ms give ($dev's io_time: $io_ms ms)" "" \
	"$(grep -E '^iolens_disk_[a-z_]+_time_seconds_total\{' <<<"$OUT" | awk '{ split($2, f, "."); if (length(f[2]) > 3) print }' | head -3)"
if [ -n "$PROMTOOL" ]; then
	check_eq "promtool check metrics accepts it" "" "$(promtool check metrics <<<"$OUT" 2>&1)"
else
	skip "promtool is not installed (make deps: prometheus)"
fi
run "$IOLENS" export --once --openmetrics
check_eq "--openmetrics: ends with # EOF" "# EOF" "$(tail -1 <<<"$OUT")"
check_match "… a counter family named without _total" "# TYPE iolens_disk_io_time_seconds counter" "$OUT"
check_match "… its samples with it" 'iolens_disk_io_time_seconds_total\{device=' "$OUT"

for args in "--listen 127.0.0.1" "--listen 127.0.0.1:0" "--listen 127.0.0.1:70000" "--listen host:80" "--openmetrics" "extra"; do
	run "$IOLENS" export $args
	check_eq "export $args: exit 2" 2 "$RC"
done

# ---- The server ----------------------------------------------------------------------------------

port=$((20000 + $$ % 20000))
"$IOLENS" export --listen "127.0.0.1:$port" 2>"$T/export.err" &
EXPORTER=$!
on_exit "kill $EXPORTER 2>/dev/null"
for i in $(seq 50); do curl -s -o /dev/null "127.0.0.1:$port/" && break; sleep 0.1; done
url=http://127.0.0.1:$port/metrics
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

check_eq "GET /metrics: 200" 200 "$(status "$url")"
check_eq "… in the text format" "text/plain; version=0.0.4; charset=utf-8" "$(curl -s -o /dev/null -w '%{content_type}' "$url")"
check_eq "… or OpenMetrics when the scraper asks" "application/openmetrics-text; version=1.0.0; charset=utf-8" \
	"$(curl -s -o /dev/null -w '%{content_type}' -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5' "$url")"
check_eq "… but not when it says q=0" "text/plain; version=0.0.4; charset=utf-8" \
	"$(curl -s -o /dev/null -w '%{content_type}' -H 'Accept: application/openmetrics-text;q=0, text/plain' "$url")"
check_eq "HEAD /metrics: 200" 200 "$(status -I "$url")"
check_eq "GET /nope: 404" 404 "$(status "http://127.0.0.1:$port/nope")"
check_eq "GET /metrics%00: 404, not /metrics cut at the NUL" 404 "$(status "http://127.0.0.1:$port/metrics%00")"
check_eq "GET /%6detrics: /metrics, decoded" 200 "$(status "http://127.0.0.1:$port/%6detrics")"
check_eq "POST /metrics: 405" 405 "$(status -X POST -d a=b "$url")"
check_match "… saying what is allowed" "Allow: GET, HEAD" "$(curl -s -i -X DELETE "$url")"
check_eq "a header of 64 KiB: 431" 431 "$(status -H "X-Big: $(head -c 65536 /dev/zero | tr '\0' a)" "$url")"
reply=$(python3 -c 'import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"THIS IS NOT HTTP\r\n\r\n")
print(s.recv(100).decode(errors="replace").split("\r\n")[0])' "$port" 2>&1)
check_match "a malformed request: 400" "^HTTP/1.1 400" "$reply"
# Many connections at once, some idle, some sending half a request: the exporter goes on serving.
python3 -c 'import socket, sys
held = []
for i in range(300):
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
        if i % 2:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        held.append(s)
    except OSError:
        pass
print(len(held))' "$port" >"$T/held" 2>&1 &
HOLDER=$!
sleep 1
wait "$HOLDER"
check_eq "300 connections at once, then closed: it still serves" 200 "$(status "$url")"
check "… and runs" kill -0 "$EXPORTER"
if [ -n "$PROMTOOL" ]; then
	check_eq "… promtool accepts what it serves" "" "$(curl -s "$url" | promtool check metrics 2>&1)"
fi

# ---- A real Prometheus scrapes it: the rate of FUSE_OPEN while opens run through the FUSE example --

FPT=${BUILD:-$TOP/build}/examples/fuse-passthrough
if ! command -v prometheus >/dev/null; then
	skip "Prometheus: not installed (make deps: prometheus)"
elif ! is_root || [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null || [ ! -x "$FPT" ]; then
	skip "Prometheus and the FUSE example: needs root, /dev/fuse, fusermount3 and $FPT"
else
	mkdir -p "$T/src" "$T/mnt"
	make_file "$T/src/file" 4096
	"$FPT" --service promfs "$T/src" "$T/mnt" 2>"$T/fpt.log" &
	SERVER=$!
	on_exit "fusermount3 -u '$T/mnt' 2>/dev/null; kill $SERVER 2>/dev/null"
	for i in $(seq 100); do mountpoint -q "$T/mnt" && break; sleep 0.05; done
	# The exporter was started before the segment existed: it finds it at the next scrape.
	pport=$((port + 1))
	cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: iolens
    static_configs:
      - targets: ['127.0.0.1:$port']
YML
	prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
		--web.listen-address="127.0.0.1:$pport" >"$T/prometheus.log" 2>&1 &
	PROM=$!
	on_exit "kill $PROM 2>/dev/null; wait $PROM 2>/dev/null"
	# Opens until SIGTERM, then says how many.
	timeout 120 python3 -c 'import os, signal, sys, time
n = 0
def done(*_):
    print(n, flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
while True:
    os.close(os.open(sys.argv[1], os.O_RDONLY)); n += 1
    time.sleep(0.002)' "$T/mnt/file" >"$T/opens" &
	LOOP=$!
	on_exit "kill $LOOP 2>/dev/null"
	query() { curl -s --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1"; }
	value() { python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "none")' 2>/dev/null; }
	rate=none
	for i in $(seq 120); do # Prometheus takes a few seconds to start on a busy machine
		sleep 0.5
		rate=$(query 'rate(iolens_vtrace_requests_total{service="promfs",op="FUSE_OPEN"}[4s])' | value)
		awk -v r="$rate" 'BEGIN { exit !(r != "none" && r + 0 > 10) }' && break
	done
	check_eq "Prometheus scraped it: up{job=\"iolens\"} is 1" 1 "$(query 'up{job="iolens"}' | value)"
	check "PromQL: the rate of FUSE_OPEN while the loop runs ($rate/s)" \
		awk -v r="$rate" 'BEGIN { exit !(r != "none" && r + 0 > 10) }'
	kill "$LOOP"
	wait "$LOOP"
	opens=$(cat "$T/opens")
	# The scrapes after the loop stopped hold its last count.
	for i in $(seq 40); do
		sleep 0.5
		total=$(query 'iolens_vtrace_requests_total{service="promfs",op="FUSE_OPEN"}' | value)
		awk -v t="$total" -v n="$opens" 'BEGIN { exit !(t != "none" && t + 0 >= n) }' && break
	done
	check "… and the counter Prometheus holds is the loop's $opens opens ($total)" \
		awk -v t="$total" -v n="$opens" 'BEGIN { exit !(t != "none" && t + 0 >= n && t + 0 <= n + 5) }'
	buckets=$(query 'count(iolens_vtrace_request_duration_seconds_bucket{service="promfs",op="FUSE_OPEN"})' | value)
	check_eq "… with the latency histogram: 22 bounds and +Inf" 23 "$buckets"
	p99=$(query 'histogram_quantile(0.99, rate(iolens_vtrace_request_duration_seconds_bucket{service="promfs",op="FUSE_OPEN"}[30s]))' | value)
	check "… from which PromQL takes a p99 ($p99 s)" awk -v p="$p99" 'BEGIN { exit !(p != "none" && p + 0 > 0 && p + 0 < 1) }'
	# The Grafana dashboard: every panel's query is PromQL this Prometheus accepts, on metrics it has.
	python3 - "$DOCS_DIR/iolens-grafana.json" "http://127.0.0.1:$pport" >"$T/dashboard.out" 2>&1 <<'PY'
import json, re, sys, urllib.parse, urllib.request
dash, base = json.load(open(sys.argv[1])), sys.argv[2]
def query(q):
    with urllib.request.urlopen(base + "/api/v1/query?" + urllib.parse.urlencode({"query": q}), timeout=10) as r:
        return json.load(r)
bad, names = [], set()
for panel in dash["panels"]:
    for target in panel["targets"]:
        q = (target["expr"].replace("$__rate_interval", "30s").replace('=~"$instance"', '=~".*"')
             .replace('=~"$device"', '=~".*"').replace('=~"$service"', '=~".*"'))
        names.update(re.findall(r"iolens_[a-z_]+", q))
        try:
            if query(q)["status"] != "success":
                bad.append(panel["title"])
        except Exception as e:
            bad.append(panel["title"] + ": " + str(e))
missing = sorted(n for n in names if not query('count({__name__="%s"})' % n)["data"]["result"])
print("panels", len(dash["panels"]), "bad", bad, "missing", missing)
PY
	check_eq "the Grafana dashboard's queries run, on metrics the exporter serves" "panels 11 bad [] missing []" "$(cat "$T/dashboard.out")"
fi

kill "$EXPORTER"
wait "$EXPORTER"
check_eq "SIGTERM: the exporter ends with 0" 0 "$?"
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); open(sys.argv[2], "w").close(); time.sleep(30)' \
	$((port + 2)) "$T/bound" &
TAKER=$!
on_exit "kill $TAKER 2>/dev/null"
for i in $(seq 50); do [ -e "$T/bound" ] && break; sleep 0.1; done
run timeout 10 "$IOLENS" export --listen "127.0.0.1:$((port + 2))"
check_eq "a port already taken: exit 1" 1 "$RC"
check_match "… said" "cannot listen on 127.0.0.1:$((port + 2))" "$ERR"
kill "$TAKER"

echo "1..$t_count"
