#!/usr/bin/env bash
# cache_accuracy.sh: cachetop's hits, misses, dirties, evictions and refaults against the truth of every way a program reads or writes (tests/cli/cache_accuracy.py), as root with eBPF, by each mechanism the kernel has (tracepoints, fentry, kprobes).
. "$(dirname "$0")/lib.sh"

can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where pages cannot be evicted"
[ -x "$BUILD/tests/helpers/cachepattern" ] || skip_all "cachepattern is not built (make check builds it)"
command -v fincore >/dev/null || skip_all "fincore is not installed (make deps)"
need_ebpf
pause_damon # the truths are fincore before and after: no pageout of our own in between

# Every mechanism this kernel can count with is held to the same truths (IOLENS_CACHE_MECHANISM
# forces one; cache_mechanism.sh holds the refusals to what the kernel has). One already forced
# is the only one run.
mechanisms=()
for mechanism in ${IOLENS_CACHE_MECHANISM:-tracepoints fentry kprobes}; do
	if IOLENS_CACHE_MECHANISM=$mechanism "$IOLENS" cachestat --json 0.1 1 2>"$T/why" | grep -q '"mode":"ebpf"'; then
		mechanisms+=("$mechanism")
	else
		echo "# $mechanism: not here: $(cat "$T/why")"
	fi
done
[ ${#mechanisms[@]} -gt 0 ] || { not_ok "no mechanism counts here"; echo "1..$t_count"; exit 1; }
status=0
for mechanism in "${mechanisms[@]}"; do
	echo "# $mechanism"
	# Its checks, numbered on from the last mechanism's and marked with it; its plan left out.
	IOLENS_CACHE_MECHANISM=$mechanism python3 "$(dirname "$0")/cache_accuracy.py" "$T" >"$T/tap" || status=1
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ )?ok\ [0-9]+(\ -\ )?(.*)$ ]]; then
			t_count=$((t_count + 1))
			echo "${BASH_REMATCH[1]}ok $t_count - [$mechanism] ${BASH_REMATCH[3]}"
		elif [[ ! $line =~ ^1\.\.[0-9]+ ]]; then
			echo "$line"
		fi
	done <"$T/tap"
done
echo "1..$t_count"
exit $status
