/* histogram.h: libvtrace's log-linear latency bucket (lib/vtrace/layout.h's vt_bucket), written for eBPF too: no __builtin_clzll, which BPF has no instruction for. */
#ifndef IOLENS_BPF_HISTOGRAM_H
#define IOLENS_BPF_HISTOGRAM_H

/* Types: vmlinux.h in an eBPF program, <linux/types.h> in user space (included before this). */

/* VTRACE_HISTOGRAM_BUCKETS (include/vtrace.h): exact below 128 ns, then 64 buckets per power of two. */
#define LOG_LINEAR_BUCKETS 2304u

/*
 * The bucket of a value in ns, as vtrace_histogram_bucket gives it: with e the highest bit set
 * of (ns | 64), (e - 6) * 64 + (ns >> (e - 6)); the last bucket holds everything above. The
 * highest bit is found by halving, in six steps, the same on every target.
 * tests/unit/test_vtrace.c checks that both agree.
 */
static inline __attribute__((always_inline)) unsigned log_linear_bucket(__u64 ns)
{
	__u64 v = ns | 64, bucket;
	unsigned e = 0;

	if (v >> 32) {
		e += 32;
		v >>= 32;
	}
	if (v >> 16) {
		e += 16;
		v >>= 16;
	}
	if (v >> 8) {
		e += 8;
		v >>= 8;
	}
	if (v >> 4) {
		e += 4;
		v >>= 4;
	}
	if (v >> 2) {
		e += 2;
		v >>= 2;
	}
	if (v >> 1)
		e += 1;
	bucket = ((__u64)(e - 6) << 6) + (ns >> (e - 6));
	return bucket < LOG_LINEAR_BUCKETS ? (unsigned)bucket : LOG_LINEAR_BUCKETS - 1;
}

#endif
