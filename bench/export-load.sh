#!/usr/bin/env bash
# Loads `iolens export` with concurrent scrapes on loopback, bounded in count and time, and prints failed scrapes, memory before and after, and the CPU cost of one scrape, side by side with prometheus-node-exporter scraping the same machine; then the latency of a scrape while hostile clients (idle and slowloris connections) hold connections to each.
set -euo pipefail

usage="usage: ${0##*/}
  For iolens export and for prometheus-node-exporter, each on a loopback port: WORKERS threads
  scrape /metrics for SECONDS or until SCRAPES in all, then: scrapes done and failed (any status
  but 200, a short body or a timeout), the exporter's resident memory (VmRSS) before, after a
  first pass and after the load (flat: the growth from the first pass to the end), and its CPU time
  (utime + stime from /proc/PID/stat) per scrape, with the bytes a scrape returns.
  Then, for each, while IDLE connections that send nothing and SLOW slowloris ones (a header
  line every 2 s, never the end of the request; reopened when the server closes them) are held
  from the scraper's own address for ATTACK_SECONDS: one scrape every half second (curl,
  --max-time 20), with how many were answered, their median and worst time.
  Exit status 1 when a scrape failed, iolens's memory grew by more than 1 MiB, or a scrape of
  iolens under attack was not answered.
env: IOLENS (default ./iolens), WORKERS (default 16), SECONDS_MAX (default 20), SCRAPES (default 4000),
  NODE_EXPORTER (default prometheus-node-exporter; NODE=0 skips it), IDLE (default 500),
  SLOW (default 70), ATTACK_SECONDS (default 20; 0 skips the attack)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
