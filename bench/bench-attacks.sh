#!/usr/bin/env bash
# Runs the attacks another user can make on what iolens bench writes as root, and prints for each what got written besides bench's own file or device.
set -uo pipefail

usage="usage: ${0##*/} [ROUNDS]
  Needs root. As nobody, in directories of nobody's under a scratch directory: swaps the test
  file, an existing file, the directory and a device link for links to root's file, directory or
  ext4 device while root's bench sweeps; flips a name and a device link as fast as it can while
  root runs bench ROUNDS times (default 20); writes an ext4 header onto the device bench writes
  during a sequential and a random point; and kills a run to leave a named test file behind.
  Prints, per attack, bench's exit statuses, what was written outside bench's own file or the
  device named (md5sum of root's file and device, names and times of root's directory), and
  whether bench said so. Goal: nothing written outside. Exit status 1 when something was.
env: IOLENS (default ./iolens), TMPDIR (the scratch directory's parent: a disk, not tmpfs)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
ROUNDS=${1:-20}
[[ $ROUNDS =~ ^[0-9]+$ ]] || { echo "$usage" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "${0##*/}: needs root (the attacker is nobody; loop devices)" >&2; exit 2; }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
[[ -x $IOLENS ]] || { echo "${0##*/}: $IOLENS: not built (make)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/var/tmp}/bench-attacks.XXXXXX")
chmod 755 "$work"
loops=()
cleanup() {
	touch "$work"/*/stop "$work"/nl/disk.stop 2>/dev/null
	wait 2>/dev/null
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
sum() { md5sum <"$1" | cut -c 1-32; }
theirs() { mkdir -p "$work/$1" && chown nobody:nogroup "$work/$1"; }
R=$work/root
mkdir -p "$R"
head -c 1M /dev/urandom >"$R/victim"
root_state() { echo "$(sum "$R/victim") $(stat -c '%n %y' "$R" "$R"/*)"; }
before=$(root_state)
SWEEP=(--rw write --bs 4k-64k --size 2m --time-based --runtime 0.3 --interval 0.1)
bad=0

# report ATTACK STATUSES OUTSIDE SAID
report() {
	printf '%-52s %-22s %-26s %s\n' "$1" "$2" "$3" "$4"
	[[ $3 == none ]] || bad=1
}
outside() { # what of root's changed since the start
	local now
	now=$(root_state)
	if [[ $now == "$before" ]]; then echo none; else before=$now; echo "ROOT'S FILE OR DIRECTORY"; fi
}
# mid_sweep OUT CMD...: starts bench, waits for its first interval line, and leaves it running as $pid.
mid_sweep() {
	local out=$1
	shift
	rm -f "$out" # not the last run's lines: the redirection below happens in the child, later
	"$IOLENS" bench "$@" >"$out" 2>"$out.err" &
	pid=$!
	while [[ ! -s $out ]] && kill -0 $pid 2>/dev/null; do sleep 0.02; done
}

# rounds ARGS...: bench ARGS run ROUNDS times; how many exited with each status ("11x0,9x1").
rounds() {
	for _ in $(seq "$ROUNDS"); do
		"$IOLENS" bench "$@" >/dev/null 2>&1
		echo $?
	done | sort | uniq -c | awk '{ printf "%s%sx%s", s, $1, $2; s = "," }'
}

printf '%-52s %-22s %-26s %s\n' ATTACK "BENCH EXIT" "WRITTEN OUTSIDE" "SAID"
theirs nd
mid_sweep "$work/a1" "${SWEEP[@]}" "$work/nd"
made=$(cd "$work/nd" && ls -d iolens-bench.* | head -n 1)
nobody sh -c "mv '$work/nd/$made' '$work/nd/away' && ln -s '$R/victim' '$work/nd/$made'"
wait $pid
report "test file swapped for a link to root's file" "$?" "$(outside)" \
	"$(grep -q 'moved or replaced' "$work/a1.err" && echo yes || echo no)"

theirs nd2
nobody sh -c "head -c 2M /dev/urandom >'$work/nd2/data'"
mid_sweep "$work/a2" --force "${SWEEP[@]}" "$work/nd2/data"
nobody sh -c "mv '$work/nd2/data' '$work/nd2/data.away' && ln -s '$R/victim' '$work/nd2/data'"
wait $pid
report "existing file (--force) swapped for a link" "$?" "$(outside)" "-"

theirs np
nobody mkdir "$work/np/d"
mid_sweep "$work/a3" "${SWEEP[@]}" "$work/np/d"
nobody sh -c "mv '$work/np/d' '$work/np/d.away' && ln -s '$R' '$work/np/d'"
wait $pid
report "directory swapped for a link to root's" "$?" "$(outside)" "-"

theirs race
nobody sh -c "head -c 256K /dev/urandom >'$work/race/file' && ln -s '$R/victim' '$work/race/link'"
nobody sh -c "cd '$work/race' && while [ ! -e stop ]; do mv -T file f; mv -T f file; mv -T link f; mv -T f link; done 2>/dev/null" &
flipper=$!
codes=$(rounds --force --rw write --bs 64k --size 256k "$work/race/f")
touch "$work/race/stop"
wait $flipper
report "name flipped file/link, $ROUNDS runs" "$codes" "$(outside)" "-"

A=$(truncate -s 8M "$work/a.img" && losetup -f --show "$work/a.img") && loops+=("$A")
B=$(truncate -s 8M "$work/b.img" && losetup -f --show "$work/b.img") && loops+=("$B")
if [[ -n ${A:-} && -n ${B:-} ]]; then
	chown nobody "$A"
	mkfs.ext4 -q -F "$B" >/dev/null 2>&1
	b_sum=$(sum "$B")
	device_outside() { if [[ $(sum "$B") == "$b_sum" ]]; then echo none; else b_sum=$(sum "$B"); echo "ROOT'S EXT4 DEVICE"; fi; }
	theirs nl
	nobody ln -s "$A" "$work/nl/disk"
	mid_sweep "$work/a4" --force "${SWEEP[@]}" "$work/nl/disk"
	nobody ln -sfn "$B" "$work/nl/disk"
	wait $pid
	report "device link flipped to root's ext4 device" "$?" "$(device_outside)" "-"
	nobody sh -c "while [ ! -e '$work/nl/disk.stop' ]; do ln -sfn '$A' '$work/nl/d.new' && mv -T '$work/nl/d.new' '$work/nl/disk'; ln -sfn '$B' '$work/nl/d.new' && mv -T '$work/nl/d.new' '$work/nl/disk'; done 2>/dev/null" &
	flipper=$!
	codes=$(rounds --force --rw write --bs 64k --size 1m "$work/nl/disk")
	touch "$work/nl/disk.stop"
	wait $flipper
	report "device link flipping, $ROUNDS runs" "$codes" "$(device_outside)" "-"
	truncate -s 4M "$work/fs.img" && mkfs.ext4 -q -F "$work/fs.img" >/dev/null 2>&1
	for rw in write randwrite; do
		wipefs -qa "$A" >/dev/null 2>&1
		mid_sweep "$work/a5" --force --rw $rw --bs 64k --size 4m --time-based --runtime 2 --interval 0.1 "$A"
		nobody dd if="$work/fs.img" of="$A" bs=64k count=1 oflag=direct conv=notrunc status=none
		wait $pid
		rc=$?
		# Written outside: the filesystem nobody wrote, overwritten by bench and not said.
		said=$(grep -qE "another process wrote|appeared on it during the run" "$work/a5.err" && echo yes || echo no)
		report "ext4 header written onto the device, --rw $rw" "$rc" \
			"$([[ $said == yes ]] && echo none || echo "ITS FILESYSTEM, UNSAID")" "$said"
	done
else
	echo "(no loop devices: the device attacks are left out)"
fi

"$IOLENS" bench --rw write --bs 64k --size 8m --time-based --runtime 60 --interval 0.2 "$work/mine.dat" >"$work/k" 2>/dev/null &
pid=$!
while [[ ! -s $work/k ]] && kill -0 $pid 2>/dev/null; do sleep 0.02; done
kill -9 $pid
wait $pid 2>/dev/null
"$IOLENS" bench --bs 64k --size 1m "$work/mine.dat" >/dev/null 2>"$work/k.err"
rc=$?
report "named test file left by kill -9, run again" "$rc" "$(outside)" \
	"$(grep -q 'an earlier run left' "$work/k.err" && echo yes || echo no)"

echo "goal: nothing written outside bench's own file or device: $([[ $bad == 0 ]] && echo met || echo NOT MET)" # a count of writes: not timed
exit $bad
