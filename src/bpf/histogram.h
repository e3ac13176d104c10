/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * histogram.h: libvtrace's log-linear latency bucket (lib/vtrace/layout.h's vt_bucket), written for
 * eBPF too: no __builtin_clzll, which BPF has no instruction for.
 */
#ifndef IOLENS_BPF_HISTOGRAM_H
#define IOLENS_BPF_HISTOGRAM_H

/* Types: vmlinux.h in an eBPF program, <linux/types.h> in user space (included before this). */

/* VTRACE_HISTOGRAM_BUCKETS (include/vtrace.h): exact below 128 ns, then 64 buckets per power of two. */
#define LOG_LINEAR_BUCKETS 2304u

/*
 * The bucket of a value in ns, as vtrace_histogram_bucket gives it: with e the highest bit set
 * of (ns | 64), (e - 6) * 64 + (ns >> (e - 6)); the last bucket holds everything above. The
 * highest bit is found by halving, the same on every target.
 * tests/unit/test_vtrace.c checks that both agree.
 */
static inline __attribute__((always_inline)) unsigned log_linear_bucket(__u64 ns)
{
	__u64 v = ns | 64, bucket;
	unsigned e = 0;

	for (unsigned step = 32; step; step >>= 1) { /* six steps, unrolled by the compiler */
		if (v >> step) {
			e += step;
			v >>= step;
		}
	}
	bucket = ((__u64)(e - 6) << 6) + (ns >> (e - 6));
	return bucket < LOG_LINEAR_BUCKETS ? (unsigned)bucket : LOG_LINEAR_BUCKETS - 1;
}

#endif
