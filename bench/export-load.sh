#!/usr/bin/env bash
# Loads `iolens export` with concurrent scrapes on loopback, bounded in count and time, and prints failed scrapes, memory before and after, and the CPU cost of one scrape, side by side with prometheus-node-exporter scraping the same machine.
set -euo pipefail

usage="usage: ${0##*/}
  For iolens export and for prometheus-node-exporter, each on a loopback port: WORKERS threads
  scrape /metrics for SECONDS or until SCRAPES in all, then: scrapes done and failed (any status
  but 200, a short body or a timeout), the exporter's resident memory (VmRSS) before, after a
  first pass and after the load (flat: the growth from the first pass to the end), and its CPU time
  (utime + stime from /proc/PID/stat) per scrape, with the bytes a scrape returns.
  Exit status 1 when a scrape failed or iolens's memory grew by more than 1 MiB.
env: IOLENS (default ./iolens), WORKERS (default 16), SECONDS_MAX (default 20), SCRAPES (default 4000),
  NODE_EXPORTER (default prometheus-node-exporter; NODE=0 skips it)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
[[ $# -eq 0 ]] || { echo "$usage" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
WORKERS=${WORKERS:-16}
SECONDS_MAX=${SECONDS_MAX:-20}
SCRAPES=${SCRAPES:-4000}
NODE_EXPORTER=${NODE_EXPORTER:-prometheus-node-exporter}
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
wait_port() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.05; done; return 1; }

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
"$IOLENS" export --listen "127.0.0.1:$port" 2>/dev/null &
pids+=($!)
wait_port "http://127.0.0.1:$port/metrics" || { echo "iolens export did not start" >&2; exit 1; }
printf '%-16s %7s %6s %6s %7s %8s %8s %8s %10s\n' exporter scrapes failed secs bytes rss0_kib rss1_kib rss2_kib cpu_ms/scrape
measure "iolens export" "http://127.0.0.1:$port/metrics" "${pids[0]}"

if [ "${NODE:-1}" != 0 ] && command -v "$NODE_EXPORTER" >/dev/null; then
	"$NODE_EXPORTER" --web.listen-address="127.0.0.1:$((port + 1))" >/dev/null 2>&1 &
	pids+=($!)
	if wait_port "http://127.0.0.1:$((port + 1))/metrics"; then
		measure "node-exporter" "http://127.0.0.1:$((port + 1))/metrics" "${pids[1]}"
	fi
fi

awk '$1 == "iolens" { io = $7; fail = $4; grow = $6 - $5 } $1 == "node-exporter" { node = $6 }
END {
	if (node > 0) printf "CPU per scrape: iolens %.3f ms, node-exporter %.3f ms: iolens/node = %.2fx\n", io, node, io / node
	printf "iolens: %d failed scrapes; memory from the first pass to the end: %+d KiB\n", fail, grow
	exit !(fail == 0 && grow <= 1024)
}' "$tmp/results"
