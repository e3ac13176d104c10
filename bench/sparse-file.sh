#!/usr/bin/env bash
# Measures `iolens pcstat` (plain and --map) against vmtouch and fincore on a 1 TiB sparse file with nothing cached: wall time, max RSS, ratios, and that all agree.
set -euo pipefail

usage="usage: ${0##*/}   (env: IOLENS=path to iolens, RUNS=iolens runs, default 11, PEER_RUNS=vmtouch and fincore runs, default 2)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
[[ $# -eq 0 ]] || { echo "$usage" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOLENS=${IOLENS:-$repo/iolens}
RUNS=${RUNS:-11}
PEER_RUNS=${PEER_RUNS:-2}
size_pages=268435456 # 1 TiB in 4 KiB pages

die() { echo "${0##*/}: $*" >&2; exit 1; }
[[ -x $IOLENS ]] || die "$IOLENS: not an executable (run make, or set IOLENS)"
command -v vmtouch >/dev/null || die "vmtouch not found (apt-get install -y vmtouch)"
command -v fincore >/dev/null || die "fincore not found (apt-get install -y util-linux)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install -y time)"
[[ $RUNS =~ ^[1-9][0-9]*$ && $PEER_RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS and PEER_RUNS must be positive integers"
[[ $(getconf PAGESIZE) -eq 4096 ]] || die "page size $(getconf PAGESIZE): the expected page count assumes 4096"

# The file must live on a real filesystem like the repository's, not on tmpfs: use $TMPDIR (or /tmp)
# only if it is on the repository's filesystem, else a hidden directory in the repository.
base=${TMPDIR:-/tmp}
if [[ $(stat -f -c %T "$base") == tmpfs || $(stat -c %d "$base") != $(stat -c %d "$repo") ]]; then
	base=$repo
fi
work=$(mktemp -d -p "$base" .iolens-sparse-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
file=$work/sparse-1T
truncate -s 1T "$file"

# Microseconds since the epoch, from bash's own clock: no fork, whatever the locale's decimal point.
now_us() { local t=$EPOCHREALTIME; echo "${t/[.,]/}"; }

# set_argv NAME puts the command line of a measured command in $argv.
names=(iolens iolens_map vmtouch fincore true)
set_argv() {
	case $1 in
	iolens) argv=("$IOLENS" pcstat "$file") ;;
	iolens_map) argv=("$IOLENS" pcstat --map "$file") ;;
	vmtouch) argv=(vmtouch "$file") ;;
	fincore) argv=(fincore "$file") ;;
	true) argv=(/bin/true) ;; # the floor: starting a process at all
	esac
}
describe() { local argv; set_argv "$1"; echo "${argv[*]/#"$work"/TMP}"; }

# Wall time of one bare run (no /usr/bin/time: its own fork and exec would be most of a 1 ms run),
# appended in us to $work/NAME.us; stdout is kept in $work/NAME.out for the agreement check.
time_bare() {
	local name=$1 start end argv
	set_argv "$name"
	start=$(now_us)
	"${argv[@]}" >"$work/$name.out" 2>"$work/$name.err" || die "$(describe "$name") failed: $(head -n 3 "$work/$name.err")"
	end=$(now_us)
	echo $((end - start)) >>"$work/$name.us"
}
# One run under /usr/bin/time: max RSS in KiB to $work/NAME.rss, and, for the runs of seconds, the wall time too.
time_with_rss() {
	local name=$1 record_time=$2 start end argv
	set_argv "$name"
	start=$(now_us)
	/usr/bin/time -f %M -o "$work/$name.time" "${argv[@]}" >"$work/$name.out" 2>"$work/$name.err" ||
		die "$(describe "$name") failed: $(head -n 3 "$work/$name.err")"
	end=$(now_us)
	[[ $record_time == no ]] || echo $((end - start)) >>"$work/$name.us"
	tail -n 1 "$work/$name.time" >>"$work/$name.rss"
}

median_us() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%d", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
max_kib() { sort -n "$1" | tail -n 1; }
ms() { awk -v us="$1" 'BEGIN { printf "%.1f", us / 1e3 }'; }
mib() { awk -v kib="$1" 'BEGIN { printf "%.1f", kib / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else printf "-" }'; }

