/* SPDX-License-Identifier: GPL-2.0-or-later */
/* profile.c: two bench results' cases compared against the spread of their runs (--compare). */
#include "workload/profile.h"

#include <math.h>

int bench_case_compare(const struct bench_case *a, const struct bench_case *b, double margin_percent, double *change)
{
	double difference = fabs(b->bytes_per_s - a->bytes_per_s);

	*change = a->bytes_per_s > 0 ? (b->bytes_per_s - a->bytes_per_s) / a->bytes_per_s * 100 : NAN;
	/*
	 * A machine that drifts between two profiles moves whole ranges of runs a little: ranges that
	 * no longer overlap are not enough. The medians must also lie further apart than either
	 * range is wide, and than the margin.
	 */
	if (difference <= a->runs_max - a->runs_min || difference <= b->runs_max - b->runs_min ||
	    difference <= a->bytes_per_s * margin_percent / 100)
		return 0;
	if (b->runs_max < a->runs_min)
		return -1;
	if (b->runs_min > a->runs_max)
		return 1;
	return 0;
}
