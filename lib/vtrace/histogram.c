/* SPDX-License-Identifier: MIT */
/* histogram.c: the log-linear latency buckets of libvtrace: exact below 128 ns, 64 per power of two above. */
#include "layout.h"
#include "quantile.h"

unsigned vtrace_histogram_bucket(uint64_t ns)
{
	return vt_bucket(ns);
}

uint64_t vtrace_histogram_lower(unsigned bucket)
{
	unsigned index, exponent, mantissa;

	if (bucket < (1u << VT_LINEAR_BITS))
		return bucket;
	if (bucket >= VTRACE_HISTOGRAM_BUCKETS)
		bucket = VTRACE_HISTOGRAM_BUCKETS - 1;
	index = bucket - (1u << VT_LINEAR_BITS);
	exponent = VT_LINEAR_BITS + index / (1u << VT_SUB_BITS);
	mantissa = index % (1u << VT_SUB_BITS);
	return ((uint64_t)(1u << VT_SUB_BITS) + mantissa) << (exponent - VT_SUB_BITS);
}

uint64_t vtrace_histogram_upper(unsigned bucket)
{
	unsigned exponent;

	if (bucket < (1u << VT_LINEAR_BITS))
		return bucket;
	if (bucket >= VTRACE_HISTOGRAM_BUCKETS)
		bucket = VTRACE_HISTOGRAM_BUCKETS - 1;
	exponent = VT_LINEAR_BITS + (bucket - (1u << VT_LINEAR_BITS)) / (1u << VT_SUB_BITS);
	return vtrace_histogram_lower(bucket) + ((uint64_t)1 << (exponent - VT_SUB_BITS)) - 1;
}

uint64_t vt_quantile(const uint64_t *count, unsigned buckets, uint64_t (*lower)(unsigned bucket), uint64_t last_upper,
		     double q)
{
	uint64_t total = 0, rank, seen = 0;

	for (unsigned b = 0; b < buckets; b++)
		total += count[b];
	if (!total)
		return 0;
	if (!(q > 0))
		q = 0;
	if (q > 1)
		q = 1;
	rank = (uint64_t)(q * (double)total);
	if ((double)rank < q * (double)total)
		rank++; /* the ceiling: the smallest value with at least q of them at or below it */
	if (rank < 1)
		rank = 1;
	for (unsigned b = 0; b < buckets; b++) {
		if (seen + count[b] >= rank) {
			uint64_t low = lower(b), high = b + 1 < buckets ? lower(b + 1) - 1 : last_upper;
			double within = ((double)(rank - seen) - 0.5) / (double)count[b] * ((double)(high - low) + 1);
			uint64_t offset = (uint64_t)within;

			return offset > high - low ? high : low + offset;
		}
		seen += count[b];
	}
	return 0;
}

uint64_t vtrace_histogram_quantile(const uint64_t *histogram, double q)
{
	return vt_quantile(histogram, VTRACE_HISTOGRAM_BUCKETS, vtrace_histogram_lower,
			   vtrace_histogram_upper(VTRACE_HISTOGRAM_BUCKETS - 1), q);
}
