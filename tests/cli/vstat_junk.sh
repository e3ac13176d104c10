#!/usr/bin/env bash
# vstat_junk.sh: what other users leave in /dev/shm cannot make root's readers (vstat, export,
# doctor) slow, hide a server, take their memory, or pass for another user's server: junk files
# looked at once (counted with strace), descriptors of another user's never read, room shared
# between users, whose each server is said everywhere, junk failing no run it is not named in.
# tests/run: alone (16,000 descriptors held and 41,000 files: beside other tests, once, one of
# nobody's descriptors was read while a root server was looked for: not understood; its lines are
# printed should it happen again)
. "$(dirname "$0")/lib.sh"

VTLOAD=${BUILD:-$TOP/build}/tests/helpers/vtload
VTFORGE=${BUILD:-$TOP/build}/tests/helpers/vtforge
[ -x "$VTLOAD" ] && [ -x "$VTFORGE" ] || skip_all "vtload and vtforge are not built (make check builds them)"
is_root || skip_all "needs root: the readers run as root, the hostile users are nobody and uids 60001-60003"

chmod 755 "$T"
export VTRACE_DIR=$T/shm
mkdir -p "$VTRACE_DIR"
mount -t tmpfs -o size=256m,nr_inodes=200k,mode=1777 iolens-junk "$VTRACE_DIR" || skip_all "cannot mount a tmpfs"
on_exit "umount -l '$VTRACE_DIR'"
py() { python3 -c "$@"; }
dq() { python3 "$TOP/tests/cli/doctor_query.py" "$@" 2>>"$T/dq.err"; }
nobody() { "${AS_NOBODY[@]}" "$@"; }
as_uid() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups --inh-caps=-all "$@"; }
have_strace=; command -v strace >/dev/null && have_strace=yes
# services JSON: "service:user:state" of every live service vstat shows, sorted
services() {
	py 'import json,sys
print(" ".join(sorted("%s:%s:%s" % (s["service"], s["owner_user"], s["state"]) for s in json.loads(sys.argv[1])["services"] if s["state"] == "live")))' "$1"
}
start() { vtload_start "$@"; } # (lib.sh)
say() { vtload_to "$@"; }

# ---- An exporter that runs long: each file is looked at once, however many there are ----------
start real real -- OPA OPB
say real "run OPA 10"
PORT=$((20000 + $$ % 20000))
"$IOLENS" export --listen "127.0.0.1:$PORT" 2>"$T/export.err" &
exporter=$!
on_exit "kill $exporter 2>/dev/null"
answers() { curl -s -o "$T/scrape" --max-time 60 "http://127.0.0.1:$PORT/metrics"; }
check "an exporter answers" wait_until answers
# lstats SCRAPE-FILE: the files named vtrace.junk* the exporter lstat'ed (or opened) during one scrape.
lstats() {
	: >"$T/trace"
	strace -f -qq -e trace=newfstatat,statx,lstat,openat -o "$T/trace" -p "$exporter" &
	local tracer=$!
	wait_until 10 grep -q . "/proc/$tracer/status" && sleep 0.2 # attached (strace prints nothing until then)
	answers
	kill "$tracer"; wait "$tracer" 2>/dev/null
	grep -c 'vtrace\.junk' "$T/trace"
}
nobody sh -c 'cd "$1" && seq -f "vtrace.junk%.0f.1" 1 20000 | xargs touch -d "1 minute ago"' sh "$VTRACE_DIR"
nobody sh -c 'for i in $(seq 64); do "$1" "$2/vtrace.stale$i.%p" --service stale$i >/dev/null; done' sh "$VTFORGE" "$VTRACE_DIR"
answers
check_match "20,000 empty files and 64 stale segments of nobody's: the real server still exported" \
	'^iolens_vtrace_requests_total\{service="real",.*op="OPA"\} 10$' "$(cat "$T/scrape")"
