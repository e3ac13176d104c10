#!/usr/bin/env bash
# stderr_lines.sh: what iolens says on stderr where it has something to say (as nobody, with eBPF refused, on missing or unreadable files, on bad options, with no vtrace server) is one line per cause, at most 100 characters, each said once per run.
. "$(dirname "$0")/lib.sh"

# The scratch directory's path ($T, some 40 characters under build/) is counted as a path of 10:
# the limit holds for the message, a path the user gave is on top of it.
LIMIT=100

# said WHAT [PATTERN]: $ERR (of the last run) holds PATTERN when given, no line of it is longer
# than LIMIT characters, and no line is said twice.
said() {
	local what=$1 pattern=${2:-} long twice
	[ -z "$pattern" ] || check_match "$what: says it" "$pattern" "$ERR"
	long=$(sed "s|$T|/tmp/t.XYZ|g" <<<"$ERR" | awk -v max=$LIMIT 'length > max')
	twice=$(grep . <<<"$ERR" | sort | uniq -d)
	check_eq "$what: no line over $LIMIT characters" "" "$long"
	check_eq "$what: no line said twice" "" "$twice"
}

# ---- Bad options and arguments: one line, then the pointer to --help ----------------------------
for cmd in doctor cachestat cachetop biotop vstat pcstat evict warm export stat bench fincore; do
	run "$IOLENS" "$cmd" --no-such-option
	check_eq "$cmd --no-such-option: exit 2" 2 "$RC"
	said "$cmd --no-such-option" "^iolens $cmd: unrecognized option '--no-such-option'"
done
run "$IOLENS" version --no-such-option
said "version --no-such-option" "unrecognized option"
run "$IOLENS" doctor 1 2
said "doctor with two numbers" "too many arguments"
run "$IOLENS" cachestat 0
said "cachestat 0" "interval"

# ---- Missing files ---------------------------------------------------------------------------------
for cmd in pcstat evict warm fincore; do
	run "$IOLENS" "$cmd" "$T/nope" "$T/nope2"
	said "$cmd of two missing files" "nope2: No such file or directory"
done

# ---- vstat with no server ---------------------------------------------------------------------------
mkdir "$T/shm"
run "$IOLENS" vstat --dir "$T/shm" nosuch
said "vstat of a service nobody runs" "no vtrace segment of service 'nosuch'"
run "$IOLENS" vstat --dir "$T/shm" -p $$
said "vstat -p of a process that is no server" "no vtrace segment of pid $$"
run "$IOLENS" vstat --dir "$T/shm" 1 1
said "vstat 1 1 with no server"

# ---- eBPF refused ------------------------------------------------------------------------------------
run env IOLENS_CACHE_MECHANISM=procfs "$IOLENS" cachestat 1 1
said "cachestat with eBPF refused (IOLENS_CACHE_MECHANISM=procfs)" "^iolens cachestat: no eBPF \(IOLENS_CACHE_MECHANISM=procfs\)"
run env IOLENS_CACHE_MECHANISM=procfs "$IOLENS" cachetop 1 1
said "cachetop with eBPF refused" "^iolens cachetop: no eBPF"
if is_root && [ -r /sys/kernel/btf/vmlinux ]; then
	hidden=(unshare -m --propagation private bash -c 'mount -t tmpfs none /sys/kernel/btf && exec "$@"' hidden)
	run "${hidden[@]}" "$IOLENS" cachestat 1 1
	said "cachestat without BTF" "no BTF"
	run "${hidden[@]}" "$IOLENS" doctor 1
	said "doctor 1 without BTF" "^iolens doctor: no eBPF \(this kernel has no BTF"
	check_eq "… one line for one reason" 1 "$(grep -c 'no eBPF' <<<"$ERR")"
else
	skip "eBPF refused for want of BTF: needs root (a mount namespace) and a kernel with BTF"
fi

# ---- As nobody ---------------------------------------------------------------------------------------
if is_root; then
	chmod 755 "$T"
	run "${AS_NOBODY[@]}" "$IOLENS" doctor 1
	said "doctor 1 as nobody" "^iolens doctor: not root"
	check_eq "… eBPF's refusal in one line, not one per collector" 1 "$(grep -c 'no eBPF' <<<"$ERR")"
	run "${AS_NOBODY[@]}" "$IOLENS" doctor -v 1
	check_eq "doctor -v 1 as nobody: no line said twice" "" "$(grep . <<<"$ERR" | sort | uniq -d)"
	for cmd in cachestat cachetop biotop; do
		run "${AS_NOBODY[@]}" "$IOLENS" "$cmd" 1 1
		said "$cmd 1 1 as nobody" "^iolens $cmd: .*needs root or CAP_BPF\+CAP_PERFMON"
	done
	run "${AS_NOBODY[@]}" "$IOLENS" export --once
	said "export --once as nobody" "^iolens export: no eBPF"

	# Started unprivileged, scraped once, then stopped.
	port=$(free_port)
	"${AS_NOBODY[@]}" "$IOLENS" export --listen "127.0.0.1:$port" >/dev/null 2>"$T/export.err" &
	exporter=$!
	on_exit "kill $exporter 2>/dev/null"
	check "export as nobody: serving" wait_while "$exporter" 60 grep -q "serving http://127.0.0.1:$port" "$T/export.err"
	curl -sf "http://127.0.0.1:$port/metrics" >/dev/null 2>&1
	kill "$exporter"
	wait "$exporter" 2>/dev/null
	ERR=$(cat "$T/export.err")
	said "export started as nobody, then stopped" "^iolens export: no eBPF \(needs root or CAP_BPF\+CAP_PERFMON\): no cache hits"
	check_no_match "… no sentence broken mid-way" "estimating from page-cache" "$ERR"

	# Files nobody may not read, or whose page-cache state the kernel tells only their owner.
	for i in 1 2 3; do make_file "$T/private$i" 8192; done
	chmod 600 "$T"/private*
	make_file "$T/public" 8192
	chmod 644 "$T/public"
	run "${AS_NOBODY[@]}" "$IOLENS" pcstat "$T"/private* "$T/public"
	said "pcstat of unreadable files as nobody" "private1: Permission denied"
	for cmd in evict warm; do
		run "${AS_NOBODY[@]}" "$IOLENS" "$cmd" "$T/public" /etc/passwd /etc/hostname
		said "$cmd of others' files as nobody" "cached pages unknown"
	done
else
	skip "as nobody: needs root (setpriv)"
fi

