/* SPDX-License-Identifier: GPL-2.0-or-later */
/* profile.h: whether two bench results differ beyond their spread (--compare); the results: collect/bench_result.h. */
#ifndef IOLENS_BENCH_PROFILE_H
#define IOLENS_BENCH_PROFILE_H

#include "collect/bench_result.h"

#define BENCH_COMPARE_MARGIN_PERCENT 5.0 /* --compare's default noise margin */

/*
 * Whether b differs from a beyond noise: the ranges of their runs' bytes_per_s ([lowest,
 * highest] of each) do not overlap, and their medians (the points) lie further apart than
 * either range is wide and than margin_percent of a's median. -1 b is slower, +1 faster, 0 no
 * difference (within noise). *change is (b - a) / a of their medians, in percent (NaN when a is 0).
 */
int bench_case_compare(const struct bench_case *a, const struct bench_case *b, double margin_percent, double *change);

#endif