check_no_match "… none of the stale ones" 'service="stale' "$(cat "$T/scrape")"
answers # (the names its time did not reach the first time, if any)
if [ -n "$have_strace" ]; then
	check_eq "a scrape after: none of the 20,000 junk files looked at again (lstat, open)" 0 "$(lstats)"
	nobody sh -c 'cd "$1" && seq -f "vtrace.more%.0f.1" 1 1000 | xargs touch -d "1 minute ago"' sh "$VTRACE_DIR"
	n=$(lstats)
	check "1,000 files more: the next scrape looks at those ($(grep -c 'vtrace\.more' "$T/trace") of them), not the 20,000 ($n)" \
		test "$(grep -c 'vtrace\.more' "$T/trace")" -ge 1000 -a "$n" -eq 0
	# More than inotify's queue holds (16,384): the directory is read whole, the files known not
	# looked at again.
	nobody sh -c 'cd "$1" && seq -f "vtrace.flood%.0f.1" 1 20000 | xargs touch -d "1 minute ago"' sh "$VTRACE_DIR"
	n=$(lstats)
	check "20,000 files more at once (the queue overflows): the new ones looked at ($(grep -c 'vtrace\.flood' "$T/trace")), not the 20,000 known ($n)" \
		test "$(grep -c 'vtrace\.flood' "$T/trace")" -ge 20000 -a "$n" -eq 0
else
	skip "the files looked at in a scrape: needs strace"
	skip "… after 1,000 more"
	skip "… after 20,000 more"
