#!/usr/bin/env bash
# export_unprivileged.sh: iolens export as docs/iolens-export.service runs it: uid 65534 with the unit's capabilities and no others, no tracefs; eBPF counts, a root-run libvtrace server is exported, /metrics passes promtool; the unit's syscall and address-family filters allow what it does; systemd-analyze verify accepts the unit.
. "$(dirname "$0")/lib.sh"

is_root || skip_all "starting the exporter as uid 65534 with capabilities needs root"
command -v setpriv >/dev/null || skip_all "no setpriv (util-linux)"
command -v curl >/dev/null || skip_all "no curl (make test-deps)"
UNIT=$TOP/docs/iolens-export.service
VTLOAD=${BUILD:-$TOP/build}/tests/helpers/vtload
PROMTOOL=$(command -v promtool || true)

# The unit's settings, as systemd reads them (the last line of a key; filters add up).
unit_value() { awk -F= -v k="$1" '$1 == k { sub(/^[^=]*=/, ""); v = $0 } END { print v }' "$UNIT"; }
caps=$(unit_value AmbientCapabilities)
check_eq "the unit: the same capabilities ambient and bounding" "$caps" "$(unit_value CapabilityBoundingSet)"
check_eq "… a dynamic user, no new privileges" "yes yes" "$(unit_value DynamicUser) $(unit_value NoNewPrivileges)"
# setpriv's words for them: +bpf,+perfmon,...
setpriv_caps=$(tr ' ' '\n' <<<"$caps" | sed 's/^CAP_//' | tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd,)
# as_unit CAPS: the command line that runs what follows as uid 65534 with those capabilities only.
as_unit() { AS_UNIT=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,"$1" --ambient-caps=-all,"$1" --bounding-set=-all,"$1"); }
# Without tracefs, as on a freshly booted machine: in a mount namespace of its own, whatever the host has.
no_tracefs() { unshare -m --propagation private sh -c 'umount -l /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null; exec "$@"' sh "$@"; }

# The test's directory is 0700: uid 65534 must reach the segments and the files in it.
chmod 755 "$T"
export VTRACE_DIR=$T/vtrace
mkdir -p "$VTRACE_DIR"
make_file "$T/file" $((1 << 20))
chmod 644 "$T/file"

# A libvtrace server run by root: its segment is root's, mode 0600.
if [ -x "$VTLOAD" ]; then
	start_vtload rootsvc OPEN=1
	vtload_say "run OPEN 7 1000"
	check_eq "vtload's segment: root's, 0600" "root 600" "$(stat -c '%U %a' "$VTRACE_DIR"/vtrace.rootsvc.*)"
fi

# ---- The exporter as the unit runs it -------------------------------------------------------------------

port=$(free_port)
as_unit "$setpriv_caps"
no_tracefs "${AS_UNIT[@]}" "$IOLENS" export --listen "127.0.0.1:$port" 2>"$T/export.err" &
EXPORTER=$!
for i in $(seq 100); do curl -s -o /dev/null "127.0.0.1:$port/" && break; sleep 0.1; done
url=http://127.0.0.1:$port/metrics
# The pid that serves: unshare, sh and setpriv exec into it, the background subshell may fork it.
server=$(children_of "$EXPORTER" | head -1)
[ -n "$server" ] || server=$EXPORTER # none: the exporter did not start (the checks below say so)
on_exit "kill $server 2>/dev/null"
check_eq "it runs as uid 65534 (/proc/PID/status)" "65534 65534 65534 65534" \
	"$(awk '$1 == "Uid:" { print $2, $3, $4, $5 }' "/proc/$server/status")"
