#!/usr/bin/env bash
# ebpf_fresh.sh: eBPF counts as it does on a freshly booted machine, where nothing mounted tracefs: cachestat, cachetop, stat --cache and --top-bio, biotop (each way of seeing the submitters), doctor and export in a mount namespace without it; a kernel without block_io_start (its BTF without it) falls back to block_getrq, said; and when eBPF cannot count, the reason said is the true one.
. "$(dirname "$0")/lib.sh"

why=$(ebpf_expected) || skip_all "$why"
command -v unshare >/dev/null || skip_all "unshare is not installed (util-linux)"

# run "${FRESH[@]}" CMD...: in a new mount namespace (private: the machine's mounts are not changed)
# where tracefs is unmounted wherever it was, and /sys/kernel/tracing is an empty directory.
FRESH=(unshare -m --propagation private bash -c '
	for m in $(awk "\$3 == \"tracefs\" { print \$2 }" /proc/self/mounts | sort -r); do umount -l "$m" || exit 97; done
	[ -z "$(awk "\$3 == \"tracefs\"" /proc/self/mounts)" ] || exit 98
	exec "$@"' fresh)

# The machine's mounts but those of the tests' scratch directories (other tests, run beside this
# one, mount and unmount there): this suite's ($TEST_TMPDIR), and any other suite's on the machine
# (its own cli.XXXXXX: a second make check in another tree mounts there).
machine_mounts() {
	awk -v tmp="$(readlink -f "$TEST_TMPDIR")/" 'index($2 "/", tmp) != 1 && $2 !~ /\/cli\.[A-Za-z0-9]+(\/|$)/' \
		/proc/self/mounts
}
machine_mounts=$(machine_mounts)
run "${FRESH[@]}" cat /proc/self/mounts
check "the namespace has no tracefs mounted (exit $RC)" test "$RC" -eq 0
check_no_match "… nothing of type tracefs in its mounts" ' tracefs ' "$OUT"

run "${FRESH[@]}" "$IOLENS" cachestat --json 0.2 2
check_match "cachestat counts with eBPF without tracefs" '"mode":"ebpf"' "$OUT"
check_no_match "… and says nothing about eBPF missing" 'no eBPF' "$ERR"

run "${FRESH[@]}" "$IOLENS" cachetop --json 0.2 2
check_match "cachetop counts with eBPF without tracefs" '"mode":"ebpf"' "$OUT"
run "${FRESH[@]}" "$IOLENS" cachetop --files --json 0.2 2
check_match "cachetop --files too" '"mode":"ebpf"' "$OUT"

run "${FRESH[@]}" "$IOLENS" stat --cache --json 0.3 2
check_match "stat --cache: pages added per second counted (eBPF) without tracefs" '"added_pages_per_s":[0-9]' "$(tail -n 1 <<<"$OUT")"
check_no_match "… no message that they are unknown" 'unknown' "$ERR"

# stat --top-bio: block I/O per process (tp_btf on the block tracepoints), an O_DIRECT reader named.
READER=${BUILD:-$TOP/build}/tests/helpers/odirect_reader
if can_evict && [ -x "$READER" ]; then
	make_file "$T/direct" $((16 << 20))
	sync "$T/direct"
	"$READER" "$T/direct" "$T/reading" &
	reader=$!
	on_exit "kill $reader 2>/dev/null"
	wait_until test -e "$T/reading"
	run "${FRESH[@]}" "$IOLENS" stat --top-bio --json --no-boot-sample 0.5 2
	check_match "stat --top-bio: block I/O per process by eBPF without tracefs, the O_DIRECT reader named" \
		"\"top_bio\":\\{\"name\":\"odirect_reader\",\"pid\":$reader,\"read_bytes_per_s\":[1-9]" "$OUT"
	check_no_match "… and no word that eBPF is not used" 'eBPF is not used' "$ERR"
	for m in $(bio_mechanisms); do
		run "${FRESH[@]}" env IOLENS_BIO_MECHANISM=$m "$IOLENS" biotop --json 0.5 1
		check_match "biotop ($m): the O_DIRECT reader's reads, with their latency, without tracefs" \
			"\"pid\":$reader,\"comm\":\"odirect_reader\",\"cgroup_id\":[0-9]+,[^}]*\"op\":\"R\",[^}]*\"bytes\":[1-9][0-9]*,\"avg_ns\":[1-9]" "$OUT"
	done
	kill $reader
else
	skip "stat --top-bio without tracefs: needs $READER (make check builds it) and a disk under $T"
fi

run "${FRESH[@]}" "$IOLENS" doctor --json 1
check_match "doctor counts cache misses with eBPF without tracefs" '"cache_mode": *"ebpf"' "$OUT"

run "${FRESH[@]}" "$IOLENS" export --once
check_match "export's page-cache hits are counted with eBPF without tracefs" '^iolens_page_cache_hits_total\{mode="ebpf"\}' "$OUT"

# When eBPF cannot count, the message says why, and the fix.
run "${AS_NOBODY[@]}" "$IOLENS" cachestat 0.1 1
check_match "not root: the message says root or CAP_BPF and CAP_PERFMON are needed" 'no eBPF \(needs root or CAP_BPF\+CAP_PERFMON\)' "$ERR"
run "${AS_NOBODY[@]}" "$IOLENS" cachestat -v 0.1 1
check_match "… and with -v, the fix" 'needs root, or CAP_BPF and CAP_PERFMON: run it with sudo' "$ERR"
run "${AS_NOBODY[@]}" "$IOLENS" stat --cache 0.1 1
check_match "… stat --cache says the same, in short" 'eBPF needs root or CAP_BPF\+CAP_PERFMON' "$ERR"
run "${AS_NOBODY[@]}" "$IOLENS" stat --top-bio 0.1 1
check_match "… stat --top-bio too, and that its figures are /proc/PID/io's" \
	"^iolens stat: --top-bio counts /proc/PID/io: eBPF needs root or CAP_BPF\\+CAP_PERFMON$" "$ERR"

run unshare -m --propagation private bash -c 'mount -t tmpfs none /sys/kernel/btf && exec "$@"' hidden "$IOLENS" cachestat -v 0.1 1
check_match "no BTF (/sys/kernel/btf hidden): the message says the kernel has no BTF" \
	'no eBPF \(this kernel has no BTF\): estimating' "$ERR"
check_match "… and with -v what is needed" \
	'/sys/kernel/btf/vmlinux: .*: it needs a kernel built with CONFIG_DEBUG_INFO_BTF=y' "$ERR"
check_match "… and cachestat still prints what /proc tells" 'HITS' "$OUT"

# A kernel without a tracepoint: its BTF, copied with the tracepoint's type renamed, bound over
# /sys/kernel/btf/vmlinux in a private mount namespace (libbpf finds tracepoints there).
# without_tracepoint NAME[,NAME...] COMMAND...: runs COMMAND so; false when this BTF does not name each once.
without_tracepoint() {
	local names=$1
	shift
	python3 -c 'import sys
data = open("/sys/kernel/btf/vmlinux", "rb").read()
for name in sys.argv[2].split(","):
    old = b"btf_trace_" + name.encode() + b"\0"
    new = old[:-2] + b"X\0"
    if data.count(old) != 1:
        sys.exit(1)
    data = data.replace(old, new)
sys.exit(open(sys.argv[1], "wb").write(data) <= 0)' "$T/vmlinux" "$names" || return 1
	run unshare -m --propagation private bash -c 'mount --bind "$0" /sys/kernel/btf/vmlinux && exec "$@"' "$T/vmlinux" "$@"
}
if without_tracepoint mm_filemap_get_pages "$IOLENS" cachestat 0.1 1; then
	check_match "a kernel without the tracepoint mm_filemap_get_pages: the message names it" \
		"this kernel \\([^)]*\\) has no tracepoint mm_filemap_get_pages" "$ERR"
else
	skip "a kernel without a tracepoint: this kernel's BTF does not name mm_filemap_get_pages once"
fi
# block_io_start came with Linux 6.5: before it, the submitters are seen at block_getrq, said once.
if without_tracepoint block_io_start "$IOLENS" stat --top-bio --json 0.1 1; then
	check_match "a kernel without block_io_start: stat --top-bio by eBPF, the submitters seen at block_getrq" \
		'"bio_mechanism":"block_getrq"' "$OUT"
	check_match "… what is less exact said once" \
		"^iolens stat: --top-bio: each request's process seen at block_getrq \\(no block_io_start before Linux 6.5\\)" "$ERR"
	check_eq "… exit 0" 0 "$RC"
	without_tracepoint block_io_start "$IOLENS" biotop --json 0.1 1
	check_match "… biotop likewise" '"mechanism":"block_getrq"' "$OUT"
	without_tracepoint block_io_start env IOLENS_BIO_MECHANISM=block_io_start "$IOLENS" biotop --json 0.1 1
	check_match "… and refuses IOLENS_BIO_MECHANISM=block_io_start, saying why" \
		"needs eBPF: IOLENS_BIO_MECHANISM=block_io_start: this kernel \\([^)]*\\) has no tracepoint block_io_start$" "$ERR"
else
	skip "a kernel without block_io_start: this kernel's BTF does not name it once"
fi
# Without either, --top-bio is /proc/PID/io's, and says why.
if without_tracepoint block_io_start,block_getrq "$IOLENS" stat --top-bio --verbose 0.1 1; then
	check_match "a kernel without block_io_start and block_getrq: stat --top-bio --verbose names them, and says its figures are /proc/PID/io's" \
		"--top-bio counts /proc/PID/io: this kernel \\([^)]*\\) has no tracepoint block_io_start; with block_getrq: this kernel \\([^)]*\\) has no tracepoint block_getrq$" "$ERR"
	check_eq "… exit 0: the figures are known" 0 "$RC"
else
	skip "a kernel without block_io_start and block_getrq: this kernel's BTF does not name them once"
fi

# A field the program reads that this kernel's BTF lacks (struct request's __data_len,
# renamed in a copy of the BTF): CO-RE cannot place it, so stat -x --latency's percentiles are off, said with
# the field's name, and null in JSON: never read from a wrong offset, never zeros.
if python3 -c 'import sys
data = open("/sys/kernel/btf/vmlinux", "rb").read()
old = b"\0__data_len\0"
sys.exit(data.count(old) != 1 or open(sys.argv[1], "wb").write(data.replace(old, b"\0__data_leX\0")) <= 0)' "$T/vmlinux-field"; then
	run unshare -m --propagation private bash -c 'mount --bind "$0" /sys/kernel/btf/vmlinux && exec "$@"' "$T/vmlinux-field" \
		"$IOLENS" stat -x --latency --json --verbose 0.1 1
	check_match "a kernel whose struct request has no __data_len: stat -x --latency --verbose says so" \
		"-x: no latency percentiles: this kernel's BTF has no struct request\\.__data_len, which the eBPF program reads" "$ERR"
	check_eq "… exit 0: the averages are known" 0 "$RC"
	check_eq "… the percentiles null, not 0" "None" "$(python3 -c 'import json, sys
line = json.loads(sys.stdin.read().splitlines()[-1])
print(set(v for k, g in line.items() if k.startswith("dskext_") for kk, v in g.items() if kk.endswith("p50_ns")))' <<<"$OUT" | tr -d '{}')"
	check_eq "… bio_mechanism procfs" procfs "$(python3 -c 'import json, sys; print(json.loads(sys.stdin.read().splitlines()[-1])["bio_mechanism"])' <<<"$OUT")"
else
	skip "a kernel without a field: this kernel's BTF does not name __data_len once"
fi

check_eq "the machine's own mounts are as they were before the test (the tests' scratch aside)" "$machine_mounts" "$(machine_mounts)"

echo "1..$t_count"
