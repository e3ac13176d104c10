#!/usr/bin/env bash
# Measures `iolens pcstat -R` against `vmtouch` on one directory tree (summary and per-file listing): median wall time, max RSS, ratio, and whether the resident page totals agree.
set -euo pipefail

usage="usage: ${0##*/} [DIR]   (default /usr; env: IOLENS=path to iolens, RUNS=runs per command, default 5)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
[[ $# -le 1 ]] || { echo "$usage" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
RUNS=${RUNS:-5}
dir=${1:-/usr}

die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ -x $IOLENS ]] || die "$IOLENS: not an executable (run make, or set IOLENS)"
command -v vmtouch >/dev/null || die "vmtouch not found (apt-get install -y vmtouch)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install -y time)"
[[ -d $dir ]] || die "$dir: not a directory"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS=$RUNS: not a positive integer"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The four measured commands, by name: set_argv NAME puts the command line in $argv.
names=(iolens_summary vmtouch_summary iolens_listing vmtouch_listing)
set_argv() {
	case $1 in
	iolens_summary) argv=("$IOLENS" pcstat -R --summary "$dir") ;;
	vmtouch_summary) argv=(vmtouch "$dir") ;;
	iolens_listing) argv=("$IOLENS" pcstat -R "$dir") ;;
	vmtouch_listing) argv=(vmtouch -v "$dir") ;;
	esac
}
describe() {
	case $1 in
	iolens_summary) echo "iolens pcstat -R --summary $dir" ;;
	vmtouch_summary) echo "vmtouch $dir" ;;
	iolens_listing) echo "iolens pcstat -R $dir > /dev/null" ;;
	vmtouch_listing) echo "vmtouch -v $dir > /dev/null" ;;
	esac
}

# Microseconds since the epoch, from bash's own clock: no fork, whatever the locale's decimal point.
now_us() { local t=$EPOCHREALTIME; echo "${t/[.,]/}"; }

# One timed run: appends the wall time (us) to $work/NAME.us and the max RSS (KiB) to $work/NAME.rss.
# stdout and stderr go to files (vmtouch warns on stderr once per symbolic link), never to a terminal.
measure() {
	local name=$1 start end status=0 argv
	set_argv "$name"
	start=$(now_us)
	/usr/bin/time -f %M -o "$work/$name.time" "${argv[@]}" >/dev/null 2>"$work/$name.stderr" || status=$?
	end=$(now_us)
	echo $((end - start)) >>"$work/$name.us"
	tail -n 1 "$work/$name.time" >>"$work/$name.rss"
	if [[ $status -ne 0 ]]; then
		echo "warning: $(describe "$name") exited with status $status" >&2
		if [[ $name == iolens_* ]]; then head -n 3 "$work/$name.stderr" >&2; fi
	fi
}

median_us() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%d", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
max_kib() { sort -n "$1" | tail -n 1; }
seconds() { awk -v us="$1" 'BEGIN { printf "%.3f", us / 1e6 }'; }
mib() { awk -v kib="$1" 'BEGIN { printf "%.1f", kib / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else printf "-" }'; }

echo "pcstat-tree: $dir, $RUNS runs per command, alternating; iolens = $IOLENS ($("$IOLENS" --version 2>/dev/null | head -n 1))"
echo "wall time is measured around /usr/bin/time (which gives max RSS), and includes process start"

# Warm-up: one unmeasured run of each command, so both tools find the same dentry, inode and page cache.
for name in "${names[@]}"; do
	set_argv "$name"
	"${argv[@]}" >/dev/null 2>&1 || true
done

for ((run = 1; run <= RUNS; run++)); do
	for name in "${names[@]}"; do measure "$name"; done
done

echo
printf '%-10s %-8s %9s %12s  %s\n' comparison tool "median s" "max RSS MiB" command
for kind in summary listing; do
	for tool in iolens vmtouch; do
		name=${tool}_$kind
		printf '%-10s %-8s %9s %12s  %s\n' "$kind" "$tool" "$(seconds "$(median_us "$work/$name.us")")" \
			"$(mib "$(max_kib "$work/$name.rss")")" "$(describe "$name")"
	done
done
echo
echo "ratios, vmtouch / iolens (above 1: iolens is faster or smaller):"
printf '%-10s %-8s %s\n' comparison time "max RSS"
for kind in summary listing; do
	printf '%-10s %-8s %s\n' "$kind" \
		"$(ratio "$(median_us "$work/vmtouch_$kind.us")" "$(median_us "$work/iolens_$kind.us")")" \
		"$(ratio "$(max_kib "$work/vmtouch_$kind.rss")" "$(max_kib "$work/iolens_$kind.rss")")"
done
echo
for kind in summary listing; do
	for tool in iolens vmtouch; do
		printf 'all runs (s) %-16s' "${tool}_$kind:"
		awk '{ printf " %.3f", $1 / 1e6 } END { print "" }' "$work/${tool}_$kind.us"
	done
done

# Agreement: iolens's TOTAL against vmtouch's "Resident Pages: X/Y", taken one right after the other.
# The system is live (reclaim, other processes), so a few pages may move between the two; 0.1 % is allowed.
iolens_total=$("$IOLENS" pcstat -R --summary --csv --no-header -o pages,cached "$dir" 2>/dev/null) || true
vmtouch_out=$(vmtouch "$dir" 2>/dev/null) || true
IFS=, read -r iolens_pages iolens_cached <<<"$iolens_total"
read -r vmtouch_cached vmtouch_pages < <(awk '/Resident Pages:/ { split($3, v, "/"); print v[1], v[2] }' <<<"$vmtouch_out")
for v in iolens_pages iolens_cached vmtouch_pages vmtouch_cached; do
	[[ ${!v:-} =~ ^[0-9]+$ ]] || die "could not read $v (iolens: '$iolens_total'; vmtouch: '$(grep 'Resident Pages' <<<"$vmtouch_out")')"
done

mismatch=0
compare() { # LABEL IOLENS_VALUE VMTOUCH_VALUE
	local verdict
	verdict=$(awk -v a="$2" -v b="$3" 'BEGIN {
		d = a - b; ad = d < 0 ? -d : d; big = a > b ? a : b
		pct = big > 0 ? 100 * ad / big : 0
		if (d == 0) printf "MATCH (identical)"
		else if (pct <= 0.1) printf "MATCH (diff %+d pages = %.4f %%, within the 0.1 %% allowed for a live system)", d, pct
		else printf "MISMATCH (diff %+d pages = %.4f %%, more than the 0.1 %% allowed)", d, pct
	}')
	printf '%-14s iolens %12s  vmtouch %12s  %s\n' "$1" "$2" "$3" "$verdict"
	[[ $verdict == MATCH* ]] || mismatch=1
}
echo
echo "resident pages (iolens TOTAL vs vmtouch \"Resident Pages: X/Y\", taken back to back):"
compare "cached pages" "$iolens_cached" "$vmtouch_cached"
compare "total pages" "$iolens_pages" "$vmtouch_pages"
exit "$mismatch"
