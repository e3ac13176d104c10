#!/usr/bin/env bash
# doctor.sh: iolens doctor finds what a real workload causes (a reader with O_DIRECT, a filesystem filled up) with its numbers, and raises no false alarm.
# tests/run: alone (no false alarm on a quiet machine: a test beside it saturating a loop device is a true one)
. "$(dirname "$0")/lib.sh"

case "$(fs_type "$T")" in
tmpfs|ramfs) skip_all "the scratch directory is on $(fs_type "$T"): no O_DIRECT" ;;
esac

# dq QUERY ...: what doctor --json says (tests/cli/doctor_query.py lists the queries).
dq() { python3 "$TOP/tests/cli/doctor_query.py" "$@" 2>>"$T/dq.err"; }

# ---- O_DIRECT: the O_DIRECT service, reading a file with O_DIRECT in a loop ---------------

f=$T/direct.dat
READER=${BUILD:-$TOP/build}/tests/helpers/odirect_reader
head -c $((4 << 20)) /dev/urandom >"$f"
"$READER" "$f" "$T/started" &
reader=$!
on_exit "kill $reader 2>/dev/null"
for i in $(seq 50); do [ -e "$T/started" ] && break; sleep 0.1; done
check "the O_DIRECT service: odirect_reader reads $f with O_DIRECT in a loop" test -e "$T/started"

run "$IOLENS" doctor --json 1
# Reading flat out, it may saturate the disk as well: that finding may be critical (PSI io full).
check "a process reading with O_DIRECT: a warning or worse (exit $RC)" test "$RC" -eq 3 -o "$RC" -eq 4
check_eq "… found by pid" "$reader" "$(dq get odirect pid pid "$reader" <<<"$OUT")"
check_eq "… with the file it reads" "$f" "$(dq get odirect files pid "$reader" <<<"$OUT")"
check_eq "… and its severity" warning "$(python3 -c 'import json, sys
print(next(f["severity"] for f in json.load(sys.stdin)["findings"] if f["data"].get("pid") == int(sys.argv[1])))' "$reader" <<<"$OUT")"
rate=$(dq get odirect read_bytes_per_s pid "$reader" <<<"$OUT")
check "… reading from storage ($rate bytes/s, from /proc/PID/io)" awk -v r="$rate" 'BEGIN { exit !(r + 0 > 1048576) }'
check_eq "… the whole file in the page cache's count" 1024 "$(dq get odirect file_pages pid "$reader" <<<"$OUT")"
check_eq "… anything critical is the disk it keeps busy" "" "$(python3 -c 'import json, sys
print(" ".join(f["rule"] for f in json.load(sys.stdin)["findings"] if f["severity"] == "critical" and f["rule"] != "disk"))' <<<"$OUT")"
fd=$(dq get odirect fd pid "$reader" <<<"$OUT")
check_match "… quoting its fdinfo flags line" "fdinfo/$fd says \"flags: $(awk '/^flags:/ { print $2 }' /proc/$reader/fdinfo/$fd)\"" \
	"$(dq get odirect numbers pid "$reader" <<<"$OUT")"
run "$IOLENS" doctor 0.5
check_match "the table says what, with the fdinfo flag" "warning: process $reader \(odirect_reader\) does its I/O with O_DIRECT on $f" "$OUT"
check_match "… and the command that shows more" "more: iolens cachetop -p $reader" "$OUT"
kill $reader
wait $reader 2>/dev/null
run "$IOLENS" doctor --json 0
check_eq "once it is gone, no O_DIRECT finding for it" absent "$(dq get odirect pid pid "$reader" <<<"$OUT")"

# ---- No false alarm: what doctor says of this machine is what df says ----------------------

