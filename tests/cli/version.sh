#!/usr/bin/env bash
# version.sh: iolens version --features says, for the page cache, block I/O and O_DIRECT opens, the
# mechanism this kernel lets the commands use, held to the kernel's BTF (the btf_trace_ typedefs
# of its tracepoints), its kprobe event source, and what the commands themselves then use.
. "$(dirname "$0")/lib.sh"

btf=/sys/kernel/btf/vmlinux
has_tracepoint() { [ -r "$btf" ] && grep -aqP "\x00btf_trace_$1\x00" "$btf"; }
# vq JSON KEY...: a value of version --features --json: "feature.key" or "feature.mechanisms.name.key".
vq() {
	python3 -c 'import json, sys
d = json.load(sys.stdin)
f = {x["feature"]: x for x in d["features"]}
path = sys.argv[1].split(".")
try:
    o = f[path[0]]
    if len(path) == 4 or (len(path) == 3 and path[1] == "mechanisms"):
        o = {m["mechanism"]: m for m in o["mechanisms"]}[path[2]]
        o = o[path[3]] if len(path) == 4 else o
    else:
        o = o[path[1]]
    print("null" if o is None else str(o).lower() if isinstance(o, bool) else o)
except (KeyError, IndexError):
    print("absent")' "$1"
}

run "$IOLENS" version
check_match "version: the version" "^iolens [0-9]+\.[0-9]+" "$OUT"
check_eq "… as --version says it" "$("$IOLENS" --version)" "$OUT"
run "$IOLENS" version extra
check_eq "an argument: a usage error (exit 2)" 2 "$RC"
run "$IOLENS" version --bogus
check_eq "an unknown option: exit 2" 2 "$RC"
check "--help fits a screen (24 lines)" test "$("$IOLENS" version --help | wc -l)" -le 24

why=$(ebpf_expected) || { skip "eBPF: $why"; echo "1..$t_count"; exit 0; }

run "$IOLENS" version --features --json
V=$OUT
check_eq "--features --json: exit 0, nothing said" "0 " "$RC $ERR"
check_eq "… the kernel's release" "$(uname -r)" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["kernel"])' <<<"$V")"
check_eq "… probed, as root" true "$(python3 -c 'import json,sys; print(str(json.load(sys.stdin)["probed"]).lower())' <<<"$V")"

# The page cache: the filemap tracepoints (6.9) where the BTF has them; auto takes the first that can.
for tp in mm_filemap_get_pages mm_filemap_fault mm_filemap_map_pages; do has_tracepoint $tp || missing_tp=${missing_tp:-$tp}; done
if [ -z "${missing_tp:-}" ]; then
	check_eq "page cache: tracepoints can, as the BTF has mm_filemap_get_pages, _fault and _map_pages" \
		can "$(vq page_cache.mechanisms.tracepoints.verdict <<<"$V")"
else
	check_match "page cache: tracepoints cannot, naming the one the BTF lacks ($missing_tp)" \
		"$missing_tp" "$(vq page_cache.mechanisms.tracepoints.verdict <<<"$V") $(vq page_cache.mechanisms.tracepoints.why_not <<<"$V")"
fi
if [ -d /sys/bus/event_source/devices/kprobe ]; then
	check_match "kprobes: not refused for want of kprobes (the kernel has the kprobe event source)" "^(can|cannot: [^n])" \
		"$(vq page_cache.mechanisms.kprobes.verdict <<<"$V"): $(vq page_cache.mechanisms.kprobes.why_not <<<"$V")"
else
	check_eq "kprobes: cannot, no kprobe event source (/sys/bus/event_source/devices/kprobe)" \
		"cannot this kernel has no kprobes (no kprobe event source)" \
		"$(vq page_cache.mechanisms.kprobes.verdict <<<"$V") $(vq page_cache.mechanisms.kprobes.why_not <<<"$V")"
fi
check_match "fentry: loaded to see, as root: can or cannot (with why), never may" "^(can null|cannot .+)$" \
	"$(vq page_cache.mechanisms.fentry.verdict <<<"$V") $(vq page_cache.mechanisms.fentry.why_not <<<"$V")"
