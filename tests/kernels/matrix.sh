#!/usr/bin/env bash
# matrix.sh: each eBPF feature held to an exact truth by every mechanism the kernel has, with small
# workloads: what make check-kernels runs in each guest (tests/kernels/matrix.py says what and how).
#
# MATRIX_ROWS: a file the Measure table's rows are added to (feature, mechanism, truth, result);
# MATRIX_REQUIRE: mechanisms that must count here (check.sh: fentry and kprobes, which 5.10, 6.1 and 6.12 have).
. "$(dirname "$0")/../cli/lib.sh"

can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where pages cannot be evicted"
[ -x "$BUILD/tests/helpers/cachepattern" ] || skip_all "cachepattern is not built (make check-kernels builds it)"
for tool in fincore bpftool dd; do
	command -v "$tool" >/dev/null || skip_all "$tool is not installed (make test-deps)"
done
why=$(ebpf_expected) || skip_all "$why"
pause_damon
IOLENS=$IOLENS BUILD=$BUILD python3 "$(dirname "$0")/matrix.py" "$T"
