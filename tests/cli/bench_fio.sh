#!/usr/bin/env bash
# bench_fio.sh: iolens bench and fio run the same jobs on the same small file and agree on what was done (bench/fio-compare.sh compares speed).
. "$(dirname "$0")/lib.sh"

command -v fio >/dev/null || skip_all "fio is not installed (make test-deps)"
case "$(fs_type "$T")" in
tmpfs|ramfs) skip_all "the scratch directory is on $(fs_type "$T"): no O_DIRECT" ;;
esac

f=$T/data
size=$((8 << 20))
fio --name=layout --filename="$f" --size=$size --rw=write --bs=1m --direct=1 --output=/dev/null
check_eq "fio lays out an 8 MiB file" "$size" "$(stat -c %s "$f")"

# fio's count of I/O and bytes for one direction, from its JSON.
fio_counts() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0][sys.argv[2]]
print(j["total_ios"], j["io_bytes"])' "$1" "$2"
}
bench_counts() {
	python3 -c 'import json, sys
p = json.load(sys.stdin)["points"][0][sys.argv[1]]
print(p["ios"], p["bytes"])' "$1"
}
bench_latency_ok() {
	python3 -c 'import json, sys
l = json.load(sys.stdin)["points"][0]["lat_ns"]
print("ok" if l["min"] <= l["p50"] <= l["p99"] <= l["max"] else l)'
}

# The four jobs of the issue, size-bound so both tools do exactly the file's worth.
while read -r name rw bs qd engine dir; do
	fio --name=j --filename="$f" --size=$size --rw="$rw" --bs="$bs" --iodepth="$qd" --ioengine="$engine" \
		--direct=1 --output-format=json --output="$T/fio.json" >/dev/null 2>"$T/fio.err"
	check_eq "fio $name: runs" 0 "$?"
	run "$IOLENS" bench --rw "$rw" --bs "$bs" --qd "$qd" --engine "$engine" --size $size --force --json "$f"
	check_eq "iolens bench $name: exit 0" 0 "$RC"
	check_eq "… the same I/O count and bytes as fio's" "$(fio_counts "$T/fio.json" "$dir")" "$(bench_counts "$dir" <<<"$OUT")"
	check_eq "… its latencies in order" ok "$(bench_latency_ok <<<"$OUT")"
done <<'EOF'
seq-read-1M-qd1 read 1m 1 psync read
seq-write-1M-qd1 write 1m 1 psync write
rand-read-4k-qd1-psync randread 4k 1 psync read
rand-read-4k-qd32-io_uring randread 4k 32 io_uring read
EOF
check_eq "the file is kept: bench did not make it" "$size" "$(stat -c %s "$f")"

# Random I/O touches every block once, as fio's random map does: a buffered random read of
# the whole file, from cold, leaves all of it cached (read-ahead off for random I/O in both).
if can_evict; then
	pages=$((size / 4096))
	"$IOLENS" evict "$f" >/dev/null
	fio --name=j --filename="$f" --size=$size --rw=randread --bs=4k --direct=0 --output=/dev/null
	check_eq "fio --rw=randread --direct=0 from cold: every page cached after" "$pages" "$(fincore_cached "$f")"
	"$IOLENS" evict "$f" >/dev/null
	run "$IOLENS" bench --rw randread --buffered --bs 4k --jobs 3 --json "$f"
	check_eq "iolens bench --rw randread --buffered --jobs 3: the same" "$pages" "$(fincore_cached "$f")"
	check_eq "… each page read once: all misses (hit ratio 0)" "0" \
		"$(python3 -c 'import json, sys; print(json.load(sys.stdin)["points"][0]["hit_ratio"])' <<<"$OUT")"
	"$IOLENS" evict "$f" >/dev/null
	run "$IOLENS" bench --rw randread --buffered --bs 16k --qd 8 "$f"
	check_eq "… and with io_uring, 16k at queue depth 8" "$pages" "$(fincore_cached "$f")"
else
	skip "pages cannot be evicted on $(fs_type "$T")"
fi

echo "1..$t_count"