want_mask=$(python3 -c 'import sys, ctypes
names = {"CAP_DAC_READ_SEARCH": 2, "CAP_SYS_PTRACE": 19, "CAP_PERFMON": 38, "CAP_BPF": 39}
print("%016x" % sum(1 << names[c] for c in sys.argv[1:]))' $caps)
check_eq "… with the unit's capabilities, effective, ambient and bounding, and no other ($caps)" \
	"$want_mask $want_mask $want_mask" \
	"$(awk '$1 == "CapEff:" { e = $2 } $1 == "CapAmb:" { a = $2 } $1 == "CapBnd:" { b = $2 } END { print e, a, b }' "/proc/$server/status")"
check_eq "… in a mount namespace without tracefs" "" \
	"$(awk '$3 == "tracefs" { print $2 }' "/proc/$server/mounts")"
OUT=$(curl -s "$url")
check_match "GET /metrics as uid 65534: served" "^iolens_build_info" "$OUT"
if [ -n "$PROMTOOL" ]; then
	check_eq "… promtool check metrics accepts it" "" "$(promtool check metrics <<<"$OUT" 2>&1)"
else
	skip "promtool is not installed (make test-deps: prometheus)"
fi

if why=$(ebpf_expected); then
	check_match "the page cache counted by eBPF: mode=\"ebpf\", accesses (which only eBPF counts) exported" \
		'^iolens_page_cache_accesses_total\{mode="ebpf"\} [0-9]+$' "$OUT"
	check_no_match "… no fallback said on stderr" "no eBPF" "$(cat "$T/export.err")"
	# 1 MiB read twice by another process: 512 page accesses more, at least.
	a0=$(awk '$1 == "iolens_page_cache_accesses_total{mode=\"ebpf\"}" { print $2 }' <<<"$OUT")
	cat "$T/file" "$T/file" >/dev/null
	for i in $(seq 100); do
		a1=$(curl -s "$url" | awk '$1 == "iolens_page_cache_accesses_total{mode=\"ebpf\"}" { print $2 }')
		awk -v a="$a0" -v b="$a1" 'BEGIN { exit !(b - a >= 512) }' && break
		sleep 0.1
	done
	check "… counting: two reads of a 1 MiB file are 512 accesses more or so ($a0 -> $a1)" \
		awk -v a="$a0" -v b="$a1" 'BEGIN { exit !(b - a >= 512) }'
else
	skip "eBPF as uid 65534: $why"
fi

if [ -x "$VTLOAD" ]; then
	check_match "the root-run libvtrace server exported: its 7 OPENs" \
		"^iolens_vtrace_requests_total\\{service=\"rootsvc\",pid=\"$VTLOAD_PID\",uid=\"0\",user=\"root\",op=\"OPEN\"\\} 7$" "$OUT"
	# Why the unit keeps CAP_DAC_READ_SEARCH and CAP_SYS_PTRACE: without either, the segment is not shown.
	for keep in +bpf,+perfmon,+sys_ptrace +bpf,+perfmon,+dac_read_search; do
		as_unit "$keep"
		run "${AS_UNIT[@]}" "$IOLENS" export --once --collector.disable-defaults --collector.vtrace
		check_eq "… with only $keep: not exported (the segment cannot be proven the server's)" "0 0" \
			"$RC $(grep -c 'service="rootsvc"' <<<"$OUT")"
	done
else
	skip "a root-run libvtrace server: vtload is not built (make check builds it)"
fi
kill "$server"
wait "$EXPORTER" 2>/dev/null

# ---- The unit's filters allow every system call and socket the exporter makes ---------------------------------

if ! command -v strace >/dev/null || ! command -v systemd-analyze >/dev/null; then
	skip "the unit's filters: needs strace and systemd-analyze"
else
	port=$(free_port)
	as_unit "$setpriv_caps"
	strace -f -qq -o "$T/trace" "${AS_UNIT[@]}" "$IOLENS" export --listen "127.0.0.1:$port" 2>"$T/export.err" &
	TRACED=$!
	on_exit "kill $TRACED 2>/dev/null"
	for i in $(seq 200); do curl -s -o /dev/null "127.0.0.1:$port/" && break; sleep 0.1; done
	for i in 1 2 3; do traced_status=$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$port/metrics"); done
	# strace's child: the exporter (none: it has ended, and strace with it).
	traced_server=$(children_of "$TRACED" | head -1)
	[ -z "$traced_server" ] || kill -TERM "$traced_server"
	wait "$TRACED" 2>/dev/null
	filter=$(awk -F= '$1 == "SystemCallFilter" { sub(/^[^=]*=/, ""); print }' "$UNIT" | tr '\n' ' ')
	families=$(unit_value RestrictAddressFamilies)
	verdict=$(python3 - "$T/trace" "$IOLENS" "$families" $filter <<'PY'
import re, subprocess, sys
trace, iolens, families, rules = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4:]
def expand(name, seen=set()):
    if not name.startswith("@"):
        return {name}
    out = set()
    text = subprocess.run(["systemd-analyze", "syscall-filter", name], capture_output=True, text=True).stdout
    for line in text.splitlines()[1:]:
        word = line.strip()
        if not word or word.startswith("#"):
            continue
        out |= expand(word) if word.startswith("@") and word not in seen else {word}
    return out
allowed = set()
for rule in rules:
    if rule.startswith("~"):
        allowed -= expand(rule[1:])
    else:
        allowed |= expand(rule)
used, sockets, started = set(), set(), False
for line in open(trace):
    if not started:
        started = 'execve("%s"' % iolens in line
        continue
    m = re.match(r"\d+\s+(?:<\.\.\. )?([a-z0-9_]+)[( ]", line)
    if m:
        used.add(m.group(1))
    s = re.search(r"socket\((AF_[A-Z0-9]+)", line)
    if s:
        sockets.add(s.group(1))
print("calls", len(used), "bpf" if "bpf" in used else "no-bpf", "outside", sorted(used - allowed) or "none", "families", sorted(sockets - set(families)) or "none")
PY
)
	check_match "strace of the exporter as the unit runs it, scraped (HTTP $traced_status): system calls made, bpf(2) among them ($verdict)" \
		"^calls [1-9][0-9]+ bpf " "$verdict"
	check_match "… every one allowed by SystemCallFilter=$filter" "outside none " "$verdict"
	check_match "… every socket's family in RestrictAddressFamilies=$families" "families none$" "$verdict"
fi

# ---- systemd-analyze: the unit as systemd reads it ------------------------------------------------------------

check_unit "$UNIT"

echo "1..$t_count"