fstype=$(findmnt -n -o FSTYPE -T "$work" 2>/dev/null || stat -f -c %T "$work")
echo "sparse-file: 1 TiB sparse file on $fstype ($(du -k "$file" | cut -f1) KiB allocated)," \
	"iolens = $IOLENS ($("$IOLENS" --version 2>/dev/null | head -n 1))"
echo "iolens: $RUNS timed runs each (median) + 3 runs under /usr/bin/time for RSS; vmtouch, fincore: $PEER_RUNS runs each under /usr/bin/time (median)"
echo "times include process start; /bin/true, timed the same way as iolens, shows that floor"

# Warm-up: binaries, libraries and the file's inode in cache for everyone.
for name in iolens iolens_map true; do time_bare "$name"; done
rm -f "$work"/*.us

# Alternate the tools; the peers take seconds a run, so they run fewer times.
for ((run = 1; run <= RUNS || run <= PEER_RUNS; run++)); do
	if ((run <= RUNS)); then
		time_bare iolens
		time_bare iolens_map
		time_bare true
	fi
	if ((run <= PEER_RUNS)); then
		time_with_rss vmtouch yes
		time_with_rss fincore yes
	fi
done
for ((run = 1; run <= 3; run++)); do
	time_with_rss iolens no
	time_with_rss iolens_map no
	time_with_rss true no
done

echo
printf '%-10s %11s %12s  %s\n' tool "median ms" "max RSS MiB" command
for name in "${names[@]}"; do
	printf '%-10s %11s %12s  %s\n' "$name" "$(ms "$(median_us "$work/$name.us")")" \
		"$(mib "$(max_kib "$work/$name.rss")")" "$(describe "$name")"
done
echo
echo "ratios, peer / iolens (above 1: iolens is faster or smaller):"
printf '%-20s %12s %12s\n' "" time "max RSS"
for peer in vmtouch fincore; do
	for own in iolens iolens_map; do
		printf '%-20s %12s %12s\n' "$peer/$own" \
			"$(ratio "$(median_us "$work/$peer.us")" "$(median_us "$work/$own.us")")" \
			"$(ratio "$(max_kib "$work/$peer.rss")" "$(max_kib "$work/$own.rss")")"
	done
done
echo
for name in "${names[@]}"; do
	printf 'all runs (ms) %-11s' "$name:"
	awk '{ printf " %.1f", $1 / 1e3 } END { print "" }' "$work/$name.us"
done

# Agreement, from the output of the last measured run of each tool.
# iolens: the data rows of its table (Name Size Pages Cached Percent [Map]); the name has no spaces here.
failed=0
check() { # LABEL ACTUAL EXPECTED
	if [[ $2 == "$3" ]]; then
		printf '%-42s %-12s OK\n' "$1" "$2"
	else
		printf '%-42s %-12s WRONG (expected %s)\n' "$1" "${2:-?}" "$3"
		failed=1
	fi
}
read -r _ _ iolens_pages iolens_cached _ < <(tail -n 1 "$work/iolens.out")
read -r _ _ map_pages map_cached _ map < <(tail -n 1 "$work/iolens_map.out")
read -r vmtouch_cached vmtouch_pages < <(awk '/Resident Pages:/ { split($3, v, "/"); print v[1], v[2] }' "$work/vmtouch.out")
read -r _ fincore_cached _ < <(tail -n 1 "$work/fincore.out")
echo
echo "agreement (0 pages cached, $size_pages pages):"
check "iolens pcstat: pages" "${iolens_pages:-}" "$size_pages"
check "iolens pcstat: cached" "${iolens_cached:-}" 0
check "iolens pcstat --map: pages" "${map_pages:-}" "$size_pages"
check "iolens pcstat --map: cached" "${map_cached:-}" 0
check "iolens pcstat --map: map has only '.'" "$([[ ${map:-} =~ ^\.+$ ]] && echo yes || echo "no: ${map:-}")" yes
check "vmtouch: Resident Pages X" "${vmtouch_cached:-}" 0
check "vmtouch: Resident Pages Y" "${vmtouch_pages:-}" "$size_pages"
check "fincore: PAGES (resident)" "${fincore_cached:-}" 0
exit "$failed"
