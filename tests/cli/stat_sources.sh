#!/usr/bin/env bash
# stat_sources.sh: iolens stat's own sources, live: --vtrace against vtload, --cache against a file read and evicted.
. "$(dirname "$0")/lib.sh"

py() { python3 -c "$@"; }
# series KEY FIELD < JSON lines: FIELD of group KEY in each line after the first (the since-start one), space-separated.
series() { py 'import json,sys
v=[json.loads(l)[sys.argv[1]][sys.argv[2]] for l in sys.stdin][1:]
print(" ".join("-" if x is None else str(x) for x in v))' "$1" "$2"; }

# ---- --vtrace: a libvtrace server ------------------------------------------------------------
VTLOAD=${BUILD:-$TOP/build}/tests/helpers/vtload
if [ -x "$VTLOAD" ]; then
	export VTRACE_DIR=$T/shm
	mkdir -p "$VTRACE_DIR"
	mkfifo "$T/load.in" "$T/load.out"
	"$VTLOAD" busy WORK=1 WAIT=2 < "$T/load.in" > "$T/load.out" &
	load_pid=$!
	on_exit "kill $load_pid 2>/dev/null"
	exec {load_in}>"$T/load.in" {load_out}<"$T/load.out"
	read -r -u "$load_out" ready path
	say() { echo "$1" >&"$load_in"; read -r -u "$load_out" answer; }

	# 3000 requests of 1 ms each, one after another, all of them inside stat's window (it samples
	# before the first and after the last): its op/s over the intervals add up to the 3000 caused,
	# none above the 1000/s that 1 ms requests allow, and the server 100 % busy meanwhile.
	"$IOLENS" stat --vtrace --json --no-boot-sample 0.5 > "$T/busy.json" 2>"$T/busy.err" &
	stat_pid=$!
	wait_until lines_at_least "$T/busy.json" 1
	say "run WORK 3000 1000000"
	n=$(lines_of "$T/busy.json")
	wait_until lines_at_least "$T/busy.json" $((n + 2))
	kill -INT $stat_pid
	wait $stat_pid
	check_eq "--vtrace: exit 0" 0 "$?"
	check_eq "--vtrace: nothing on stderr" "" "$(cat "$T/busy.err")"
	read -r total peak busy_util <<<"$(py 'import json, sys
rows = [json.loads(l) for l in sys.stdin]
v = [(r.get("vtrace_busy") or {}, r["interval_ns"] / 1e9) for r in rows]
total = sum((g.get("ops_per_s") or 0) * dt for g, dt in v)
ran = [i for i, (g, dt) in enumerate(v) if g.get("ops_per_s")]
busy = [v[i][0]["util_pct"] for i in ran[1:-1]]  # the first and last may straddle the ends of the run
print(round(total), max((g.get("ops_per_s") or 0) for g, dt in v), min(busy) if busy else "none")' <"$T/busy.json")"
	check "--vtrace: op/s x interval over the run adds up to the 3000 requests ($total)" \
		py 'import sys; sys.exit(not abs(float(sys.argv[1]) - 3000) <= 30)' "$total"
	check "--vtrace: never above the 1000 op/s of 1 ms requests back to back ($peak)" \
		py 'import sys; sys.exit(not 0 < float(sys.argv[1]) <= 1050)' "$peak"
	check "--vtrace: %util about 100 in the intervals wholly inside the run ($busy_util)" \
		py 'import sys; sys.exit(not float(sys.argv[1]) >= 90)' "$busy_util"

	# A request held in flight: the server is busy and, after a second, hung.
	say "hold WAIT"
	run "$IOLENS" stat --vtrace --json --no-boot-sample 0.6 3
	check_eq "--vtrace: a held request, no completions" "0 0" "$(series vtrace_busy ops_per_s <<<"$OUT")"
	check_eq "--vtrace: hung after a second in flight" "1" "$(series vtrace_busy hang <<<"$OUT" | awk '{ print $NF }')"
	check "--vtrace: 100 % busy while it is held" \
		py 'import sys; sys.exit(not float(sys.argv[1].split()[-1]) >= 99)' "$(series vtrace_busy util_pct <<<"$OUT")"
	run "$IOLENS" stat --vtrace 0.2 2
	check_match "--vtrace: the dstat-style group is named after the service" "vt/busy" "$(head -1 <<<"$OUT")"
	check_match "--vtrace: its columns" "op/s +util +hang" "$(sed -n 2p <<<"$OUT")"
	say release
	echo quit >&"$load_in"
	wait $load_pid
	run "$IOLENS" stat --vtrace 0.1 1
	check_no_match "--vtrace: a server that has gone is not shown" "vt/busy" "$OUT"
	check_match "--vtrace with no server: said" "no libvtrace server is running" "$ERR"

	# Two servers with one name: a group each, told apart by pid, each with its own figures.
	mkfifo "$T/a.in" "$T/a.out" "$T/b.in" "$T/b.out"
	"$VTLOAD" twin OP=1 < "$T/a.in" > "$T/a.out" & a_pid=$!
	"$VTLOAD" twin OP=1 < "$T/b.in" > "$T/b.out" & b_pid=$!
	on_exit "kill $a_pid $b_pid 2>/dev/null"
	exec {a_in}>"$T/a.in" {a_out}<"$T/a.out" {b_in}>"$T/b.in" {b_out}<"$T/b.out"
	read -r -u "$a_out" ready; read -r -u "$b_out" ready
	echo "hold OP" >&"$b_in"; read -r -u "$b_out" answer
	sleep 1.2
	run "$IOLENS" stat --vtrace --json 0.1 1
	check_eq "two servers named twin: one group each, by pid, each with its own figures" "0 1 2" \
		"$(py 'import json,sys; d=json.loads(sys.argv[1]); print(d["vtrace_twin_" + sys.argv[2]]["hang"], d["vtrace_twin_" + sys.argv[3]]["hang"], sum(k.startswith("vtrace_") for k in d))' "$OUT" $a_pid $b_pid)"
	echo quit >&"$a_in"; echo release >&"$b_in"; read -r -u "$b_out" answer; echo quit >&"$b_in"
	wait $a_pid $b_pid
	unset VTRACE_DIR
else
	skip "--vtrace: vtload is not built (make check builds it)"
fi

# ---- --cache: pages added and removed, from the filemap tracepoints (root, eBPF) --------------
why=$(ebpf_expected)
[ -z "$why" ] && ! can_evict && why="the scratch directory is on $(fs_type "$T"), whose pages cannot be evicted"
if [ -z "$why" ]; then
	pages=16384  # 64 MiB of 4 KiB pages
	head -c $((pages * 4096)) /dev/urandom > "$T/data"
	sync "$T/data"
	"$IOLENS" evict "$T/data" > /dev/null
	"$IOLENS" stat --cache --json 0.5 > "$T/cache.json" 2>"$T/cache.err" &
	stat_pid=$!
	lines_at_least() { local i; for i in $(seq 600); do [ "$(wc -l < "$T/cache.json")" -ge "$1" ] && return 0; sleep 0.1; done; return 1; }
	lines_at_least 1   # counting from here: the programs are attached
	cat "$T/data" > /dev/null
	"$IOLENS" evict "$T/data" > /dev/null
	lines_at_least $(( $(wc -l < "$T/cache.json") + 2 ))
	kill -INT $stat_pid
	wait $stat_pid
	check_eq "--cache: exit 0 after Ctrl-C" 0 "$?"
	check_eq "--cache: nothing on stderr (eBPF counts: root, BTF)" "" "$(cat "$T/cache.err")"
	# Sum rate x interval over the samples after the first: pages, whatever else the machine did.
	sums=$(py 'import json,sys
ls=[json.loads(l) for l in sys.stdin][1:]
a=sum(l["cache"]["added_pages_per_s"]*l["interval_ns"]/1e9 for l in ls)
r=sum(l["cache"]["removed_pages_per_s"]*l["interval_ns"]/1e9 for l in ls)
print(round(a), round(r))' < "$T/cache.json")
	read -r added removed <<<"$sums"
	check "--cache: reading a cold $pages-page file adds at least as many pages ($added)" test "$added" -ge $pages
	check "--cache: evicting it removes at least as many ($removed)" test "$removed" -ge $pages
else
	skip "--cache: $why"
fi

echo "1..$t_count"