first=$(python3 -c 'import json,sys
f = {x["feature"]: x for x in json.load(sys.stdin)["features"]}
print(next((m["mechanism"] for m in f["page_cache"]["mechanisms"] if m["verdict"] == "can"), "none"))' <<<"$V")
check_eq "… the one used: the first that can, in the order tracepoints, fentry, kprobes" \
	"ebpf $first" "$(vq page_cache.mode <<<"$V") $(vq page_cache.mechanism <<<"$V")"
run "$IOLENS" cachestat --json 0.1 1
check_match "… what cachestat then counts with" "\"mode\":\"ebpf\",\"mechanism\":\"$first\"" "$OUT"

# Block I/O: block_io_start (6.5) or block_getrq with block_rq_insert, by the BTF's tracepoints.
mechs=$(bio_mechanisms)
for m in block_io_start block_getrq; do
	if [[ " $mechs " == *" $m "* ]]; then want=can; else want=cannot; fi
	check_eq "block I/O: $m $want, as the BTF's tracepoints say" $want "$(vq block_io.mechanisms.$m.verdict <<<"$V")"
done
bio_used=${mechs%% *}
check_eq "… the one used: block_io_start where it can, else block_getrq" "ebpf $bio_used" \
	"$(vq block_io.mode <<<"$V") $(vq block_io.mechanism <<<"$V")"
run "$IOLENS" biotop --json 0.2 1
check_match "… what biotop then counts with" "\"mechanism\":\"$bio_used\"" "$OUT"
for m in $mechs; do
	run env IOLENS_BIO_MECHANISM=$m "$IOLENS" version --features --json
	check_eq "IOLENS_BIO_MECHANISM=$m: used" "ebpf $m" "$(vq block_io.mode <<<"$OUT") $(vq block_io.mechanism <<<"$OUT")"
done

# O_DIRECT opens: the raw syscall tracepoints, on every kernel with BTF.
check_eq "O_DIRECT opens: the syscall tracepoints, used" "ebpf tracepoints can" \
	"$(vq odirect_opens.mode <<<"$V") $(vq odirect_opens.mechanism <<<"$V") $(vq odirect_opens.mechanisms.tracepoints.verdict <<<"$V")"

# doctor says the same in its JSON and its header.
run "$IOLENS" doctor --json 0.2
check_eq "doctor: the same mechanisms in its JSON, and process exits by eBPF" "$first $bio_used ebpf ebpf" \
	"$(python3 -c 'import json,sys
d = json.load(sys.stdin); print(d["cache_mechanism"], d["bio_mechanism"], d["odirect_mode"], d["exits_mode"])' <<<"$OUT")"
run "$IOLENS" doctor 0.2
check_eq "… and in its header" "Counted: page cache ebpf ($first), block I/O ebpf ($bio_used), O_DIRECT opens ebpf, process exits ebpf." \
	"$(head -1 <<<"$OUT")"

# Forced to /proc: said, with why.
run env IOLENS_CACHE_MECHANISM=procfs "$IOLENS" version --features --json
check_match "IOLENS_CACHE_MECHANISM=procfs: the page cache from /proc, and why" "^procfs .*IOLENS_CACHE_MECHANISM" \
	"$(vq page_cache.mode <<<"$OUT") $(vq page_cache.why <<<"$OUT")"

# The text: a line per feature, a line per mechanism.
run "$IOLENS" version --features
check_match "text: the kernel named" "^iolens .* on Linux $(uname -r | sed 's/[.+]/\\&/g')$" "$(head -1 <<<"$OUT")"
check_match "… the page cache's line" "^page cache +ebpf, $first +cachestat, cachetop, doctor, export$" "$OUT"
check_match "… block I/O's" "^block I/O +ebpf, $bio_used +stat --latency, biotop, doctor, export$" "$OUT"
check_match "… the one used marked" "^  $first +can, used$" "$OUT"

# --no-probe: nothing loaded, the BTF's word.
run "$IOLENS" version --features --no-probe --json
check_eq "--no-probe: not probed, the page cache's tracepoints as the BTF says" \
	"false $([ -z "${missing_tp:-}" ] && echo may || echo cannot)" \
	"$(python3 -c 'import json,sys; print(str(json.load(sys.stdin)["probed"]).lower())' <<<"$OUT") $(vq page_cache.mechanisms.tracepoints.verdict <<<"$OUT")"

# Not root: the commands estimate from /proc; what root would use is said from the BTF.
run "${AS_NOBODY[@]}" "$IOLENS" version --features --json
check_eq "as nobody: exit 0, every feature from /proc" "0 procfs procfs procfs" \
	"$RC $(vq page_cache.mode <<<"$OUT") $(vq block_io.mode <<<"$OUT") $(vq odirect_opens.mode <<<"$OUT")"
check_eq "… block I/O's mechanism, as root would have it" "$bio_used" "$(vq block_io.mechanism <<<"$OUT")"
run "${AS_NOBODY[@]}" "$IOLENS" version --features
check_match "… said in the text" "^Not root, so the commands estimate from /proc" "$OUT"

echo "1..$t_count"
