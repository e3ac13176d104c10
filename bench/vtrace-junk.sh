#!/usr/bin/env bash
# Times root's vtrace readers (iolens export's scrapes, vstat, doctor 1) and their peak memory without and with what other users leave in /dev/shm: 400,000 empty files and 1,024 stale segments, 48,000 descriptors held beside a server in a pid namespace, five users' segments and files; prints whether the goals are met.
set -uo pipefail

usage="usage: ${0##*/}
  Needs root. Mounts a tmpfs of its own (2 GiB at most) as VTRACE_DIR, starts a real libvtrace
  server (vtload, root), and measures each reader without, then with, each attack:
    junk         nobody makes 400,000 empty vtrace.* files and 1,024 stale segments
    descriptors  a server runs in a pid namespace (unshare -pf); nobody holds 48,000
                 descriptors of a vtrace.* file in 12 processes
    users        five users (uids 60001-60005) each hold 4 segments of 1024 ops and 16 of
                 64 ops open, and make 80,000 empty files
  Readers: a running iolens export scraped SCRAPES times over HTTP (the first scrape, and the
  median of the others: the steady state), iolens vstat --json (median of RUNS) and iolens
  doctor 1, each with its peak resident memory (VmHWM; /usr/bin/time's maximum RSS), and
  whether every real server was shown. With junk accumulating, the exporter started before
  the junk is scraped again too (a long-running one).
  Goals: a steady scrape with the 400,000 files at most 2x one without, judged by bench/verdict.py
  on each steady scrape's own ratio (the Nth with junk over the Nth without): met when they agree
  (4 of 5; spread (max - min) / median within 10 % or their margin to the limit), NOT met when they
  agree it is missed, else undecided; the exporter under 64 MiB with the five users' (its peak
  memory, one figure). Exit status 1 when a goal is not met or a real server was not shown, else
  3 when one is undecided.
env: IOLENS (default ./iolens), RUNS (default 3), SCRAPES (default 12), PORT (default 19731)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
[[ $# -eq 0 ]] || { echo "$usage" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "${0##*/}: needs root (the hostile users, the tmpfs, the pid namespace)" >&2; exit 2; }
for tool in curl setpriv unshare /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "${0##*/}: needs $tool" >&2; exit 2; }
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
RUNS=${RUNS:-3}
SCRAPES=${SCRAPES:-12}
PORT=${PORT:-19731}
BUILD=${BUILD:-$repo/build}
# make names its targets as the Makefile spells them: relative to the repository.
make -s -C "$repo" all "${BUILD#"$repo"/}/tests/helpers/vtload" "${BUILD#"$repo"/}/tests/helpers/vtforge" >/dev/null || exit 1
VTLOAD=$BUILD/tests/helpers/vtload VTFORGE=$BUILD/tests/helpers/vtforge

work=$(mktemp -d "${TMPDIR:-/tmp}/vtrace-junk.XXXXXX")
chmod 755 "$work"
export VTRACE_DIR=$work/shm
mkdir "$VTRACE_DIR"
mount -t tmpfs -o size=2g,nr_inodes=2m,mode=1777 vtrace-junk "$VTRACE_DIR" || exit 1
mkfifo "$work/hold"
exec {keep}<>"$work/hold" # what holds files open lives until this, its stdin's only writer, closes
pids=()
cleanup() {
	exec {keep}>&-
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	umount -l "$VTRACE_DIR"
	rm -rf "$work"
}
trap cleanup EXIT
nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
as_uid() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }

# A real server of root's; SERVERS lists the services every reader must show.
mkfifo "$work/real.in"
"$VTLOAD" real OPA OPB <"$work/real.in" >"$work/real.out" &
pids+=($!)
exec {real}>"$work/real.in"
echo "run OPA 1000" >&$real
SERVERS="real"
for _ in $(seq 100); do ls "$VTRACE_DIR" | grep -q '^vtrace\.real\.' && break; sleep 0.05; done

