#!/usr/bin/env bash
# Runs every attack another local user or a network client can make on iolens run as root (bench's writes, the vtrace readers, export's authentication), each script's table in turn, and ends with their goals, met or not.
set -uo pipefail

usage="usage: ${0##*/}
  Needs root. Runs, one after the other, and prints what each prints:
    bench/bench-attacks.sh   what bench writes when nobody swaps its paths or writes its device
    bench/vtrace-junk.sh     vtrace readers' time and peak memory with other users' junk in /dev/shm
    bench/export-auth.sh     an authorised scrape's latency while clients send wrong passwords
  then their goal lines together. Exit status 1 when a goal is not met (or a script failed), else
  3 when one is undecided (its rounds disagree: bench/verdict.py).
env: IOLENS (default ./iolens), and each script's own (see their --help)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
[[ $# -eq 0 ]] || { echo "$usage" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "${0##*/}: needs root (the scripts it runs attack as nobody)" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

failed=0
for script in bench-attacks.sh vtrace-junk.sh export-auth.sh; do
	echo "==== $script"
	bash "$here/$script" 2>&1 | tee -a "$log"
	rc=${PIPESTATUS[0]}
	if [[ $rc == 3 ]]; then [[ $failed == 1 ]] || failed=3; elif [[ $rc != 0 ]]; then failed=1; fi
	echo
done
echo "==== goals"
grep -iE '^goal' "$log"
exit $failed