[[ $# -eq 0 ]] || { echo "$usage" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
WORKERS=${WORKERS:-16}
SECONDS_MAX=${SECONDS_MAX:-20}
SCRAPES=${SCRAPES:-4000}
NODE_EXPORTER=${NODE_EXPORTER:-prometheus-node-exporter}
IDLE=${IDLE:-500}
SLOW=${SLOW:-70}
ATTACK_SECONDS=${ATTACK_SECONDS:-20}
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT

cat >"$tmp/load.py" <<'PY'
import sys, threading, time, urllib.request
url, workers, seconds, total = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
lock = threading.Lock()
done = failed = 0
sizes = []
end = time.monotonic() + seconds
def worker():
    global done, failed
    while time.monotonic() < end:
        with lock:
            if done + failed >= total:
                return
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                body = r.read()
                ok = r.status == 200 and len(body) > 100
        except Exception:
            ok, body = False, b""
        with lock:
            if ok:
                done += 1
                sizes.append(len(body))
            else:
                failed += 1
threads = [threading.Thread(target=worker) for _ in range(workers)]
start = time.monotonic()
[t.start() for t in threads]
[t.join() for t in threads]
print(done, failed, round(time.monotonic() - start, 2), sum(sizes) // max(len(sizes), 1))
PY

rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
wait_port() { for _ in $(seq 200); do curl -s -o /dev/null "$1" && return 0; sleep 0.05; done; return 1; }

# measure NAME URL PID: one warm-up pass of 200 scrapes, then the load.
measure() {
	local name=$1 url=$2 pid=$3 rss0 rss1 rss2 t0 t1 result done failed secs bytes hz
	hz=$(getconf CLK_TCK)
	rss0=$(rss_kib "$pid")
	python3 "$tmp/load.py" "$url" 4 30 200 >/dev/null
	rss1=$(rss_kib "$pid")
	t0=$(cpu_ticks "$pid")
	result=$(python3 "$tmp/load.py" "$url" "$WORKERS" "$SECONDS_MAX" "$SCRAPES")
	t1=$(cpu_ticks "$pid")
	rss2=$(rss_kib "$pid")
	read -r done failed secs bytes <<<"$result"
	printf '%-16s %7s %6s %6s %7s %8s %8s %8s %10s\n' "$name" "$done" "$failed" "$secs" "$bytes" "$rss0" "$rss1" "$rss2" \
		"$(awk -v t=$((t1 - t0)) -v n="$done" -v hz="$hz" 'BEGIN { printf "%.3f", n ? 1000 * t / hz / n : 0 }')"
	echo "$name $done $failed $rss1 $rss2 $(awk -v t=$((t1 - t0)) -v n="$done" -v hz="$hz" 'BEGIN { printf "%.4f", n ? 1000 * t / hz / n : 0 }')" >>"$tmp/results"
}

port=$((30000 + $$ % 20000))
node_started=
: >"$tmp/attacked"
"$IOLENS" export --listen "127.0.0.1:$port" 2>"$tmp/iolens.err" &
pids+=($!)
wait_port "http://127.0.0.1:$port/metrics" || { echo "iolens export did not start: $(cat "$tmp/iolens.err")" >&2; exit 1; }
printf '%-16s %7s %6s %6s %7s %8s %8s %8s %10s\n' exporter scrapes failed secs bytes rss0_kib rss1_kib rss2_kib cpu_ms/scrape
measure "iolens export" "http://127.0.0.1:$port/metrics" "${pids[0]}"

if [ "${NODE:-1}" != 0 ] && command -v "$NODE_EXPORTER" >/dev/null; then
	"$NODE_EXPORTER" --web.listen-address="127.0.0.1:$((port + 1))" >/dev/null 2>&1 &
	pids+=($!)
	if wait_port "http://127.0.0.1:$((port + 1))/metrics"; then
		node_started=yes
		measure "node-exporter" "http://127.0.0.1:$((port + 1))/metrics" "${pids[1]}"
	fi
fi

# attacked NAME HOST PORT: scrapes, one every half second, while the attack holds its connections.
attacked() {
	local name=$1 host=$2 port=$3 attacker times
	python3 "$repo/tests/helpers/http_attack.py" "$host" "$port" --idle "$IDLE" --slow "$SLOW" --reconnect \
		--seconds "$ATTACK_SECONDS" --ready "$tmp/ready.$port" >"$tmp/attack.$port" 2>/dev/null &
	attacker=$!
	pids+=("$attacker")
	for _ in $(seq 200); do [ -e "$tmp/ready.$port" ] && break; sleep 0.05; done
	: >"$tmp/times.$port"
	while kill -0 "$attacker" 2>/dev/null; do
		curl -s -o /dev/null -w '%{http_code} %{time_total}\n' --max-time 20 "http://$host:$port/metrics" >>"$tmp/times.$port" || true
		sleep 0.5
	done
	wait "$attacker" || true
	local held reopened asked answered median worst
	read -r held reopened < <(python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); print(r["opened"], r["reconnects"])' "$tmp/attack.$port" 2>/dev/null || echo "0 0")
	asked=$(wc -l <"$tmp/times.$port")
	awk '$1 == 200 { print $2 }' "$tmp/times.$port" | sort -g >"$tmp/ok.$port"
	answered=$(wc -l <"$tmp/ok.$port")
	median=$(awk -v n="$answered" 'NR == int((n + 1) / 2) { print; exit }' "$tmp/ok.$port")
	worst=$(tail -1 "$tmp/ok.$port")
	printf '%-16s %6s %8s %9s %10s %9s\n' "$name" "$held" "$reopened" "$answered/$asked" "${median:--}" "${worst:--}"
	echo "${name// /-} $answered $asked ${median:-0}" >>"$tmp/attacked"
}

if [ "$ATTACK_SECONDS" != 0 ]; then
	echo
	echo "under attack: $IDLE idle + $SLOW slowloris connections from the scraper's address, $ATTACK_SECONDS s"
	printf '%-16s %6s %8s %9s %10s %9s\n' exporter held reopened answered median_s worst_s
	attacked "iolens export" 127.0.0.1 "$port"
	[ -z "$node_started" ] || attacked "node-exporter" 127.0.0.1 "$((port + 1))"
fi

awk 'FILENAME ~ /results$/ && $1 == "iolens" { io = $7; fail = $4; grow = $6 - $5 }
FILENAME ~ /results$/ && $1 == "node-exporter" { node = $6 }
FILENAME ~ /attacked$/ && $1 == "iolens-export" { att = 1; att_ok = $2; att_n = $3; att_med = $4 }
FILENAME ~ /attacked$/ && $1 == "node-exporter" { natt = 1; natt_ok = $2; natt_n = $3; natt_med = $4 }
END {
	if (node > 0) printf "CPU per scrape: iolens %.3f ms, node-exporter %.3f ms: iolens/node = %.2fx\n", io, node, io / node
	printf "iolens: %d failed scrapes; memory from the first pass to the end: %+d KiB\n", fail, grow
	if (att) printf "under attack: iolens answered %d of %d scrapes, median %.3f s", att_ok, att_n, att_med
	if (att && natt) printf "; node-exporter %d of %d, median %.3f s: iolens/node = %.2fx", natt_ok, natt_n, natt_med, (natt_med > 0 ? att_med / natt_med : 0)
	if (att) printf "\n"
	exit !(fail == 0 && grow <= 1024 && (!att || att_ok == att_n))
}' "$tmp/results" "$tmp/attacked"