fi
# A file remembered as junk, then replaced by a segment under its name (a new file): found.
mkdir -m 1777 "$VTRACE_DIR/elsewhere" # (the same filesystem: moved from there, the file stays the one held)
mkfifo "$T/late.in" "$T/late.out"
"$VTFORGE" "$VTRACE_DIR/elsewhere/vtrace.late.%p" --service late --hold <"$T/late.in" >"$T/late.out" &
on_exit "kill $! 2>/dev/null"
exec {late_in}>"$T/late.in" {late_out}<"$T/late.out"
read -r -u "$late_out" _ late_path
late_name=${late_path##*/}
nobody touch -d "1 minute ago" "$VTRACE_DIR/$late_name"
answers
check_no_match "an empty file of nobody's named as a segment will be: nothing exported" 'service="late"' "$(cat "$T/scrape")"
mv -f "$late_path" "$VTRACE_DIR/$late_name"
answers
check_match "… replaced by a live segment under that name (root's): exported at the next scrape" \
	'^iolens_vtrace_requests_total\{service="late",.*uid="0",user="root",op="OP0"\} 0$' "$(cat "$T/scrape")"
exec {late_in}>&- {late_out}<&-
check "… and gone when it goes" wait_until 30 sh -c "curl -s 'http://127.0.0.1:$PORT/metrics' | grep -q 'service=\"late\"' && exit 1 || exit 0"

# A file remembered as junk (empty, old), then written in place (the same inode: a writer stopped
# between its open and its header, then on): looked at again by a reader that runs (inotify's
# IN_MODIFY), here a vstat of reports every 0.2 s, which lists it once it is a segment.
nobody "$VTFORGE" "$VTRACE_DIR/elsewhere/vtrace.inplace.1" --service inplace --pid 1
nobody touch -d "1 minute ago" "$VTRACE_DIR/vtrace.inplace.1"
"$IOLENS" vstat --json 0.2 300 >"$T/inplace.json" 2>"$T/inplace.err" &
watcher=$!
on_exit "kill $watcher 2>/dev/null"
wait_until 60 lines_at_least "$T/inplace.json" 2
nobody sh -c 'cat "$1" >"$2"' sh "$VTRACE_DIR/elsewhere/vtrace.inplace.1" "$VTRACE_DIR/vtrace.inplace.1"
check "an empty old file of nobody's, then written in place: looked at again, said by the vstat that runs" \
	wait_until 60 grep -q 'vtrace.inplace.1: not shown: untrusted' "$T/inplace.err"
kill "$watcher"; wait "$watcher" 2>/dev/null
rm -f "$VTRACE_DIR/vtrace.inplace.1" "$VTRACE_DIR/elsewhere/vtrace.inplace.1"

# vstat with it all: the real server, exit 0; a junk file fails only a run that names it.
head -c 5000 /dev/urandom >"$T/garbage"
nobody cp "$T/garbage" "$VTRACE_DIR/vtrace.garbage.1"
nobody ln -s /etc/passwd "$VTRACE_DIR/vtrace.link.1"
run "$IOLENS" vstat --json
check_eq "vstat: the real server shown beside 41,000 files of nobody's" "real:root:live" "$(services "$OUT")"
check_eq "… nobody's junk said but failing nothing (exit 0)" 0 "$RC"
check_match "… said: the garbage file" "vtrace.garbage.1: bad magic" "$ERR"
check_match "… the link" "vtrace.link.1: a symbolic link: refused" "$ERR"
check_eq "… and no word of the empty files" 0 "$(grep -c 'vtrace\.\(junk\|more\|flood\)' <<<"$ERR")"
run "$IOLENS" vstat --json "$VTRACE_DIR/vtrace.garbage.1"
check_eq "vstat naming nobody's garbage file: exit 1" 1 "$RC"
run "$IOLENS" vstat --json real
check_eq "vstat real (a service named): exit 0, the server" "0 real:root:live" "$RC $(services "$OUT")"
find "$VTRACE_DIR" -name 'vtrace.junk*' -delete
find "$VTRACE_DIR" -name 'vtrace.more*' -delete
find "$VTRACE_DIR" -name 'vtrace.flood*' -delete
rm -f "$VTRACE_DIR"/vtrace.stale* "$VTRACE_DIR/vtrace.garbage.1" "$VTRACE_DIR/vtrace.link.1"

# ---- Descriptors: another user's never read when a server in a pid namespace is looked for -------
if unshare --pid --fork --mount-proc true 2>/dev/null; then
	mkfifo "$T/ns.in"
	unshare --pid --fork --mount-proc "$VTLOAD" nsrv OPA <"$T/ns.in" >"$T/ns.out" &
	on_exit "kill $! 2>/dev/null"
	exec {ns_in}>"$T/ns.in"
	wait_until 30 grep -q ready "$T/ns.out"
	echo "run OPA 3" >&$ns_in
	nobody touch "$VTRACE_DIR/vtrace.held.1"
	mkfifo "$T/hold"
	exec {hold}<>"$T/hold"
	holders=()
	for i in 1 2 3 4; do # 16,000 descriptors of a vtrace file, in processes whose pids may come first
		(ulimit -n 4100 && exec "${AS_NOBODY[@]}" bash -c 'for i in $(seq 4000); do exec {f}<"$1" || exit 1; done; echo held; read -r _' \
			sh "$VTRACE_DIR/vtrace.held.1" <"$T/hold" >>"$T/held" {hold}>&-) &
		holders+=($!)
		on_exit "kill $! 2>/dev/null"
	done
	check "nobody holds 16,000 descriptors of vtrace.held.1, in 4 processes" wait_until 60 sh -c "[ \$(grep -c held '$T/held') -ge 4 ]"
	held_pids="${holders[*]}" # (each subshell became the holder: exec, exec)
	shown=0
	for round in 1 2 3 4 5; do
		run "$IOLENS" vstat --json nsrv
		[ "$(services "$OUT")" = "nsrv:root:live" ] && shown=$((shown + 1))
	done
	check_eq "vstat: the server in a pid namespace (pid 1 there) shown live in every round" "5/5" "$shown/5"
	shown=0
	for round in 1 2 3; do
		answers && grep -q '^iolens_vtrace_requests_total{service="nsrv",.*op="OPA"} 3$' "$T/scrape" && shown=$((shown + 1))
	done
	check_eq "export: exported at every scrape" "3/3" "$shown/3"
	if [ -n "$have_strace" ] && [ -n "$held_pids" ]; then
		strace -f -qq -e trace=readlink,readlinkat,openat -o "$T/nstrace" "$IOLENS" vstat --json nsrv >/dev/null 2>&1
		read_theirs=0
		for p in $held_pids; do read_theirs=$((read_theirs + $(grep -c "/proc/$p/fd" "$T/nstrace"))); done
		check_eq "… looked for among root's processes only: none of nobody's descriptors read" 0 "$read_theirs"
		if [ "$read_theirs" != 0 ]; then
			for p in $held_pids; do grep "/proc/$p/fd" "$T/nstrace" | head -3; grep -E "^(Uid|State|Name)" /proc/$p/status; done | sed 's/^/# /'
		fi
	else
		skip "the descriptors read: needs strace"
	fi
	exec {hold}>&- {ns_in}>&-
	rm -f "$VTRACE_DIR/vtrace.held.1"
else
	skip "pid namespaces: unshare --pid is not allowed here"
fi

# ---- Room: three users' segments, each user its share; the exporter's memory bounded ------------
mkfifo "$T/room"
exec {room}<>"$T/room"
for u in 60001 60002 60003; do
	for i in 1 2 3; do
		as_uid "$u" "$VTFORGE" "$VTRACE_DIR/vtrace.big$u-$i.%p" --service big$u-$i --ops 1024 --sparse --hold \
			<"$T/room" >>"$T/room.ready" {room}>&- &
		on_exit "kill $! 2>/dev/null"
	done
	for i in 1 2 3 4; do
		as_uid "$u" "$VTFORGE" "$VTRACE_DIR/vtrace.small$u-$i.%p" --service small$u-$i --ops 64 --sparse --hold \
			<"$T/room" >>"$T/room.ready" {room}>&- &
		on_exit "kill $! 2>/dev/null"
	done
done
check "three users hold 21 segments (9 of 1024 ops) open" wait_until 60 sh -c "[ \$(grep -c ready '$T/room.ready') -ge 21 ]"
answers
answers
# Each user's share is a third of 1088 ops: its four of 64 ops fit (4 x 65), none of 1024 does.
per_user=$(py 'import re,sys
users = {}
for line in open(sys.argv[1]):
    m = re.match(r"iolens_vtrace_requests_total\{service=\"(small|big)[^\"]*\",pid=\"[0-9]+\",uid=\"(600\d\d)\"", line)
    if m: users.setdefault(m.group(2), set()).add(m.group(1) + line.split("service=\"")[1].split("\"")[0])
print(" ".join("%s:%d" % (u, sum(1 for s in users[u] if s.startswith("small"))) for u in sorted(users)))' "$T/scrape")
check_eq "export: every user's four small servers exported (each within its share)" "60001:4 60002:4 60003:4" "$per_user"
ops=$(grep -c '^iolens_vtrace_requests_total{service="\(small\|big\)' "$T/scrape")
check "… the ops exported of theirs within what the users share, 1088 ($ops)" test "$ops" -le 1088
check_match "… with their uid and user (a user without a name: its number)" \
	'^iolens_vtrace_requests_total\{service="small60002-1",pid="[0-9]+",uid="60002",user="60002",op="OP0"\} 0$' "$(cat "$T/scrape")"
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$exporter/status")
if [ "${SANITIZE:-}" = 1 ]; then
	skip "the exporter's peak memory: ASan's shadow and quarantine are not the plain build's ($hwm KiB)"
else
	check "… the exporter's peak memory bounded: ${hwm} KiB, under 100 MiB (each user's 3 x 1025 ops would be 170 MiB)" \
		test "$hwm" -lt $((100 * 1024))
fi
run "$IOLENS" vstat --json
check_eq "vstat: the same small servers, every user's" 12 \
	"$(py 'import json,sys; print(sum(s["service"].startswith("small") for s in json.loads(sys.argv[1])["services"]))' "$OUT")"
check_eq "… the big ones said, not failing the run (exit 0)" 0 "$RC"
check_match "… said with whose" "vtrace.big600[0-9]{2}-[0-9].[0-9]+: not read" "$ERR"
exec {room}>&-
wait_until 30 sh -c "! ls '$VTRACE_DIR' | grep -q '^vtrace\.\(big\|small\)'"

# ---- Whose: nobody's server under a root service's name -------------------------------------------
start ours rootsvc -- OPA
say ours "run OPA 4"
start theirs rootsvc "${AS_NOBODY[@]}" -- OPA
say theirs "hold OPA"
run "$IOLENS" vstat --json
check_eq "vstat: two servers named rootsvc, each with its user" "real:root:live rootsvc:nobody:live rootsvc:root:live" \
	"$(services "$OUT")"
run "$IOLENS" vstat rootsvc
check_match "… nobody's title says whose" "^rootsvc \(pid $theirs_pid, user nobody \(uid 65534\)\)" "$OUT"
check_match "… root's too" "^rootsvc \(pid $ours_pid, user root \(uid 0\)\)" "$OUT"
run "$IOLENS" vstat --csv -a rootsvc
check_match "… and its CSV rows" "^[0-9]+,rootsvc,$theirs_pid,65534,nobody,OPA," "$OUT"
answers
check_match "export: nobody's series say uid and user" \
	"^iolens_vtrace_in_flight\\{service=\"rootsvc\",pid=\"$theirs_pid\",uid=\"65534\",user=\"nobody\",op=\"OPA\"\\} 1$" "$(cat "$T/scrape")"
check_match "… root's too" \
	"^iolens_vtrace_requests_total\\{service=\"rootsvc\",pid=\"$ours_pid\",uid=\"0\",user=\"root\",op=\"OPA\"\\} 4$" "$(cat "$T/scrape")"
run "$IOLENS" doctor --json 1
check_eq "doctor: the hang found is nobody's server's, its user and uid said" "nobody 65534 $theirs_pid" \
	"$(dq get vtrace-hang user service rootsvc <<<"$OUT") $(dq get vtrace-hang uid service rootsvc <<<"$OUT") $(dq get vtrace-hang pid service rootsvc <<<"$OUT")"
run "$IOLENS" doctor 1
check_match "… in its text" "service rootsvc \(pid $theirs_pid\) of user nobody \(uid 65534\) is hung on OPA" "$OUT"

echo "1..$t_count"