# Each reader measured; a line of results per reader: NAME SECONDS PEAK_KB SHOWN (runs that
# showed every service of SERVERS / runs). FIRST_S: the exporter's first scrape.
exporter_start() { # exporter_start: EXPORTER is its pid, once it answers
	"$IOLENS" export --listen "127.0.0.1:$PORT" 2>>"$work/export.err" &
	EXPORTER=$!
	pids+=($EXPORTER)
	for _ in $(seq 200); do # listening: a connection, without a request (a scrape would be the first)
		(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
		sleep 0.05
	done
}
shows_all() { # shows_all FILE: every service of SERVERS in it (metrics or vstat JSON)
	local s
	for s in $SERVERS; do grep -qE "service=\"$s\"|\"service\":\"$s\",[^}]*\"state\":\"live\"" "$1" || return 1; done
}
scrapes() { # scrapes: SCRAPES scrapes of EXPORTER: SCRAPED is "steady_s peak_kb shown/n", FIRST_S the first's
	local times=() t shown=0
	for i in $(seq "$SCRAPES"); do
		t=$(curl -s -o "$work/scrape" -w '%{time_total}' --max-time 60 "http://127.0.0.1:$PORT/metrics")
		times+=("$t")
		shows_all "$work/scrape" && shown=$((shown + 1))
	done
	FIRST_S=${times[0]}
	STEADY_TIMES="${times[*]:2}"
	SCRAPED="$(printf '%s\n' "${times[@]:2}" | median) $(awk '/^VmHWM/ { print $2 }' "/proc/$EXPORTER/status") $shown/$SCRAPES"
}
one_shot() { # one_shot RUNS CMD...: "median_s peak_kb shown/n" ("-": doctor names no server that is well)
	local n=$1 times=() peak=0 shown=0 t0 kb; shift
	for _ in $(seq "$n"); do
		t0=$EPOCHREALTIME
		/usr/bin/time -f '%M' -o "$work/time" "$@" >"$work/out" 2>/dev/null
		times+=("$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.4f", b - a }')")
		kb=$(tail -1 "$work/time")
		[[ $kb -gt $peak ]] && peak=$kb
		shows_all "$work/out" && shown=$((shown + 1))
	done
	[[ $2 == doctor ]] && shown=- n=
	echo "$(printf '%s\n' "${times[@]}" | median) $peak $shown${n:+/$n}"
}
# measure LABEL: every reader; results in R_<reader> as "seconds peak_kb shown" (and R_first).
measure() {
	exporter_start
	scrapes
	R_export=$SCRAPED
	R_first=$FIRST_S
	R_steady=$STEADY_TIMES
	kill "$EXPORTER"; wait "$EXPORTER" 2>/dev/null
	R_vstat=$(one_shot "$RUNS" "$IOLENS" vstat --json)
	R_doctor=$(one_shot 1 "$IOLENS" doctor --json 1)
	if [[ $1 == without ]]; then
		B_export=$R_export B_first=$R_first B_vstat=$R_vstat B_doctor=$R_doctor B_steady=$STEADY_TIMES
	fi
}
status=0
printf '%-12s %-22s %10s %10s %7s %9s %9s %7s\n' attack reader "without/ms" "with/ms" ratio "peak0/MiB" "peak/MiB" shown
row() { # row ATTACK READER "WITHOUT" "WITH": WITHOUT and WITH are "seconds peak_kb shown"
	local w0 p0 w1 p1 shown ratio
	read -r w0 p0 _ <<<"$3"
	read -r w1 p1 shown <<<"$4"
	ratio=$(awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')
	printf '%-12s %-22s %10s %10s %7s %9d %9d %7s\n' "$1" "$2" "$(ms "$w0")" "$(ms "$w1")" "$ratio" $((p0 / 1024)) \
		$((p1 / 1024)) "$shown"
	[[ $shown == - || ${shown%/*} == "${shown#*/}" ]] || { echo "  NOT every real server shown ($SERVERS)"; status=1; }
}
rows() { # rows ATTACK: each reader's row against the measure without
	row "$1" "export scrape (steady)" "$B_export" "$R_export"
	row "$1" "export scrape (first)" "$B_first 0 -" "$R_first ${R_export#* }"
	row "$1" "vstat --json" "$B_vstat" "$R_vstat"
	row "$1" "doctor 1" "$B_doctor" "$R_doctor"
}

measure without
# A long-running exporter, started before the junk: scraped again once it is there.
exporter_start
LONG=$EXPORTER
scrapes

# ---- junk: 400,000 empty files, 1,024 stale segments ----------------------------------------
"${nobody[@]}" sh -c 'cd "$1" && seq -f "vtrace.junk%.0f.1" 1 400000 | xargs touch' sh "$VTRACE_DIR"
"${nobody[@]}" sh -c 'for i in $(seq 1024); do "$1" "$2/vtrace.stale$i.%p" --service stale$i --ops 2 >/dev/null; done' sh \
	"$VTFORGE" "$VTRACE_DIR"
echo "junk: $(ls -f "$VTRACE_DIR" | grep -c '^vtrace\.') vtrace.* files"
EXPORTER=$LONG
scrapes
R_long=$SCRAPED
R_long_first=$FIRST_S
kill "$LONG"; wait "$LONG" 2>/dev/null
measure with
rows junk
row junk "export, running before" "$B_export" "$R_long"
row junk "  its first after junk" "$B_first 0 -" "$R_long_first ${R_long#* }"
steady0=$(cut -d' ' -f1 <<<"$B_export") steady=$(cut -d' ' -f1 <<<"$R_export")
figures=$(paste -d' ' <(tr ' ' '\n' <<<"$R_steady") <(tr ' ' '\n' <<<"$B_steady") |
	awk 'NF == 2 { if ($2 > 0) printf "%.4f ", $1 / $2; else printf "nan " }')
# shellcheck disable=SC2086 # one figure a steady scrape
verdict=$(python3 "$repo/bench/verdict.py" --format %.2f '<= 2' $figures) && rc=0 || rc=$?
[[ $rc == [013] ]] || { echo "${0##*/}: bench/verdict.py failed: $verdict" >&2; exit 2; }
echo "goal: a steady scrape with 400,000 junk files at most 2x one without (medians $(ms "$steady") ms, $(ms "$steady0") ms;" \
	"each steady scrape's with / without): $verdict"
((rc != 1)) || status=1
((rc != 3 || status == 1)) || status=3
find "$VTRACE_DIR" -name 'vtrace.junk*' -delete
find "$VTRACE_DIR" -name 'vtrace.stale*' -delete

# ---- descriptors: a server in a pid namespace, 48,000 descriptors of nobody's ----------------
mkfifo "$work/ns.in"
unshare -pf --mount-proc "$VTLOAD" nsreal OPA <"$work/ns.in" >"$work/ns.out" &
pids+=($!)
exec {ns}>"$work/ns.in"
echo "run OPA 10" >&$ns
for _ in $(seq 100); do grep -q ready "$work/ns.out" && break; sleep 0.05; done
SERVERS="real nsreal"
measure without
"${nobody[@]}" touch "$VTRACE_DIR/vtrace.held.1"
for _ in $(seq 12); do
	(ulimit -n 4100 && exec "${nobody[@]}" bash -c 'for i in $(seq 4000); do exec {f}<"$1" || exit 1; done; echo held; read -r _' \
		sh "$VTRACE_DIR/vtrace.held.1" <"$work/hold" >>"$work/held" {keep}>&-) &
	pids+=($!)
done
for _ in $(seq 200); do [[ $(grep -c held "$work/held" 2>/dev/null) -ge 12 ]] && break; sleep 0.05; done
echo "descriptors: $(grep -c held "$work/held") processes of nobody's hold $(( $(grep -c held "$work/held") * 4000 )) descriptors of vtrace.held.1; nsreal runs as pid 1 in its pid namespace"
measure with
rows descriptors
exec {ns}>&-
SERVERS="real"

# ---- users: five users' segments (4 x 1024 ops, 16 x 64 ops held open each) and files -----------
measure without
for u in 60001 60002 60003 60004 60005; do
	for i in 1 2 3 4; do
		as_uid "$u" "$VTFORGE" "$VTRACE_DIR/vtrace.big$u-$i.%p" --service big$u-$i --ops 1024 --sparse --hold \
			<"$work/hold" >/dev/null {keep}>&- &
		pids+=($!)
	done
	for i in $(seq 16); do
		as_uid "$u" "$VTFORGE" "$VTRACE_DIR/vtrace.small$u-$i.%p" --service small$u-$i --ops 64 --sparse --hold \
			<"$work/hold" >/dev/null {keep}>&- &
		pids+=($!)
	done
	as_uid "$u" sh -c 'cd "$1" && seq -f "vtrace.u$2-%.0f.1" 1 80000 | xargs touch' sh "$VTRACE_DIR" "$u"
done
for _ in $(seq 200); do [[ $(ls -f "$VTRACE_DIR" | grep -c '^vtrace\.\(big\|small\)') -ge 100 ]] && break; sleep 0.05; done
sleep 0.5
echo "users: 5 users, each with 4 segments of 1024 ops and 16 of 64 held open, and 80,000 empty files"
measure with
rows users
peak=$(cut -d' ' -f2 <<<"$R_export")
if [[ $peak -lt $((64 * 1024)) ]]; then
	echo "goal: the exporter under 64 MiB with five users' segments and files ($((peak / 1024)) MiB): met" # peak memory: not timed
else
	echo "goal: the exporter under 64 MiB with five users' segments and files ($((peak / 1024)) MiB): NOT MET" # not timed
	status=1
fi
exit $status
