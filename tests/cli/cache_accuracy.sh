#!/usr/bin/env bash
# cache_accuracy.sh: cachetop's hits, misses, dirties, evictions and refaults against the truth of every way a program reads or writes (tests/cli/cache_accuracy.py), as root with eBPF, by each mechanism the kernel has (tracepoints, fentry, kprobes).
. "$(dirname "$0")/lib.sh"

can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where pages cannot be evicted"
[ -x "$BUILD/tests/helpers/cachepattern" ] || skip_all "cachepattern is not built (make check builds it)"
command -v fincore >/dev/null || skip_all "fincore is not installed (make test-deps)"
need_ebpf
pause_damon # the truths are fincore before and after: no pageout of our own in between

# Every mechanism this kernel can count with is held to the same truths (IOLENS_CACHE_MECHANISM
# forces one; cache_mechanism.sh holds the refusals to what the kernel has). One already forced
# is the only one run.
by_each_mechanism "$(dirname "$0")/cache_accuracy.py" "$T"
