#!/usr/bin/env bash
# cache_mechanism.sh: how the page-cache commands see reads and page faults (tracepoints, fentry or kprobes), held to what the kernel has (its BTF, its kprobe event source): chosen alone, said in every output, forced by IOLENS_CACHE_MECHANISM (procfs: no eBPF) and refused with the reason when the kernel cannot.
. "$(dirname "$0")/lib.sh"

need_ebpf
command -v bpftool >/dev/null || skip_all "bpftool is not installed (make test-deps): the kernel's BTF is the truth here"

# The truth: the tracepoints the read and fault paths have in this kernel's BTF (Linux 6.9 and later).
bpftool btf dump file /sys/kernel/btf/vmlinux >"$T/btf" || skip_all "bpftool cannot read /sys/kernel/btf/vmlinux"
tracepoints=$(grep -cE "^\[[0-9]+\] TYPEDEF 'btf_trace_mm_filemap_(get_pages|fault|map_pages)'" "$T/btf")
has_kprobes=no
[ -e /sys/bus/event_source/devices/kprobe/type ] && has_kprobes=yes
# Before 6.2 threads count their mapped pages apart (struct task_rss_stat): kprobes end each
# fault's window in a kretprobe, of which the kernel keeps a few at once, and say so.
split_counts=$(grep -cE "^\[[0-9]+\] STRUCT 'task_rss_stat'" "$T/btf")
echo "# $(uname -r): $tracepoints of the 3 filemap read and fault tracepoints, kprobe event source: $has_kprobes"

# mode_of: "MODE MECHANISM" of each JSON line read, one per line.
mode_of() { python3 -c 'import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print(d["mode"], d["mechanism"])'; }

run "$IOLENS" cachestat --json 0.2 2
auto=$(mode_of <<<"$OUT" | sort -u)
if [ "$tracepoints" = 3 ]; then
	check_eq "the kernel has the tracepoints: cachestat counts with them, in every line" "ebpf tracepoints" "$auto"
else
	check_match "the kernel lacks a tracepoint: cachestat counts with fentry or kprobes, in every line" \
		'^ebpf (fentry|kprobes)$' "$auto"
fi
mechanism=${auto#ebpf }
check_eq "… and says nothing on stderr where it counts as exactly" "" "$ERR"

run "$IOLENS" cachestat --csv 0.2 1
check_match "cachestat --csv: mechanism after mode" "^time_ns,interval_ns,mode,mechanism,.*"$'\n'"[0-9]+,[0-9]+,ebpf,$mechanism," "$OUT"
run "$IOLENS" cachetop --json 0.2 2
check_eq "cachetop says the same mechanism" "ebpf $mechanism" "$(mode_of <<<"$OUT" | sort -u)"
run "$IOLENS" cachetop --files --json 0.2 1
check_eq "… --files too" "ebpf $mechanism" "$(mode_of <<<"$OUT" | sort -u)"
run "$IOLENS" export --once --collector.disable-defaults --collector.pagecache
check_match "export: iolens_page_cache_mechanism_info names it" \
	"^iolens_page_cache_mechanism_info\{mechanism=\"$mechanism\"\} 1$" "$OUT"
run "$IOLENS" doctor --record "$T/snapshot" 1
check_match "doctor records it with the page cache's counts" "^cache_mechanism $mechanism$" "$(cat "$T/snapshot")"

# Each mechanism forced: it counts, or cachestat estimates from /proc and says once why not.
for wanted in tracepoints fentry kprobes; do
	run env IOLENS_CACHE_MECHANISM=$wanted "$IOLENS" cachestat --json 0.2 3
	got=$(mode_of <<<"$OUT" | sort -u)
	echo "# IOLENS_CACHE_MECHANISM=$wanted: $got${ERR:+ ($ERR)}"
	check_eq "IOLENS_CACHE_MECHANISM=$wanted: exit 0 either way" 0 "$RC"
	if [ "$got" = "ebpf $wanted" ] && [ "$wanted" = kprobes ] && [ "$split_counts" != 0 ]; then
		ok "… counts with $wanted"
		check_match "… saying once what it misses where threads count mapped pages apart (task_rss_stat)" \
			"^iolens cachestat: counting with kprobes: pages mapped by faults are missed when many faults wait at once$" "$ERR"
		check_eq "… in one line" 1 "$(grep -c . <<<"$ERR")"
	elif [ "$got" = "ebpf $wanted" ]; then
		ok "… counts with $wanted"
		check_eq "… silently where it counts as exactly" "" "$ERR"
	else
		check_eq "… refused: estimates, no mechanism" "procfs None" "$got"
		check_eq "… said once" 1 "$(grep -c "IOLENS_CACHE_MECHANISM=$wanted: " <<<"$ERR")"
	fi
	case $wanted in
	tracepoints)
		check_eq "… counts if and only if the kernel's BTF has the three tracepoints ($tracepoints)" \
			"$([ "$tracepoints" = 3 ] && echo yes || echo no)" "$([ "$got" = "ebpf tracepoints" ] && echo yes || echo no)"
		[ "$got" = "ebpf tracepoints" ] ||
			check_match "… naming the one missing" "no tracepoint mm_filemap_(get_pages|fault|map_pages)" "$ERR" ;;
	kprobes)
		[ "$has_kprobes" = no ] &&
			check_match "… this kernel has no kprobe event source: said so" "this kernel has no kprobes" "$ERR" ;;
	esac
done

run env IOLENS_CACHE_MECHANISM=fast "$IOLENS" cachestat --json 0.2 1
check_eq "IOLENS_CACHE_MECHANISM=fast: exit 0, estimates" "0 procfs None" "$RC $(mode_of <<<"$OUT")"
check_match "… saying what it takes" "IOLENS_CACHE_MECHANISM=fast: not auto, tracepoints, fentry, kprobes or procfs" "$ERR"
run env IOLENS_CACHE_MECHANISM=procfs "$IOLENS" cachestat --json 0.2 1
check_eq "IOLENS_CACHE_MECHANISM=procfs: exit 0, estimates without loading eBPF" "0 procfs None" "$RC $(mode_of <<<"$OUT")"
check_eq "… said once" "iolens cachestat: no eBPF (IOLENS_CACHE_MECHANISM=procfs): estimating from /proc/vmstat" \
	"$(grep -o '^.*IOLENS_CACHE_MECHANISM=procfs): estimating from /proc/vmstat' <<<"$ERR")"
run env IOLENS_CACHE_MECHANISM=auto "$IOLENS" cachestat --json 0.2 1
check_eq "IOLENS_CACHE_MECHANISM=auto: as unset" "ebpf $mechanism" "$(mode_of <<<"$OUT")"

echo "1..$t_count"
