/* SPDX-License-Identifier: MIT */
/*
 * quantile.h: the value at a quantile of counts in buckets, interpolated within its bucket: the one
 * function that gives every percentile of libvtrace's histograms and of biotop's (not public:
 * iolens links libvtrace.a).
 */
#ifndef VTRACE_QUANTILE_H
#define VTRACE_QUANTILE_H

#include <stdint.h>

/*
 * The value at quantile q (0 to 1) of count[0 .. buckets - 1], where bucket b holds the values
 * lower(b) to lower(b + 1) - 1 and the last lower(buckets - 1) to last_upper: the value of rank
 * r = ceil(q * total) (at least 1), taken as if the c values of its bucket were spread evenly
 * over it, the k-th of them at (k - 1/2) / c of its width. Always in the bucket of the value of
 * that rank: at most its width from it, and near it when many share the bucket (a bucket of one
 * gives its middle). 0 when every count is 0.
 */
uint64_t vt_quantile(const uint64_t *count, unsigned buckets, uint64_t (*lower)(unsigned bucket), uint64_t last_upper,
		     double q);

#endif
