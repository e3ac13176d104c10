#!/usr/bin/env bash
# cache_patterns.sh: cachetop's and cachestat's page-cache counts held to the truth of read and write patterns that fall between the simple cases of cache_accuracy.sh (tests/cli/cache_patterns.py), as root with eBPF, by each mechanism the kernel has.
. "$(dirname "$0")/lib.sh"

can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where pages cannot be evicted"
command -v fincore >/dev/null || skip_all "fincore is not installed (make test-deps)"
need_ebpf
pause_damon # the truths are fincore before and after: no pageout of our own in between

# By every mechanism this kernel counts with, as cache_accuracy.sh.
by_each_mechanism "$(dirname "$0")/cache_patterns.py" "$T"
