#!/usr/bin/env bash
# export.sh: iolens export serves /metrics as Prometheus reads it: promtool accepts it, its numbers are the kernel's, a real Prometheus scrapes it and answers PromQL on the FUSE example's opens, and bad requests get HTTP errors while it keeps serving.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || skip_all "no curl (make test-deps)"
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
	skip "promtool is not installed (make test-deps: prometheus)"
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

port=$(free_port)
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
# raw REQUEST: the status lines of all it gets back, read off the socket until the server closes
# it (or 10 s pass), the request's \r\n written as such.
raw() { python3 -c 'import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
out = b""
try:
    while True:
        data = s.recv(65536)
        if not data:
            break
        out += data
except OSError:
    pass
print(" ".join(l.split(b"HTTP/1.")[1][2:5].decode() for l in out.split(b"\r\n") if b"HTTP/1." in l))' "$port" "$1"; }
# RFC 9112: a Host (one) in HTTP/1.1, one Content-Length and not with Transfer-Encoding, 400
# otherwise and the connection closed; exactly one answer each (libmicrohttpd 0.9.75 sent the head
# of its own 400 and 413 twice).
while IFS='|' read -r want what request; do
	check_eq "$what: $want, once" "$want" "$(raw "$request")"
done <<'CASES'
400|HTTP/1.1 without Host|GET /metrics HTTP/1.1\r\n\r\n
400|two Host lines|GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n
400|a Host with a space in it|GET /metrics HTTP/1.1\r\nHost: a b\r\n\r\n
400|a space before the colon (Host : a)|GET /metrics HTTP/1.1\r\nHost : a\r\n\r\n
200|HTTP/1.0 without Host|GET / HTTP/1.0\r\n\r\n
400|Content-Length 0 and 31 (the body a second request)|GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 31\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\n\r\n
400|Content-Length twice, the same|GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello
400|Content-Length: 5, 10|GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 10\r\n\r\nhelloworld
400|Content-Length: +5|GET / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\nhello
400|Content-Length: -1|GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n
413|Content-Length beyond 2^64|GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n
400|Content-Length and Transfer-Encoding|GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n
501|Transfer-Encoding: gzip|GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\nxx
405|POST with Expect: 100-continue (no 100 first)|POST /metrics HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc
200 404|two requests in one write (pipelined), then Connection: close|GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n
200|a GET whose body is a request: one answer, the body not taken for a request|GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Length: 31\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\n\r\n
CASES
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
wait "$HOLDER"
check_eq "300 connections at once, then closed: it still serves" 200 "$(status "$url")"
check "… and runs" kill -0 "$EXPORTER"
if [ -n "$PROMTOOL" ]; then
	check_eq "… promtool accepts what it serves" "" "$(curl -s "$url" | promtool check metrics 2>&1)"
fi

# gzip when the scraper accepts it (Prometheus does): the same exposition, much smaller.
# (The metrics' names in the two scrapes: the series of devices and mounts that other programs
# add between them may differ, so taken again, up to 5 times, until the names agree.)
names() { awk '{ sub(/[ {].*/, ""); print }' "$@" | sort -u; }
for _ in 1 2 3 4 5; do
	curl -s -D "$T/gz.headers" -H 'Accept-Encoding: gzip' -o "$T/metrics.gz" "$url"
	curl -s -D "$T/plain.headers" -o "$T/metrics.plain" "$url"
	[ "$(names "$T/metrics.plain" | md5sum)" = "$(gzip -dc "$T/metrics.gz" 2>&1 | names | md5sum)" ] && break
done
check_match "Accept-Encoding: gzip: Content-Encoding: gzip" '^Content-Encoding: gzip' "$(tr -d '\r' <"$T/gz.headers")"
check_match "… with Vary: Accept-Encoding" '^Vary: .*Accept-Encoding' "$(tr -d '\r' <"$T/gz.headers")"
check_eq "… the same metrics, gunzipped (their names)" "$(names "$T/metrics.plain" | md5sum)" \
	"$(gzip -dc "$T/metrics.gz" 2>&1 | names | md5sum)"
plain_size=$(stat -c %s "$T/metrics.plain") gz_size=$(stat -c %s "$T/metrics.gz")
check "… in less than a third of the bytes ($gz_size of $plain_size)" test $((gz_size * 3)) -lt "$plain_size"
check_no_match "without it: plain" '^Content-Encoding' "$(cat "$T/plain.headers")"
check_no_match "gzip;q=0: plain" '^Content-Encoding' "$(curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip;q=0, *' "$url")"
run "$IOLENS" export --once
check_eq "--once: plain text still" "# HELP" "$(head -c 6 <<<"$OUT")"

# ---- Where it listens: ":PORT" is every address, IPv4 and IPv6 -----------------------------------

# serve PORT URL ARGS...: an exporter with ARGS, once URL answers; its pid in SERVED.
serve() {
	local wait_url=$1
	shift
	"$IOLENS" export "$@" 2>>"$T/served.err" &
	SERVED=$!
	on_exit "kill $SERVED 2>/dev/null"
	for i in $(seq 100); do curl -sk -o /dev/null "$wait_url" && return 0; sleep 0.05; done
	return 0
}
# ::1 on lo: /proc/net/if_inet6 (as ip -6 addr shows it, with no need of iproute2).
if awk '$1 == "00000000000000000000000000000001" && $6 == "lo" { found = 1 } END { exit !found }' /proc/net/if_inet6 2>/dev/null; then
	lport=$(free_port)
	serve "http://127.0.0.1:$lport/" --listen ":$lport"
	check_eq "--listen :$lport: IPv4 (curl -4 127.0.0.1)" 200 "$(status -4 "http://127.0.0.1:$lport/metrics")"
	check_eq "… and IPv6 (curl -6 [::1])" 200 "$(status -6 "http://[::1]:$lport/metrics")"
	kill "$SERVED"; wait "$SERVED" 2>/dev/null
	serve "http://[::1]:$lport/" --listen "[::1]:$lport"
	check_eq "--listen [::1]:$lport: IPv6" 200 "$(status -6 "http://[::1]:$lport/metrics")"
	check_eq "… and not IPv4" 000 "$(status -4 "http://127.0.0.1:$lport/metrics")"
	kill "$SERVED"; wait "$SERVED" 2>/dev/null
	serve "http://[::1]:$lport/" --listen "[::]:$lport"
	check_eq "--listen [::]:$lport: IPv6" 200 "$(status -6 "http://[::1]:$lport/metrics")"
	check_eq "… and IPv4, as Go's [::]" 200 "$(status -4 "http://127.0.0.1:$lport/metrics")"
	kill "$SERVED"; wait "$SERVED" 2>/dev/null
else
	skip "--listen :PORT on IPv4 and IPv6: no ::1 on lo here"
fi

# ---- --web.config.file: TLS and basic auth, as every Prometheus exporter takes them ---------------

BCRYPT=${BUILD:-$TOP/build}/tests/helpers/bcrypt_hash
wport=$(free_port)
if ! command -v openssl >/dev/null || [ ! -x "$BCRYPT" ]; then
	skip "--web.config.file: needs openssl and $BCRYPT (make test-deps; make check builds it)"
else
	mkdir -p "$T/web"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/web/key.pem" -out "$T/web/cert.pem" -days 2 \
		-subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost" 2>"$T/openssl.err"
	# Relative paths: from the config file's directory, as the toolkit reads them.
	cat >"$T/web/web.yml" <<YML
tls_server_config:
  cert_file: cert.pem
  key_file: key.pem
basic_auth_users:
  alice: $("$BCRYPT" 'open sesame')
YML
	chmod 600 "$T/web/web.yml" # password hashes: another user reading it is warned about (export_auth.sh)
	: >"$T/served.err"
	serve "https://127.0.0.1:$wport/" --listen "127.0.0.1:$wport" --web.config.file "$T/web/web.yml"
	https=https://127.0.0.1:$wport/metrics
	check_eq "TLS and the right user and password: 200" 200 "$(status --cacert "$T/web/cert.pem" -u 'alice:open sesame' "$https")"
	check_match "… the metrics" '^iolens_export_scrapes_total' "$(curl -s --cacert "$T/web/cert.pem" -u 'alice:open sesame' "$https")"
	check_eq "a wrong password: 401" 401 "$(status --cacert "$T/web/cert.pem" -u 'alice:open sesamE' "$https")"
	check_eq "an unknown user: 401" 401 "$(status --cacert "$T/web/cert.pem" -u 'bob:open sesame' "$https")"
	check_eq "no user: 401" 401 "$(status --cacert "$T/web/cert.pem" "$https")"
	check_match "… asking for basic auth" '^WWW-Authenticate: Basic realm="iolens"' \
		"$(curl -s -D - -o /dev/null --cacert "$T/web/cert.pem" "$https" | tr -d '\r')"
	check_eq "plain HTTP to the TLS port: no answer" 000 "$(status "http://127.0.0.1:$wport/metrics")"
	check_eq "TLS 1.1: refused (TLS 1.2 at least, the toolkit's default)" 000 \
		"$(status --cacert "$T/web/cert.pem" --tlsv1.1 --tls-max 1.1 -u 'alice:open sesame' "$https")"
	check_no_match "on 127.0.0.1: no warning" 'warning' "$(cat "$T/served.err")"
	kill "$SERVED"; wait "$SERVED" 2>/dev/null

	bad() { printf "$2" >"$T/web/bad.yml"; run "$IOLENS" export --listen "127.0.0.1:$wport" --web.config.file "$T/web/bad.yml"
		check_eq "a web config with $1: exit 2" 2 "$RC"; check_match "… said, with the file and the key" "$T/web/bad.yml: .*$3" "$ERR"; }
	bad "a misspelt key" 'tls_server_config:\n  cert_fil: cert.pem\n' 'line 2: tls_server_config.cert_fil: unknown key'
	bad "a missing certificate" 'tls_server_config:\n  cert_file: nope.pem\n  key_file: key.pem\n' 'cert_file: .*nope.pem: No such file'
	bad "a password in clear" 'basic_auth_users:\n  alice: secret\n' 'basic_auth_users.alice: not a bcrypt hash'
	bad "client certificates" 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n  client_auth_type: RequireAndVerifyClientCert\n' 'client_auth_type: RequireAndVerifyClientCert is not supported'
	bad "no YAML" 'tls_server_config: [\n' 'not YAML'
	run "$IOLENS" export --web.config.file "$T/web/none.yml"
	check_eq "a web config that is not there: exit 2" 2 "$RC"
	check_match "… said" "none.yml: No such file" "$ERR"
	printf 'tls_server_config:\n  cert_file: key.pem\n  key_file: cert.pem\n' >"$T/web/swapped.yml"
	run "$IOLENS" export --listen "127.0.0.1:$wport" --web.config.file "$T/web/swapped.yml"
	check_eq "a key where the certificate should be: exit 1" 1 "$RC"
	check_match "… said" "cannot listen on 127.0.0.1:$wport with TLS" "$ERR"
	run "$IOLENS" export -v --listen "127.0.0.1:$wport" --web.config.file "$T/web/swapped.yml"
	check_match "… and with -v, what to check" 'key.pem not a PEM certificate' "$ERR"

	# Beyond loopback: a warning without TLS and basic auth, none with both.
	: >"$T/served.err"
	serve "http://127.0.0.1:$wport/" --listen ":$wport"
	check_match "--listen :PORT without a web config: a warning" 'warning: listening beyond loopback.*without TLS and basic auth' "$(cat "$T/served.err")"
	kill "$SERVED"; wait "$SERVED" 2>/dev/null
	printf 'basic_auth_users:\n  alice: %s\n' "$("$BCRYPT" x)" >"$T/web/auth.yml"
	chmod 600 "$T/web/auth.yml"
	: >"$T/served.err"
	serve "http://127.0.0.1:$wport/" --listen "0.0.0.0:$wport" --web.config.file "$T/web/auth.yml"
	check_match "--listen 0.0.0.0 with basic auth only: a warning that it is without TLS" 'warning: listening beyond loopback without TLS \(' "$(cat "$T/served.err")"
	kill "$SERVED"; wait "$SERVED" 2>/dev/null
	: >"$T/served.err"
	serve "https://127.0.0.1:$wport/" --listen ":$wport" --web.config.file "$T/web/web.yml"
	check_eq "--listen :PORT with TLS and basic auth: 200" 200 "$(status --cacert "$T/web/cert.pem" -u 'alice:open sesame' "$https")"
	check_no_match "… and no warning" 'warning' "$(cat "$T/served.err")"
	kill "$SERVED"; wait "$SERVED" 2>/dev/null
fi

# ---- Hostile clients ----------------------------------------------------------------------------
# 500 connections that send nothing and 70 slowloris ones (a header line every 2 s, never the end of
# the request), from the scraper's own address: a scrape is answered while they are held, and the
# server closes them itself (its request deadline), since a slowloris client never stops by itself.
ATTACK=$TOP/tests/helpers/http_attack.py
field() { python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v = v[k]
print(v)' "$@"; }
python3 "$ATTACK" 127.0.0.1 "$port" --idle 500 --slow 70 --seconds 60 --ready "$T/attack.ready" \
	>"$T/attack.json" 2>"$T/attack.err" &
ATTACKER=$!
on_exit "kill $ATTACKER 2>/dev/null"
for i in $(seq 200); do [ -e "$T/attack.ready" ] && break; sleep 0.05; done
code=$(curl -s -o "$T/under-attack" -w '%{http_code}' --max-time 20 "$url")
check_eq "500 idle and 70 slowloris connections held: a scrape is answered (200)" 200 "$code"
check_match "… with the whole exposition" '^iolens_export_scrapes_total [0-9]+$' "$(tail -1 "$T/under-attack" 2>/dev/null)"
wait "$ATTACKER"
check_eq "… the attacker opened all 570" 570 "$(field "$T/attack.json" opened)"
check_eq "… the server closed the 70 slowloris connections itself" 70 "$(field "$T/attack.json" slow.closed_by_server)"
check_eq "… and the 500 idle ones" 500 "$(field "$T/attack.json" idle.closed_by_server)"
check_eq "… and still serves" 200 "$(status "$url")"

# With room for 16 connections, 40 idle ones from one address: the oldest make room for the new
# (and one address may hold half the room), so the newest 8 stay and a scraper gets in.
sport=$(free_port)
"$IOLENS" export --listen "127.0.0.1:$sport" --max-connections 16 2>"$T/export-small.err" &
SMALL=$!
on_exit "kill $SMALL 2>/dev/null"
for i in $(seq 50); do curl -s -o /dev/null "127.0.0.1:$sport/" && break; sleep 0.1; done
python3 "$ATTACK" 127.0.0.1 $sport --idle 40 --until-closed 32 --seconds 30 --ready "$T/small.ready" \
	>"$T/small.json" 2>"$T/small.err" &
ATTACKER=$!
for i in $(seq 200); do [ -e "$T/small.ready" ] && break; sleep 0.05; done
check_eq "--max-connections 16 and 40 idle connections: a scrape is answered" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 "http://127.0.0.1:$sport/metrics")"
wait "$ATTACKER"
check_eq "… the 32 oldest were closed to make room, the newest 8 kept" "$(seq -s ', ' 0 31)" \
	"$(field "$T/small.json" closed | tr -d '[]')"
check_eq "--max-connections 1: exit 2" 2 "$(timeout 10 "$IOLENS" export --max-connections 1 >/dev/null 2>&1; echo $?)"
kill "$SMALL"

# ---- A real Prometheus scrapes it: the rate of FUSE_OPEN while opens run through the FUSE example --

FPT=${BUILD:-$TOP/build}/examples/fuse-passthrough
if ! command -v prometheus >/dev/null; then
	skip "Prometheus: not installed (make test-deps: prometheus)"
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
	pport=$(free_port)
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
	# Its disk latency panel needs a request on a disk the exporter shows: written through to the
	# disk under $T, unless none is there (tmpfs) or eBPF is not at hand.
	dd if=/dev/zero of="$T/direct.bin" bs=4k count=16 oflag=direct conv=fsync 2>/dev/null
	disk_latency() { curl -s "$url" | grep -q '^iolens_disk_request_duration_seconds_count'; }
	if [ -z "$(ebpf_expected)" ] && wait_until 30 disk_latency; then
		for i in $(seq 120); do
			[ -n "$(query 'count(iolens_disk_request_duration_seconds_count)' | grep -v none)" ] && break
			sleep 0.5
		done
		no_latency=
	else
		no_latency="iolens_disk_request_duration_seconds_bucket iolens_disk_queue_duration_seconds_bucket"
		echo "# no disk latency histograms here (eBPF: $(ebpf_expected); under $T: $(fs_type "$T")): the panel's metrics may be missing"
	fi
	python3 - "$DOCS_DIR/iolens-grafana.json" "http://127.0.0.1:$pport" "$no_latency" >"$T/dashboard.out" 2>&1 <<'PY'
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
missing = sorted(n for n in names if not query('count({__name__="%s"})' % n)["data"]["result"]
                 and n not in sys.argv[3].split())
print("panels", len(dash["panels"]), "bad", bad, "missing", missing)
PY
	check_eq "the Grafana dashboard's queries run, on metrics the exporter serves" "panels 13 bad [] missing []" "$(cat "$T/dashboard.out")"
fi

kill "$EXPORTER"
wait "$EXPORTER"
check_eq "SIGTERM: the exporter ends with 0" 0 "$?"
bport=$(free_port)
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); open(sys.argv[2], "w").close(); time.sleep(30)' \
	$bport "$T/bound" &
TAKER=$!
on_exit "kill $TAKER 2>/dev/null"
for i in $(seq 50); do [ -e "$T/bound" ] && break; sleep 0.1; done
run timeout 10 "$IOLENS" export --listen "127.0.0.1:$bport"
check_eq "a port already taken: exit 1" 1 "$RC"
check_match "… said" "cannot listen on 127.0.0.1:$bport" "$ERR"
kill "$TAKER"

echo "1..$t_count"