run "$IOLENS" doctor --json 0
check "an ordinary run: exit 0, 3 or 4 ($RC)" test "$RC" -eq 0 -o "$RC" -eq 3 -o "$RC" -eq 4
check_eq "… every full filesystem it reports is one df reports 90 % used or more" ok "$(python3 -c 'import json, subprocess, sys
bad = []
for f in json.load(sys.stdin)["findings"]:
    if f["rule"] != "full":
        continue
    pct = subprocess.run(["df", "--output=pcent", f["data"]["mount"]], capture_output=True, text=True).stdout.split()[-1]
    if int(pct.rstrip("%")) < 90:
        bad.append((f["data"]["mount"], pct))
print("ok" if not bad else bad)' <<<"$OUT")"
run "$IOLENS" doctor --json 2
# (A mount that does not answer may be another program's, or another test's hung FUSE server run
# beside this one: true when stat -f of it, in a process of its own, does not answer in 5 s either.)
check_eq "two quiet seconds: nothing at warning level but full filesystems (df's), O_DIRECT users and mounts that do not answer stat -f" "" \
	"$(python3 -c 'import json, subprocess, sys
def hung(mount):
    p = subprocess.Popen(["stat", "-f", "--", mount], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        p.wait(5)
        return False
    except subprocess.TimeoutExpired:
        return True  # left waiting, as doctor leaves its probe
print(" ".join(f["rule"] for f in json.load(sys.stdin)["findings"]
               if f["severity"] != "info" and f["rule"] not in ("full", "inodes", "odirect")
               and not (f["rule"] == "unresponsive" and hung(f["data"]["mount"]))))' <<<"$OUT")"
check_eq "… and no O_DIRECT process among this test's own" "" "$(python3 -c 'import json, os, sys
mine = {os.getpid(), os.getppid()}
print(" ".join(str(f["data"]["pid"]) for f in json.load(sys.stdin)["findings"] if f["rule"] == "odirect" and f["data"]["pid"] in mine))' <<<"$OUT")"

# ---- Full filesystems and inodes ----------------------------------------------------------------

if is_root; then
	mkdir -p "$T/small" "$T/few"
	mount -t tmpfs -o size=1m none "$T/small" && on_exit "umount '$T/small' 2>/dev/null"
	mount -t tmpfs -o size=16m,nr_inodes=20 none "$T/few" && on_exit "umount '$T/few' 2>/dev/null"
	head -c 950k /dev/zero >"$T/small/x"
	run "$IOLENS" doctor --json 0
	check_eq "a filesystem 93 % full: a warning for it" warning "$(python3 -c 'import json, sys
print(next((f["severity"] for f in json.load(sys.stdin)["findings"] if f["rule"] == "full" and f["data"]["mount"] == sys.argv[1]), "absent"))' "$T/small" <<<"$OUT")"
	pct=$(dq get full used_percent mount "$T/small" <<<"$OUT")
	check "… its used share as df's ($pct against $(df --output=pcent "$T/small" | tail -1))" \
		awk -v a="$pct" -v b="$(df --output=pcent "$T/small" | tail -1 | tr -d ' %')" 'BEGIN { d = a - b; exit !(d > -1 && d <= 1) }'
	head -c 1010k /dev/zero >"$T/small/x"
	run "$IOLENS" doctor 0
	check_eq "filled to 99 %: critical, exit 4" 4 "$RC"
	check_match "… said with the free space" "critical: $T/small \(tmpfs on none\) is nearly full" "$OUT"
	for i in $(seq 19); do : >"$T/few/f$i"; done
	run "$IOLENS" doctor --json 0
	check_eq "a filesystem out of inodes: found" "inodes" "$(python3 -c 'import json, sys
print(next((f["rule"] for f in json.load(sys.stdin)["findings"] if f["rule"] == "inodes" and f["data"]["mount"] == sys.argv[1]), "absent"))' "$T/few" <<<"$OUT")"
	umount "$T/small" "$T/few"
else
	skip "full filesystems: mounting a small tmpfs needs root"
fi

# ---- Usage ----------------------------------------------------------------------------------------

for args in "-1" "abc" "1 2" "--bogus" "7200"; do
	run "$IOLENS" doctor $args
	check_eq "doctor $args: exit 2" 2 "$RC"
done

echo "1..$t_count"
