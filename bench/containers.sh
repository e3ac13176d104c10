#!/usr/bin/env bash
# Measures what naming containers costs cachetop: N busy shells, each in a cgroup named as docker names a container's (with its config.v2.json), against the same shells in cgroups that are no container's: cachetop's CPU time and its rows, each way.
set -euo pipefail

usage="usage: ${0##*/} [--containers N] [--intervals K]
  Makes N cgroups under the cgroup2 mount (removed at the end), a shell in each that reads a
  small cached file with cat every 0.1 s (a new process each time: rows that come and go), and
  runs 'iolens cachetop --json 1 K' twice: once with the cgroups named docker-ID.scope, their
  config.v2.json under a root IOLENS_CONTAINER_ROOT points at, once named plain-I.scope. Reports
  for each: cachetop's user + system CPU seconds (/usr/bin/time), the rows it printed and how
  many named a container; and the ratio of the CPU times (the goal: each cgroup resolved once,
  so the cost of naming stays a small part of cachetop's own).
N: default 100. K: default 10. env: IOLENS (default ./iolens of this repository)."

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
N=100 K=10
while (($#)); do
	case $1 in
	-h | --help) echo "$usage"; exit 0 ;;
	--containers) N=${2:?"$usage"}; shift 2 ;;
	--intervals) K=${2:?"$usage"}; shift 2 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "making cgroups and cachetop's eBPF need root"
[[ -x $IOLENS ]] || die "$IOLENS: not an executable (run make, or set IOLENS)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is needed (make test-deps installs it)"
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[[ -n $cg2 ]] || die "no cgroup2 mount"

work=$(mktemp -d /var/tmp/iolens-bench-containers.XXXXXX)
slice=$cg2/iolens-bench-$$.slice
shells=()
cleanup() {
	local d
	for s in "${shells[@]}"; do kill "$s" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for d in "$slice"/*/; do [[ -d $d ]] && rmdir "$d" 2>/dev/null || true; done
	[[ -d $slice ]] && rmdir "$slice" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
mkdir "$slice"
head -c 65536 /dev/urandom >"$work/small"

# run NAMING: N shells in cgroups named as NAMING says (docker, or plain), cachetop over K intervals.
run() {
	local naming=$1 i id dir
	shells=()
	for ((i = 0; i < N; i++)); do
		id=$(printf '%s-%d-%d' "$naming" $$ "$i" | sha256sum | cut -c1-64)
		if [[ $naming == docker ]]; then
			dir=$slice/docker-$id.scope
			mkdir -p "$work/root/var/lib/docker/containers/$id"
			printf '{"ID":"%s","Name":"/app-%d"}\n' "$id" "$i" >"$work/root/var/lib/docker/containers/$id/config.v2.json"
		else
			dir=$slice/plain-$i.scope
		fi
		mkdir "$dir"
		sh -c 'echo $$ >"$1/cgroup.procs"; while :; do cat "$2" >/dev/null; sleep 0.1; done' sh "$dir" "$work/small" &
		shells+=($!)
	done
	sleep 1
	IOLENS_CONTAINER_ROOT=$work/root /usr/bin/time -f '%U %S' -o "$work/time" "$IOLENS" cachetop --json 1 "$K" \
		>"$work/$naming.json" 2>"$work/$naming.err"
	for s in "${shells[@]}"; do kill "$s" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for dir in "$slice"/*/; do rmdir "$dir" 2>/dev/null || true; done
	read -r user sys <"$work/time"
	read -r rows named < <(python3 -c 'import json, sys
rows = [r for l in open(sys.argv[1]) if l.strip() for r in json.loads(l)["processes"]]
print(len(rows), sum(1 for r in rows if r.get("container")))' "$work/$naming.json")
	mode=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["mode"])' "$work/$naming.json")
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
	printf '%-8s cachetop (%s) %d intervals: CPU %s s (user %s, system %s), %d rows, %d named a container\n' \
		"$naming" "$mode" "$K" "$cpu" "$user" "$sys" "$rows" "$named"
	eval "cpu_$naming=$cpu"
}

echo "$N shells, each in a cgroup of its own, reading a cached file every 0.1 s ($(uname -r), $(nproc) cpus)"
run plain
run docker
awk -v d="$cpu_docker" -v p="$cpu_plain" 'BEGIN {
	if (p > 0) printf "ratio: containers named / not: %.2f (%.2f s more CPU over the run)\n", d / p, d - p
	else print "ratio: unknown (no CPU time measured without containers)"
}'
