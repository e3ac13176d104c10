#!/usr/bin/env bash
# cache_accuracy.sh: cachetop's hits, misses, dirties, evictions and refaults against the truth of every way a program reads or writes (tests/cli/cache_accuracy.py), as root with eBPF.
. "$(dirname "$0")/lib.sh"

can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where pages cannot be evicted"
[ -x "$BUILD/tests/helpers/cachepattern" ] || skip_all "cachepattern is not built (make check builds it)"
command -v fincore >/dev/null || skip_all "fincore is not installed (make deps)"
need_ebpf
pause_damon # the truths are fincore before and after: no pageout of our own in between
python3 "$(dirname "$0")/cache_accuracy.py" "$T"
